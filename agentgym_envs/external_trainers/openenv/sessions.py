"""One served session: an agentgym env in text mode behind OpenEnv's ``Environment`` interface.

Each session owns its own env instances (one per split, made on first use). Its resets and
steps run either on the server's event loop (``inline``: no thread hop, for envs whose step
never waits on anything outside the process) or on a worker thread of its own, so that a slow
step never blocks another session and a step that overruns ``step_timeout_s`` is answered with
an error instead of a hang; :func:`default_inline` chooses per env. Errors are
:class:`ServeError` subclasses carrying the HTTP status the app answers with.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from ...core.runners import episode_tool_schemas
from ...levels import family
from .models import AgentGymAction, AgentGymObservation, AgentGymState

INLINE_FAMILIES = frozenset({"math", "customer_support", "tau2_retail", "tau2_airline", "tau2_telecom"})
"""Env families whose steps are pure Python in this process (sub-millisecond), served inline by
default, every version and level: tau2's only with its rule-based user and no LLM judge."""


class ServeError(Exception):
    """An error the server answers with ``status`` and a ``code`` the client can test for."""

    status = 400
    code = "BAD_REQUEST"


class EpisodeNotStarted(ServeError):
    status, code = 409, "EPISODE_NOT_STARTED"


class EpisodeEnded(ServeError):
    status, code = 409, "EPISODE_ENDED"


class SessionBroken(ServeError):
    status, code = 409, "SESSION_BROKEN"


class SessionClosed(ServeError):
    status, code = 410, "SESSION_CLOSED"


class StepTimeout(ServeError):
    status, code = 504, "STEP_TIMEOUT"


class BadReset(ServeError):
    status, code = 400, "BAD_RESET"


def default_inline(env_id: str, make_kwargs: dict[str, Any]) -> bool:
    """Whether ``env_id`` made with ``make_kwargs`` is served inline by default: yes for the
    families of :data:`INLINE_FAMILIES` whose step never blocks (Math, CustomerSupport, tau2 with
    its rule-based user and no LLM judge); no for the rest: Coding (a sandboxed program per test
    run), tau2 with an LLM user or judge (a request to a model per turn), any other env."""
    try:
        name = family(env_id).name
    except ValueError:  # not an agentgym family's id
        return False
    if name not in INLINE_FAMILIES:
        return False
    return make_kwargs.get("user", "rule") != "llm" and make_kwargs.get("nl_judge_model") is None


@dataclass(frozen=True)
class ServeConfig:
    """What every session of one server shares: the env id, ``gym.make`` arguments, the
    default split and the per-step timeout (seconds; None: no timeout). ``inline``: run resets
    and steps on the server's event loop instead of the session's worker thread: no thread hop
    per step (faster for envs whose steps take well under a millisecond, like Math and
    CustomerSupport), but no step timeout, and a slow step holds up every session."""

    env_id: str
    make_kwargs: dict[str, Any] = field(default_factory=dict)
    split: str = "train"
    step_timeout_s: float | None = 30.0
    inline: bool = False


PLAIN_TYPES = frozenset({str, bool, int, float, type(None)})
"""Types :func:`jsonable` returns as they are, tested by exact type first (most of what a step
answers is these): cheaper than the ``isinstance`` chain, and the same answer."""


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON types (tool calls as ``{"name", "arguments"}``, numpy scalars as
    numbers, anything else as its string)."""
    kind = type(value)
    if kind in PLAIN_TYPES:
        return value
    if kind is dict:  # keys and plain values as they are, without a call each
        return {k if type(k) is str else str(k): v if type(v) in PLAIN_TYPES else jsonable(v)
                for k, v in value.items()}
    if kind is list:
        return [v if type(v) in PLAIN_TYPES else jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "name") and hasattr(value, "arguments"):
        return {"name": value.name, "arguments": jsonable(value.arguments)}
    if hasattr(value, "item"):
        return value.item()
    return json.loads(json.dumps(value, default=str))


INFO_KEYS = ("task_id", "turn", "tool_call", "valid", "correct", "error", "parse", "tokens_used")
"""The keys of the env's ``info`` an observation carries."""


