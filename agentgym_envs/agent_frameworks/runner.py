"""Playing an episode with an agent built in an agent framework, and evaluating such agents
like any policy (``agentgym eval ENV --policy langchain|openai-agents|strands|agno|module:factory``).

A *factory* ``factory(session) -> agent`` builds the framework's agent for one episode from
an :class:`~.session.EnvSession` (the env's instructions, task, tools and the endpoint);
:func:`run_agent` recognises the framework by the agent it returns and runs that framework's
own loop on the env.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import gymnasium as gym

from agentgym_envs import resolve_env_id

from .session import Endpoint, EnvSession, FrameworkEpisode

AgentFactory = Callable[[EnvSession], Any]

# policy name -> the module of agentgym_envs.agent_frameworks that plays that framework's agents
FRAMEWORKS = {"langchain": "langchain", "openai-agents": "openai_agents", "strands": "strands", "agno": "agno"}


def framework_module(name: str) -> ModuleType:
    """The module for framework ``name`` (a key of :data:`FRAMEWORKS`, also the name of its
    extra): its tools, the packages it ``REQUIRES``, its built-in ``default_agent``,
    ``owns(agent)`` and ``play(agent, session, turns)``."""
    return importlib.import_module(f"agentgym_envs.agent_frameworks.{FRAMEWORKS[name]}")


def resolve_factory(spec: str) -> AgentFactory:
    """A framework's built-in agent (``langchain``, ``openai-agents``, ``strands``, ``agno``) or a
    ``module:factory`` spec, imported."""
    if spec in FRAMEWORKS:
        module = framework_module(spec)
        missing = [name for name in module.REQUIRES if importlib.util.find_spec(name) is None]
        if missing:
            raise ValueError(f"the {spec} agent needs {', '.join(missing)}: pip install \"agentgym-envs[{spec}]\"")
        return module.default_agent
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"unknown agent {spec!r}: give one of {list(FRAMEWORKS)} or module:factory")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load the agent factory {spec!r}: {exc}") from None
    if not callable(factory):
        raise ValueError(f"{spec!r} is not callable: a factory takes an EnvSession and returns an agent")
    return factory


def converse(ask: Callable[[str], str], session: EnvSession) -> None:
    """Run a framework's loop, ``ask(message) -> its final text``, on the task until the
    episode ends. When the loop finishes with text while the episode goes on, that text is the
    agent's turn (the env judges it as text mode judges any model output, e.g. an invalid call)
    and the env's reply continues the same conversation; each such turn is an env step, so
    the env's turn limit ends the episode."""
    text = ask(session.task)
    while not session.ended:
        reply = session.say(text)
        if not session.ended:
            text = ask(reply)


def play_session(factory: AgentFactory, session: EnvSession) -> FrameworkEpisode:
    """Build the agent for ``session`` and play the episode with its framework's loop. A
    failure inside the loop (an endpoint that fails, a framework's own limit) ends the episode
    as a recorded error; a factory that fails, or returns no known framework's agent, raises."""
    agent = factory(session)
    module = next((framework_module(name) for name in FRAMEWORKS if framework_module(name).owns(agent)), None)
    if module is None:
        raise TypeError(f"the factory returned {type(agent).__name__}, not an agent of {list(FRAMEWORKS)}")
    try:
        module.play(agent, session, session.max_turns)
    except Exception as exc:  # the framework's, or its model's: the episode ends here
        return session.result(error=f"{type(exc).__name__}: {exc}")
    return session.result()


def run_agent(factory: AgentFactory | str, env: str | gym.Env, *, seed: int | None = None, task_id: str | None = None,
              split: str = "test", endpoint: Endpoint | None = None, **make_kwargs: Any) -> FrameworkEpisode:
    """Play one episode of ``env`` (a name or id, made in text mode with ``split`` and
    ``make_kwargs``, or a text-mode env) with the agent ``factory`` builds (or a name
    :func:`resolve_factory` takes); ``seed`` draws the task, ``task_id`` picks one.
    Returns its reward, success, metrics and the conversation the env saw."""
    factory = resolve_factory(factory) if isinstance(factory, str) else factory
    made = gym.make(resolve_env_id(env), split=split, action_mode="text", **make_kwargs) if isinstance(env, str) else None
    try:
        options = {"task_id": task_id} if task_id is not None else None
        return play_session(factory, EnvSession(made or env, seed, options, endpoint))
    finally:
        if made is not None:
            made.close()


@dataclass(frozen=True)
class FrameworkPolicy:
    """A framework agent as an evaluation policy: each episode gets a fresh agent from
    ``factory`` (named ``name``: a framework or a ``module:factory`` spec) on ``endpoint``."""

    name: str
    endpoint: Endpoint | None = None

    @property
    def settings(self) -> dict[str, Any]:
        endpoint = self.endpoint
        if endpoint is None:
            return {"name": self.name}
        chosen = {"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens}
        return {"name": self.name, "model": endpoint.model, "base_url": endpoint.base_url,
                **{key: value for key, value in chosen.items() if value is not None}}

    def play_episode(self, env: gym.Env, seed: int | None, options: dict[str, Any] | None) -> FrameworkEpisode:
        return play_session(resolve_factory(self.name), EnvSession(env, seed, options, self.endpoint))
