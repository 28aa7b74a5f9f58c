"""Evaluating a policy: seeded tasks, each played ``trials`` times, several environments at
once, every finished episode recorded (optionally to JSONL, which ``resume`` continues), and a
summary of mean metrics and pass^k. With ``num_workers``, the episodes fan out over Ray workers
(:mod:`agentgym_envs.scale`), each building its own language-model agent from a :class:`ModelSpec`.
Agents built in agent frameworks (:mod:`agentgym_envs.frameworks`) drive their own episodes and
are evaluated the same way. Each finished episode is one :class:`~agentgym_envs.observe.store.EpisodeRow`,
written to the results file and the run store from that one object (:class:`Finished`)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from tqdm import tqdm

from agentgym_envs.frameworks.runner import FRAMEWORKS, FrameworkPolicy, resolve_factory
from agentgym_envs.frameworks.session import Endpoint

from ..core.agent import Agent, BatchPolicy, Turn, tool_env
from ..observe import tracing
from ..observe.store import EpisodeRow, RunRecorder
from .agents import ExpertPolicy, RandomPolicy
from .hf_agent import TransformersAgent
from .openai_agent import OpenAIChatAgent
from .results import Key, ResultsFile, summarize

POLICIES: dict[str, Callable[[gym.Env, int], Agent]] = {
    "expert": lambda env, seed: ExpertPolicy(env),
    "random": lambda env, seed: RandomPolicy(env, seed),
}
# an OpenAI-compatible endpoint, a local Hugging Face model, the agent frameworks' built-in agents
MODEL_POLICIES = ("openai", "hf", *FRAMEWORKS)


def is_model_policy(name: str) -> bool:
    """Whether policy ``name`` is a language model: one of :data:`MODEL_POLICIES`, or a
    framework agent's ``module:factory`` spec."""
    return name in MODEL_POLICIES or ":" in name


def model_policy(name: str, model: str | None, *, base_url: str | None = None, api_key: str | None = None,
                 device: str = "auto", concurrency: int = 1, timeout: float = 60.0, max_retries: int = 3,
                 temperature: float | None = None, max_tokens: int = 256) -> BatchPolicy | FrameworkPolicy:
    """The agent for policy ``name`` of :data:`MODEL_POLICIES` or a ``module:factory`` spec
    (endpoint settings apply to ``openai`` and the framework agents, ``device`` to ``hf``;
    ``temperature`` None: the server's default, greedy for ``hf``)."""
    if name in FRAMEWORKS or ":" in name:
        endpoint = Endpoint(model, base_url, api_key, temperature, max_tokens, timeout, max_retries) if model else None
        if endpoint is None and name in FRAMEWORKS:
            raise ValueError(f"--policy {name} needs --model (a name the endpoint serves)")
        resolve_factory(name)  # a spec that does not load fails here, before any episode
        return FrameworkPolicy(name, endpoint)
    if name == "openai":
        return OpenAIChatAgent(model, base_url, api_key, concurrency=concurrency, timeout=timeout,
                               max_retries=max_retries, temperature=temperature, max_tokens=max_tokens)
    if name != "hf":
        raise ValueError(f"unknown model policy {name!r}; choose from {list(MODEL_POLICIES)}")
    if not model:
        raise ValueError("--policy hf needs --model PATH (a local model directory or a hub id)")
    return TransformersAgent(model, device=device, max_new_tokens=max_tokens, temperature=temperature or 0.0)


@dataclass(frozen=True)
class ModelSpec:
    """:func:`model_policy`'s arguments (``options``: its keywords but ``concurrency``), picklable:
    each Ray worker builds its own agent from them, with its own concurrency."""

    name: str
    model: str | None
    options: dict[str, Any] = field(default_factory=dict)

    def build(self, concurrency: int) -> BatchPolicy:
        return model_policy(self.name, self.model, concurrency=concurrency, **self.options)


@dataclass(frozen=True)
class ShardEvaluation:
    """Plays given ``(task, trial)`` episodes with its own agent and ``concurrency`` envs, and
    returns their records in the order given: one Ray worker's share of a fanned-out evaluation."""

    env_id: str
    spec: ModelSpec
    split: str
    seed: int
    concurrency: int
    make_kwargs: dict[str, Any]
    recorder: RunRecorder | None = None  # the worker records the episodes it plays here

    def __call__(self, keys: Sequence[Key]) -> list[dict[str, Any]]:
        policy = self.spec.build(self.concurrency)
        results = ResultsFile(None, {})
        try:
            with _made_envs(self.env_id, self.split, self.make_kwargs, min(self.concurrency, len(keys))) as envs:
                _play_keys(envs, policy, keys, self.seed, Finished(results, self.recorder))
        finally:
            getattr(policy, "close", lambda: None)()
        return [results.records[tuple(key)] for key in keys]


