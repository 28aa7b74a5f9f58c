"""Playing keyed episodes and handing each finished one, as an
:class:`~agentgym_envs.observe.store.EpisodeRow`, to one sink.

An episode's key is ``(task, trial)``: a task seed, or a task id played with the evaluation's
seed + trial (:func:`reset_arguments`). Two runners play here, on envs of this process:
:class:`SteppingRunner` steps the envs itself for an agent callable (one env), a batch policy
(``respond``: one answer for all envs at once) or :class:`SeededAgents` (a fresh agent per
episode, seeded by its key, so that an episode depends on its key alone); :class:`ThreadRunner`
gives each env a thread, for a policy that drives whole episodes (``play_episode``: a framework
agent). :func:`local_runner` picks one and makes its envs. :class:`EpisodeShard` is what one Ray
worker runs (:class:`agentgym_envs.scale.RayRunner`): a policy built from a picklable spec,
played here, its rows returned. :func:`agentgym_envs.evaluation.harness.runner_for` chooses
among the three.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from ..observe import tracing
from ..observe.store import EpisodeRow
from .agent import Agent, BatchPolicy, Turn

Key = tuple[int | str, int]  # (task seed or task id, trial)
AGENT_STREAM = 1  # sets an agent's seed apart from the env's reset seed
Sink = Callable[[EpisodeRow], None]  # where each finished episode goes


class Runner(Protocol):
    def run(self, keys: Sequence[Key], finished: Sink) -> None:
        """Play the episodes ``keys``, handing each finished one to ``finished`` (one call at a time)."""
        ...


class EpisodePlayer(Protocol):
    """A policy that drives a whole episode itself (a framework agent); its result has the
    env's ``reward``, ``metrics``, ``trace`` (the messages) and the ``error`` that ended it, if any."""

    def play_episode(self, env: gym.Env, seed: int | None, options: dict[str, Any] | None) -> Any: ...


class PolicySpec(Protocol):
    """A policy as a picklable description: each process that plays builds its own with
    ``build(concurrency)`` (the envs it answers at once)."""

    def build(self, concurrency: int) -> Any: ...


def reset_arguments(key: Key, seed: int) -> tuple[int, dict[str, Any] | None]:
    """``reset``'s seed and options for episode ``key``: a task seed, or a task id played with
    seed ``seed`` + trial."""
    task, trial = key
    if isinstance(task, str):  # a task id
        return seed + trial, {"task_id": task}
    return task, None


def agent_seed(key: Key, seed: int) -> int:
    """The seed of episode ``key``'s own agent, drawn from the episode's reset seed, its trial and
    its task id (when keyed by one): every task and trial gets its own, and it is not the reset
    seed itself, so an agent's random stream is not the env's."""
    reset_seed, _ = reset_arguments(key, seed)
    task, trial = key
    task_id = zlib.crc32(task.encode()) if isinstance(task, str) else 0
    return int(np.random.SeedSequence([reset_seed, trial, task_id, AGENT_STREAM]).generate_state(1)[0])


@dataclass(frozen=True)
class SeededAgents:
    """A fresh agent for each episode, ``factory(env, agent_seed(key, seed))``: an episode then
    depends on its key alone, whichever env, worker or concurrency plays it. ``name`` is what
    identifies it in a results file."""

    factory: Callable[[gym.Env, int], Agent]
    name: str | None = None

    @property
    def settings(self) -> dict[str, Any]:
        return {"name": self.name} if self.name else {}


@dataclass(frozen=True)
class EpisodeSetup:
    """The envs that play: ``env``, an env id made with ``split`` and ``make_kwargs``, up to
    ``concurrency`` copies, or one env instance; ``seed`` is the evaluation's (task ids reset
    with it + trial)."""

    env: str | gym.Env
    split: str = "test"
    seed: int = 0
    concurrency: int = 1
    make_kwargs: dict[str, Any] = field(default_factory=dict)

    @contextlib.contextmanager
    def made_envs(self, episodes: int) -> Iterator[list[gym.Env]]:
        """Enough envs for ``episodes`` (at most ``concurrency``), closed afterwards; or the one env instance given."""
        if not isinstance(self.env, str):
            yield [self.env]
            return
        envs: list[gym.Env] = []
        try:
            for _ in range(max(1, min(self.concurrency, episodes))):
                envs.append(gym.make(self.env, split=self.split, **self.make_kwargs))
            yield envs
        finally:
            for made in envs:
                made.close()