def env_action(action: AgentGymAction) -> Any:
    """The text-mode action an :class:`AgentGymAction` stands for: the reply text as it is, or
    the structured call as one OpenAI tool call (the env parses both)."""
    if action.text is not None:
        return action.text
    assert action.tool_call is not None
    return {"type": "function", "function": {"name": action.tool_call.name, "arguments": action.tool_call.arguments}}


def payload_of(reward: float | None = None, done: bool = False, **fields: Any) -> dict[str, Any]:
    """An observation as OpenEnv's wire carries it (``{"observation", "reward", "done"}``, what
    OpenEnv's ``serialize_observation`` makes of an :class:`AgentGymObservation`), built from
    plain JSON values without a pydantic model: validating and dumping the whole conversation
    every step would cost more than the step."""
    observation = {"text": "", "messages": [], "tool_schemas": [], "info": {}, "metrics": {}, "outcome": None,
                   "terminated": False, "truncated": False, "metadata": {}}
    observation.update(fields)
    return {"observation": observation, "reward": reward, "done": done}


def observation_of(payload: dict[str, Any]) -> AgentGymObservation:
    """The :class:`AgentGymObservation` of a wire payload (not validated again: it is the env's own).
    Every field is given: pydantic's ``model_construct`` inspects a ``default_factory``'s signature
    for each default it fills in."""
    return AgentGymObservation.model_construct(**payload["observation"], reward=payload["reward"],
                                               done=payload["done"])


def metadata_of(config: ServeConfig) -> EnvironmentMetadata:
    """OpenEnv's ``/metadata`` of a served env."""
    return EnvironmentMetadata(name=config.env_id, version="0",
                               description=f"agentgym {config.env_id} in text mode, one env per session")