@dataclass
class _Slot:
    """One environment and the episode it is playing."""

    env: gym.Env
    agent: Agent | None
    key: Key | None = None
    observation: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    total: float = 0.0
    usage: Counter = field(default_factory=Counter)
    seed: int = 0
    rewards: list[float] = field(default_factory=list)


def evaluate(
    env: str | gym.Env,
    policy: str | Agent | BatchPolicy | ModelSpec,
    episodes: int = 100,
    split: str = "test",
    seed: int = 0,
    progress: bool = False,
    *,
    trials: int = 1,
    concurrency: int = 1,
    output: str | None = None,
    resume: bool = False,
    task_ids: Sequence[str] | None = None,
    num_workers: int | None = None,
    recorder: RunRecorder | None = None,
    **make_kwargs: Any,
) -> dict[str, float]:
    """Summary metrics (:func:`~agentgym_envs.policies.results.summarize`) of the episodes
    :func:`episode_records` plays with these arguments."""
    records = episode_records(env, policy, episodes, split, seed, progress, trials=trials, concurrency=concurrency,
                              output=output, resume=resume, task_ids=task_ids, num_workers=num_workers,
                              recorder=recorder, **make_kwargs)
    return summarize(records, trials)


def episode_records(
    env: str | gym.Env,
    policy: str | Agent | BatchPolicy | ModelSpec,
    episodes: int = 100,
    split: str = "test",
    seed: int = 0,
    progress: bool = False,
    *,
    trials: int = 1,
    concurrency: int = 1,
    output: str | None = None,
    resume: bool = False,
    task_ids: Sequence[str] | None = None,
    num_workers: int | None = None,
    keep_messages: bool = False,
    recorder: RunRecorder | None = None,
    **make_kwargs: Any,
) -> list[dict[str, Any]]:
    """Play ``policy`` on tasks seeded ``seed .. seed+episodes-1``, each ``trials`` times; one record per episode.

    ``env`` is an env id (made with ``split`` and ``make_kwargs``, ``concurrency`` copies) or one
    env. ``policy`` is ``"expert"``, ``"random"``, an agent callable (one env), or a batch policy
    with ``respond`` (the LLM agents), which answers the ``concurrency`` envs together, or a
    :class:`~agentgym_envs.frameworks.FrameworkPolicy`, whose agents play ``concurrency`` episodes
    at once, one per thread, or a :class:`ModelSpec` (its agent is built here, and closed at the end). A batch
    policy's failed turn ends its episode as a recorded failure with the error.
    ``output`` names a JSONL file that receives each episode as it finishes; ``resume``
    continues such a file, skipping the episodes it holds. ``progress`` shows a progress bar.
    ``task_ids`` plays exactly these tasks (``reset(options={"task_id": ...})``, seed ``seed``
    + trial), each ``trials`` times, in place of ``episodes`` seeded draws: a benchmark's
    protocol (every task of a split, k times); results then key on the task id.
    ``num_workers`` fans the episodes out over that many Ray workers (a local Ray unless
    :func:`~agentgym_envs.scale.init_ray` connected one), each playing its share with its own
    agent built from ``policy`` (a :class:`ModelSpec`) and ``concurrency`` envs; the records,
    hence the summary, are those of a local run when the model decodes greedily.
    Returns the requested episodes' records in order: ``task``, ``trial``, ``return``, ``metrics``,
    ``error``, ``outcome`` (the grader's ``success``, ``score`` and ``reason``; None for an episode
    an error ended) and, with ``keep_messages``, ``messages`` (the conversation as the env kept it).
    ``recorder`` records every episode played (messages, per-step rewards, span ids) in the
    rollout store (:mod:`agentgym_envs.observe.store`); the evaluation is one run span when
    tracing is on (:mod:`agentgym_envs.observe.tracing`).
    """
    if num_workers is not None and not (isinstance(policy, ModelSpec) and isinstance(env, str)):
        raise ValueError("num_workers fans out a ModelSpec on an env id; reference policies fan out with "
                         "agentgym_envs.scale.SeededEpisodes")
    spec = policy if isinstance(policy, ModelSpec) else None
    if spec is not None:
        policy = spec.build(concurrency)
    if episodes < 1 or trials < 1 or concurrency < 1:
        raise ValueError("episodes, trials and concurrency must be at least 1")
    env_id = env if isinstance(env, str) else env.spec.id if env.spec else type(env.unwrapped).__name__
    batch = hasattr(policy, "respond") or hasattr(policy, "play_episode")
    if not isinstance(policy, str) and not batch and concurrency > 1:
        raise ValueError("an agent callable plays one env: use concurrency 1, or pass a batch policy")
    if not isinstance(env, str) and concurrency > 1:
        raise ValueError("several environments need an env id, not an env instance")
    if isinstance(policy, str) and policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {list(POLICIES)} or pass an agent")
    config = {"env": env_id, "split": split, "make_kwargs": make_kwargs, "policy": describe(policy)}
    tasks: list[Any] = list(task_ids) if task_ids is not None else [seed + task for task in range(episodes)]
    if not tasks:
        raise ValueError("task_ids is empty: nothing to evaluate")
    if task_ids is not None:
        config["task_ids"] = tasks
    results = ResultsFile(output, config, resume, keep_messages=keep_messages)
    keys = [(task, trial) for task in tasks for trial in range(trials)]
    pending = [key for key in keys if not results.done(key)]
    span_attributes = {"agentgym.env.id": env_id, "agentgym.split": split, "agentgym.policy": config["policy"].get("name"),
                       "agentgym.episodes": len(pending), "agentgym.run.id": recorder.run_id if recorder else None}
    try:
        bar = functools.partial(tqdm, total=len(pending), desc=config["policy"].get("name", "agent"), disable=not progress)
        with tracing.run_span("eval", span_attributes) as span:
            if recorder is not None:
                recorder.store.set_trace(recorder.run_id, *tracing.span_ids(span))
            if pending and num_workers is None:  # the envs first: an env that cannot be made fails before the bar shows
                with _made_envs(env, split, make_kwargs, min(concurrency, len(pending))) as envs, bar() as progress_bar:
                    _play_keys(envs, policy, pending, seed, Finished(results, recorder, progress_bar))
            elif pending:  # the workers build their own envs and agents, and record in the run store
                with bar() as progress_bar:
                    _fan_out(ShardEvaluation(env_id, spec, split, seed, concurrency, make_kwargs, recorder), pending,
                             num_workers, results, progress_bar)
    finally:
        if spec is not None:  # the agent built here from the spec
            getattr(policy, "close", lambda: None)()
    return [results.records[key] for key in keys]