@contextlib.contextmanager
def built(spec: PolicySpec, concurrency: int) -> Iterator[Any]:
    """The policy ``spec`` builds for ``concurrency`` envs, closed afterwards (if it closes)."""
    policy = spec.build(concurrency)
    try:
        yield policy
    finally:
        getattr(policy, "close", lambda: None)()


@contextlib.contextmanager
def local_runner(policy: Agent | BatchPolicy | SeededAgents | EpisodePlayer, setup: EpisodeSetup,
                 episodes: int) -> Iterator[Runner]:
    """The runner that plays ``policy`` in this process on the envs of ``setup`` (made for
    ``episodes`` episodes first, so that an env that cannot be made fails before any plays)."""
    with setup.made_envs(episodes) as envs:
        if hasattr(policy, "play_episode"):
            yield ThreadRunner(policy, envs, setup.seed)
        else:
            yield SteppingRunner(policy, envs, setup.seed)


@dataclass(frozen=True)
class EpisodeShard:
    """Plays given keys with its own policy, built from ``spec``, on the envs of ``setup``
    (``concurrency`` of them), and returns their rows in the order given: one Ray worker's share."""

    spec: PolicySpec
    setup: EpisodeSetup

    def __call__(self, keys: Sequence[Key]) -> list[EpisodeRow]:
        rows: dict[Key, EpisodeRow] = {}
        with built(self.spec, self.setup.concurrency) as policy, local_runner(policy, self.setup, len(keys)) as runner:
            runner.run(keys, lambda row: rows.__setitem__((row.task, row.trial), row))
        return [rows[tuple(key)] for key in keys]


@dataclass
class _Slot:
    """One environment and the episode it is playing."""

    env: gym.Env
    agent: Agent | None = None
    key: Key | None = None
    reset_seed: int = 0
    observation: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    total: float = 0.0
    usage: Counter = field(default_factory=Counter)
    rewards: list[float] = field(default_factory=list)


class SteppingRunner:
    """Steps ``envs`` with an agent callable (one env), a batch policy (all envs answered at
    once; a failed turn ends its episode as a recorded failure with the error) or
    :class:`SeededAgents`; each env takes the next key when its episode ends."""

    def __init__(self, policy: Agent | BatchPolicy | SeededAgents, envs: Sequence[gym.Env], seed: int) -> None:
        self.policy, self.envs, self.seed = policy, list(envs), seed
        self.batch: BatchPolicy | None = policy if hasattr(policy, "respond") else None

    def run(self, keys: Sequence[Key], finished: Sink) -> None:
        pending = deque(keys)
        slots = [_Slot(env) for env in self.envs]
        for slot in slots:
            self._start(slot, pending)
        while running := [slot for slot in slots if slot.key is not None]:
            if self.batch is None:
                turns = [_act(slot) for slot in running]
            else:
                turns = _respond(self.batch, running)
            for slot, turn in zip(running, turns, strict=True):
                slot.usage.update(turn.usage)
                metrics = None
                if turn.error is not None:
                    metrics = {"success": 0.0, **slot.usage}
                else:
                    slot.observation, reward, terminated, truncated, slot.info = slot.env.step(turn.action)
                    slot.total += float(reward)
                    slot.rewards.append(float(reward))
                    if terminated or truncated:
                        metrics = {**slot.info.get("metrics", {}), **slot.usage}
                if metrics is not None:
                    finished(_stepped_row(slot, metrics, turn.error))
                    self._start(slot, pending)

    def _start(self, slot: _Slot, pending: deque) -> None:
        slot.key = pending.popleft() if pending else None
        if slot.key is None:
            return
        if isinstance(self.policy, SeededAgents):
            slot.agent = self.policy.factory(slot.env, agent_seed(slot.key, self.seed))
        elif self.batch is None:
            slot.agent = self.policy
        slot.reset_seed, options = reset_arguments(slot.key, self.seed)
        slot.observation, slot.info = slot.env.reset(seed=slot.reset_seed, options=options)
        slot.total, slot.usage, slot.rewards = 0.0, Counter(), []