class AgentGymEnvironment(Environment[AgentGymAction, AgentGymObservation, AgentGymState]):
    """One session's env, as OpenEnv serves it. ``reset(seed, task_id, split)`` starts the task
    the same call starts in process; ``step`` runs one reply or tool call."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, config: ServeConfig) -> None:
        super().__init__()
        self.config = config
        self._envs: dict[str, gym.Env] = {}
        self._env: gym.Env | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentgym-session")
        self._episode: dict[str, Any] = {}
        self._steps, self._return = 0, 0.0
        self._ended = True
        self._started = False
        self._broken: str | None = None
        self._closed = False
        self.make(config.split)  # a bad env id or argument fails the session now, not its first reset

    # ------------------------------------------------------------------ env instances
    def make(self, split: str) -> gym.Env:
        if split not in self._envs:
            try:
                env = gym.make(self.config.env_id, split=split, action_mode="text", **self.config.make_kwargs)
            except (ValueError, KeyError) as exc:
                raise BadReset(f"cannot make {self.config.env_id} on split {split!r}: {exc}") from None
            try:
                episode_tool_schemas(env)  # a reset hands out one tool list per episode
            except ValueError as exc:
                env.close()
                raise BadReset(f"cannot serve {self.config.env_id}: {exc}") from None
            self._envs[split] = env
        return self._envs[split]

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosed("the session was closed (idle timeout or close); open a new one")
        if self._broken is not None:
            raise SessionBroken(self._broken)

    # ------------------------------------------------------------------ sync API (run inline or on the worker)
    def reset_payload(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
                      split: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Start the task ``seed`` or ``task_id`` names on ``split``; the opening as a wire payload."""
        self._check_open()
        if kwargs:
            raise BadReset(f"unknown reset arguments {sorted(kwargs)}: reset takes seed, task_id, split, episode_id")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise BadReset(f"seed must be a non-negative integer, got {seed!r}")
        if task_id is not None and not isinstance(task_id, str):
            raise BadReset(f"task_id must be a string, got {task_id!r}")
        if split is not None and not isinstance(split, str):
            raise BadReset(f"split must be a string, got {split!r}")
        env = self.make(split or self.config.split)
        options = {"task_id": task_id} if task_id is not None else None
        try:
            observation, info = env.reset(seed=seed, options=options)
        except (ValueError, KeyError) as exc:
            raise BadReset(str(exc.args[0]) if exc.args else str(exc)) from None
        self._env, self._ended, self._started = env, False, True
        self._episode = {"episode_id": episode_id, "task_id": info["task_id"], "split": split or self.config.split}
        self._steps, self._return = 0, 0.0
        return payload_of(text=observation, messages=info["messages"], tool_schemas=episode_tool_schemas(env),
                          info=self._info(info))

    def step_payload(self, action: AgentGymAction) -> dict[str, Any]:
        """One reply or tool call; the env's answer as a wire payload."""
        self._check_open()
        if not self._started or self._env is None:
            raise EpisodeNotStarted("no episode has started in this session: reset first (POST /step is stateless "
                                    "in OpenEnv; keep an episode over /ws or /sessions/{id})")
        if self._ended:
            raise EpisodeEnded("the episode has ended: reset to start another")
        observation, reward, terminated, truncated, info = self._env.step(env_action(action))
        done = bool(terminated or truncated)
        self._ended = done
        self._steps += 1
        self._return += float(reward)
        return payload_of(text=observation, messages=info["messages"], info=self._info(info),
                          metrics=jsonable(info.get("metrics", {})), outcome=jsonable(info.get("outcome")),
                          terminated=bool(terminated), truncated=bool(truncated), reward=float(reward), done=done)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> AgentGymObservation:
        """OpenEnv's ``Environment.reset``: :meth:`reset_payload` as an observation."""
        return observation_of(self.reset_payload(seed=seed, episode_id=episode_id, **kwargs))

    def step(self, action: AgentGymAction, timeout_s: float | None = None, **kwargs: Any) -> AgentGymObservation:
        """OpenEnv's ``Environment.step``: :meth:`step_payload` as an observation."""
        return observation_of(self.step_payload(action))

    @staticmethod
    def _info(info: dict[str, Any]) -> dict[str, Any]:
        answer = {}
        for key in INFO_KEYS:
            value = info.get(key)
            answer[key] = value if type(value) in PLAIN_TYPES else jsonable(value)
        return answer

    # ------------------------------------------------------------------ async API (what the server awaits)
    async def run(self, function: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
        """``function(*args, **kwargs)`` inline, or on the session's worker under the step timeout."""
        self._check_open()
        if self.config.inline:
            return function(*args, **kwargs)
        future = asyncio.get_running_loop().run_in_executor(self._worker, lambda: function(*args, **kwargs))
        timeout = self.config.step_timeout_s
        if timeout is None:
            return await future
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self._broken = (f"a call overran the step timeout ({timeout:g} s); the session's env is in an unknown "
                            f"state: close this session and open another")
            raise StepTimeout(f"the step took longer than {timeout:g} s and was abandoned") from None

    async def reset_wire(self, **arguments: Any) -> dict[str, Any]:
        """:meth:`reset_payload`, run as the session runs its calls."""
        return await self.run(self.reset_payload, **arguments)

    async def step_wire(self, action: AgentGymAction) -> dict[str, Any]:
        """:meth:`step_payload`, run as the session runs its calls."""
        return await self.run(self.step_payload, action)

    @property
    def closed(self) -> bool:
        """Whether the session's envs were closed (its session ended)."""
        return self._closed

    @property
    def state(self) -> AgentGymState:
        return AgentGymState(env_id=self.config.env_id, step_count=self._steps, episode_return=self._return,
                             **self._episode)

    def get_metadata(self) -> EnvironmentMetadata:
        return metadata_of(self.config)

    def close(self) -> None:
        """Close the envs: inline at once, else on the worker without waiting (a step that
        overran may still hold it)."""
        if self._closed:
            return
        self._closed = True
        envs = list(self._envs.values())

        def close_all() -> None:
            for env in envs:
                env.close()

        if self.config.inline:
            close_all()
        else:
            self._worker.submit(close_all)
        self._worker.shutdown(wait=False)