@contextlib.contextmanager
def _made_envs(env: str | gym.Env, split: str, make_kwargs: dict[str, Any], count: int) -> Iterator[list[gym.Env]]:
    """``count`` envs made from an env id (closed afterwards), or the one env instance given."""
    if not isinstance(env, str):
        yield [env]
        return
    envs: list[gym.Env] = []
    try:
        for _ in range(count):
            envs.append(gym.make(env, split=split, **make_kwargs))
        yield envs
    finally:
        for made in envs:
            made.close()


class Finished:
    """Where a finished episode goes: one :class:`~agentgym_envs.observe.store.EpisodeRow`, written
    to the results file (its :meth:`~agentgym_envs.observe.store.EpisodeRow.result` line) and to
    the run store (the row itself, when a ``recorder`` records the run), then counted on the bar."""

    def __init__(self, results: ResultsFile, recorder: RunRecorder | None = None, bar: tqdm | None = None) -> None:
        self.results, self.recorder, self.bar = results, recorder, bar
        self.count, self.successes = 0, 0.0

    def __call__(self, row: EpisodeRow) -> None:
        self.results.add(row.result(self.results.keep_messages))
        if self.recorder is not None:
            self.recorder.episode(row)
        self.count, self.successes = self.count + 1, self.successes + row.metrics.get("success", 0.0)
        if self.bar is not None:
            self.bar.update()
            self.bar.set_postfix(success=f"{self.successes / self.count:.3f}")


def _play_keys(envs: list[gym.Env], policy: str | Agent | BatchPolicy, keys: Sequence[Key], seed: int,
               finished: Finished) -> None:
    """Play ``keys`` here on ``envs``, handing each finished episode to ``finished``."""
    if hasattr(policy, "play_episode"):
        _play_episodes(envs, policy, keys, seed, finished)
        return
    batch = hasattr(policy, "respond")
    agents = [POLICIES[policy](e, seed + i) if isinstance(policy, str) else None if batch else policy for i, e in enumerate(envs)]
    _play(policy if batch else None, [_Slot(e, a, seed=seed) for e, a in zip(envs, agents)], deque(keys), finished)