def _respond(batch: BatchPolicy, running: list[_Slot]) -> list[Turn]:
    """The batch policy's turns for the ``running`` slots, in order: one batch per tool set (each conversation is
    answered with its env's tools now; a team's are the ticket holder's), each LLM span under its episode's."""
    groups: dict[str, tuple[list[dict[str, Any]], list[int]]] = {}
    for index, slot in enumerate(running):
        tools = tool_schemas(slot.env)
        groups.setdefault(json.dumps(tools, sort_keys=True), (tools, []))[1].append(index)
    turns: dict[int, Turn] = {}
    for tools, indices in groups.values():
        with tracing.conversations([running[i].env for i in indices]):
            answered = batch.respond([running[i].info["messages"] for i in indices], tools)
        turns.update(zip(indices, answered, strict=True))
    return [turns[index] for index in range(len(running))]


def tool_schemas(env: gym.Env) -> list[dict[str, Any]]:
    """The tools a language model may call in ``env`` now (OpenAI function-calling schemas): a tool-use env's, or
    a team adapter's for the ticket holder."""
    schemas = getattr(env.unwrapped, "tool_schemas", None)
    if not isinstance(schemas, list):
        raise TypeError(f"expected an AgentGym tool-use environment, got {type(env.unwrapped).__name__}")
    return schemas


def episode_tool_schemas(env: gym.Env) -> list[dict[str, Any]]:
    """The tools ``env`` offers for a whole episode, for an integration that gives a model one tool list per episode
    (TRL's tool methods, verl's and SkyRL's prompts, an OpenEnv session). ``ValueError`` for an env whose tools
    change within an episode (``tools_follow_holder``: the support team's single-agent adapter, whose tools are the
    ticket holder's): ``agentgym eval`` and the suite's runners play it, asking for the tools every turn."""
    if getattr(env.unwrapped, "tools_follow_holder", False):
        raise ValueError(f"{type(env.unwrapped).__name__}'s tools change within an episode (they are the ticket "
                         "holder's), so it cannot be given one tool list per episode: play it with `agentgym eval`, "
                         "whose runners ask for the tools every turn")
    return tool_schemas(env)


def _act(slot: _Slot) -> Turn:
    """The agent's action, its LLM calls (if any) under the episode's span."""
    with tracing.within_episode(slot.env):
        return Turn(slot.agent(slot.observation, slot.info))


def _stepped_row(slot: _Slot, metrics: dict[str, float], error: str | None) -> EpisodeRow:
    """The episode ``slot`` just finished (an ``error`` ended it early, or the env did)."""
    task, trial = slot.key
    base, info = slot.env.unwrapped, slot.info
    trace_id, span_id = tracing.episode_span_ids(slot.env)
    return EpisodeRow(task, trial, slot.total, metrics, info.get("messages", []), list(slot.rewards),
                      split=getattr(base, "split", None), seed=slot.reset_seed, task_id=info.get("task_id"),
                      outcome_reason=(info.get("outcome") or {}).get("reason"), error=error,
                      tools=getattr(base, "tool_schemas", None), trace_id=trace_id, span_id=span_id,
                      outcome=info.get("outcome") if error is None else None,
                      unit_id=info.get("unit_id", info.get("task_id")))


class ThreadRunner:
    """Plays with a policy that drives whole episodes (``play_episode``: a framework agent),
    one thread per env, each taking the next key when its episode ends."""

    def __init__(self, policy: EpisodePlayer, envs: Sequence[gym.Env], seed: int) -> None:
        self.policy, self.envs, self.seed = policy, list(envs), seed

    def run(self, keys: Sequence[Key], finished: Sink) -> None:
        pending, lock = deque(keys), threading.Lock()

        def play_on(env: gym.Env) -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    key = pending.popleft()
                reset_seed, options = reset_arguments(key, self.seed)
                episode = self.policy.play_episode(env, reset_seed, options)
                base = env.unwrapped
                trace_id, span_id = tracing.episode_span_ids(env)
                row = EpisodeRow(key[0], key[1], episode.reward, episode.metrics, episode.trace,
                                 split=getattr(base, "split", None), seed=reset_seed,
                                 task_id=(options or {}).get("task_id"), error=episode.error,
                                 tools=getattr(base, "tool_schemas", None), trace_id=trace_id, span_id=span_id)
                with lock:
                    finished(row)

        here = contextvars.copy_context()  # the run's span, current here: each thread's episodes are its children
        with ThreadPoolExecutor(len(self.envs), thread_name_prefix="episode") as pool:
            list(pool.map(lambda env: here.copy().run(play_on, env), self.envs))
