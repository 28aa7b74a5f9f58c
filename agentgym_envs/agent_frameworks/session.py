"""One episode of an agentgym env driven by an agent framework: the env's tools as plain calls
that step the env in text mode, and what the episode came to.

Each framework module (:mod:`.langchain`, :mod:`.openai_agents`, :mod:`.strands`, :mod:`.agno`) wraps
:meth:`EnvSession.call_tool` as that framework's tools; :func:`~.runner.run_agent` plays an
episode with them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_envs.core.agent import tool_env
from agentgym_envs.observe import tracing

ENDED = "The episode has ended: no further tool calls run."


class EpisodeEnded(Exception):
    """Raised by a framework tool whose call ended the episode, where the framework stops its
    loop on an exception (LangChain / LangGraph); carries the call's result text."""


@dataclass(frozen=True)
class Endpoint:
    """The chat model a built-in agent factory asks: ``model`` on an OpenAI-compatible
    ``base_url`` (``None``: the client's default, ``OPENAI_BASE_URL``); ``temperature`` and
    ``max_tokens`` None leave the server's defaults."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 60.0
    max_retries: int = 3


@dataclass
class FrameworkEpisode:
    """What a framework agent's episode came to: the env's return and metrics, whether it
    succeeded, the conversation the env saw (OpenAI chat messages, tool calls included) and
    the error that cut it short (the framework raised, e.g. its endpoint failed), if any."""

    reward: float
    success: bool
    metrics: dict[str, float]
    trace: list[dict[str, Any]]
    error: str | None = None
    tool_calls: int = 0  # the framework's tool calls that reached the env


@dataclass
class EnvSession:
    """An episode of ``env`` (text action mode), reset at construction with ``seed`` and
    ``options``. A framework agent factory receives it and reads :attr:`instructions` (the
    env's system message), :attr:`task` (its first user message), :attr:`tool_schemas` and
    :attr:`endpoint` (the model a built-in factory uses; None when none was given).

    :meth:`call_tool` steps the env with one tool call and returns the env's result text; it is
    safe to call from a framework's tool threads (one step at a time). Once the env terminates
    or truncates, :attr:`ended` is true and further calls return :data:`ENDED` without a step.
    """

    env: gym.Env
    seed: int | None = None
    options: dict[str, Any] | None = None
    endpoint: Endpoint | None = None
    total_reward: float = field(init=False, default=0.0)
    tool_calls: int = field(init=False, default=0)
    terminated: bool = field(init=False, default=False)
    truncated: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        base = tool_env(self.env)
        if base.action_mode != "text":
            raise ValueError(f"a framework agent plays in text mode: make the env with action_mode='text', "
                             f"not {base.action_mode!r}")
        self.tool_schemas: list[dict[str, Any]] = base.tool_schemas
        self.max_turns: int = base.max_turns
        _, self.info = self.env.reset(seed=self.seed, options=self.options)
        first = self.info["messages"]
        self.instructions: str = "\n\n".join(m["content"] for m in first if m["role"] == "system")
        self.task: str = next(m["content"] for m in first if m["role"] == "user")
        self._lock = threading.Lock()

    @property
    def ended(self) -> bool:
        return self.terminated or self.truncated

    def call_tool(self, name: str, arguments: dict[str, Any] | str) -> str:
        """Run tool ``name`` with ``arguments`` (a dict, or the JSON text a model wrote) as one
        env step; the env's result text (an ``Error: ...`` the env wrote for a call it rejects)."""
        with self._lock:
            if self.ended:
                return ENDED
            self.tool_calls += 1
            return self._step({"name": name, "arguments": arguments})

    def say(self, text: str) -> str:
        """Play an answer that holds no tool call (the framework's agent finished with text) as
        one env step, as the env's text mode judges any model output; the env's reply."""
        with self._lock:
            return ENDED if self.ended else self._step(text)

    def _step(self, action: Any) -> str:
        seen = len(self.info["messages"])
        _, reward, self.terminated, self.truncated, self.info = self.env.step(action)
        self.total_reward += float(reward)
        answer = [m["content"] for m in self.info["messages"][seen + 1:] if m.get("content")]  # after the agent's turn
        return "\n".join(answer)

    def model_call(self, model: str | None, start_ns: int, **details: Any) -> None:
        """Trace one model call the framework's hook reported (started at ``start_ns``, ns since
        the epoch) as a ``chat`` span of this episode: ``details`` are
        :func:`~agentgym_envs.observe.tracing.record_chat`'s (``end_ns``, else now; ``base_url``,
        ``options``, ``provider``, token counts, ``finish_reason``, ``error``). Nothing while
        tracing is off."""
        if tracing.enabled():
            tracing.record_chat(tracing.episode_context(self.env), model, start_ns, **details)

    def result(self, error: str | None = None) -> FrameworkEpisode:
        """The episode as it stands: an unfinished one (cut by ``error``) has no metrics but
        ``success`` 0."""
        metrics = dict(self.info.get("metrics", {})) if self.ended else {"success": 0.0}
        return FrameworkEpisode(self.total_reward, metrics.get("success", 0.0) >= 1.0, metrics,
                                list(self.info["messages"]), error, self.tool_calls)