def _play_episodes(envs: list[gym.Env], policy: FrameworkPolicy, keys: Sequence[Key], seed: int,
                   finished: Finished) -> None:
    """Play ``keys`` with a policy that drives whole episodes (a framework agent), one thread per env."""
    pending, lock = deque(keys), threading.Lock()

    def play_on(env: gym.Env) -> None:
        while True:
            with lock:
                if not pending:
                    return
                key = pending.popleft()
            reset_seed, options = reset_arguments(key, seed)
            episode = policy.play_episode(env, reset_seed, options)
            base = env.unwrapped
            trace_id, span_id = tracing.episode_span_ids(env)
            row = EpisodeRow(key[0], key[1], episode.reward, episode.metrics, episode.trace,
                             split=getattr(base, "split", None), seed=reset_seed, task_id=(options or {}).get("task_id"),
                             error=episode.error, tools=getattr(base, "tool_schemas", None), trace_id=trace_id,
                             span_id=span_id)
            with lock:
                finished(row)

    here = contextvars.copy_context()  # the run's span, current here: each thread's episodes are its children
    with ThreadPoolExecutor(len(envs), thread_name_prefix="episode") as pool:
        list(pool.map(lambda env: here.copy().run(play_on, env), envs))


def _fan_out(shard: ShardEvaluation, keys: list[Key], num_workers: int | None, results: ResultsFile, bar: tqdm) -> None:
    """Play ``keys`` on Ray workers (each records its episodes in the run store), writing each
    shard's results to ``results`` as the shard returns."""
    from agentgym_envs.scale import fan_out  # Ray, imported when an evaluation fans out

    def record(records: list[dict[str, Any]]) -> None:
        for entry in records:
            results.add(entry)
        bar.update(len(records))

    fan_out(shard, keys, num_workers, on_records=record)


def _play(batch_policy: BatchPolicy | None, slots: list[_Slot], pending: deque, finished: Finished) -> None:
    """Run every pending episode, each slot taking the next task when its episode ends."""
    for slot in slots:
        _start(slot, pending)
    while running := [slot for slot in slots if slot.key is not None]:
        if batch_policy is None:
            turns = [_act(slot) for slot in running]
        else:
            with tracing.conversations([slot.env for slot in running]):  # each LLM span under its episode's
                turns = batch_policy.respond([slot.info["messages"] for slot in running], tool_env(running[0].env).tool_schemas)
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
                finished(_episode_row(slot, metrics, turn.error))
                _start(slot, pending)


def _act(slot: _Slot) -> Turn:
    """The agent's action, its LLM calls (if any) under the episode's span."""
    with tracing.within_episode(slot.env):
        return Turn(slot.agent(slot.observation, slot.info))


def _episode_row(slot: _Slot, metrics: dict[str, float], error: str | None) -> EpisodeRow:
    """The episode ``slot`` just finished (an ``error`` ended it early, or the env did)."""
    task, trial = slot.key
    base, info = slot.env.unwrapped, slot.info
    outcome = info.get("outcome") if error is None else None
    trace_id, span_id = tracing.episode_span_ids(slot.env)
    return EpisodeRow(task, trial, slot.total, metrics, info.get("messages", []), list(slot.rewards),
                      split=getattr(base, "split", None), seed=slot.seed + trial if isinstance(task, str) else task,
                      task_id=info.get("task_id"), outcome_reason=(info.get("outcome") or {}).get("reason"),
                      error=error, tools=getattr(base, "tool_schemas", None), trace_id=trace_id, span_id=span_id,
                      outcome=outcome)


def _start(slot: _Slot, pending: deque) -> None:
    slot.key = pending.popleft() if pending else None
    if slot.key is not None:
        reset_seed, options = reset_arguments(slot.key, slot.seed)
        slot.observation, slot.info = slot.env.reset(seed=reset_seed, options=options)
        slot.total, slot.usage, slot.rewards = 0.0, Counter(), []


def reset_arguments(key: Key, seed: int) -> tuple[int, dict[str, Any] | None]:
    """``reset``'s seed and options for episode ``key``: a task seed, or a task id played with
    seed ``seed`` + trial."""
    task, trial = key
    if isinstance(task, str):  # a task id
        return seed + trial, {"task_id": task}
    return task, None


def describe(policy: Any) -> dict[str, Any]:
    """What identifies a policy in a results file: its name and the settings that change its play."""
    if isinstance(policy, str):
        return {"name": policy}
    settings = getattr(policy, "settings", None)
    return dict(settings) if settings else {"name": type(policy).__name__}
