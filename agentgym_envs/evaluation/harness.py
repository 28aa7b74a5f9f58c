"""Evaluating a policy: seeded tasks, each played ``trials`` times, several environments at
once, every finished episode recorded (optionally to JSONL, which ``resume`` continues), and a
summary of mean metrics and pass^k.

One path plays every evaluation, through the runner :func:`runner_for` picks
(:mod:`agentgym_envs.core.runners`): stepping the envs here (agent callables, batch LLM policies,
the reference policies with a fresh agent seeded by each episode), one thread per env (agents built
in agent frameworks, :mod:`agentgym_envs.agent_frameworks`, which drive their own episodes), or, with
``num_workers``, Ray workers (:class:`agentgym_envs.scale.RayRunner`), each building its own
policy from a picklable spec (:class:`ModelSpec`, :class:`ReferenceSpec`). Every runner hands
each finished episode, one :class:`~agentgym_envs.observe.store.EpisodeRow`, to
:class:`Finished`, which writes the results file and the run store from that one object, in
this process."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from tqdm import tqdm

from agentgym_envs.agent_frameworks.runner import FRAMEWORKS, FrameworkPolicy, resolve_factory
from agentgym_envs.agent_frameworks.session import Endpoint

from ..core.agent import Agent, BatchPolicy
from ..core.runners import (
    EpisodeSetup,
    Runner,
    SeededAgents,
    built,
    local_runner,
)
from ..observe import tracing
from ..observe.store import EpisodeRow, RunRecorder
from .agents import ExpertPolicy, RandomPolicy
from .hf_agent import TransformersAgent
from .openai_agent import OpenAIChatAgent
from .results import ResultsFile, summarize

# the reference agents, from an env and a seed (an evaluation builds one per episode, with its seed)
POLICIES: dict[str, Callable[[gym.Env, int], Agent]] = {
    "expert": lambda env, seed: ExpertPolicy(env),
    "random": lambda env, seed: RandomPolicy(env, seed),
}
# an OpenAI-compatible endpoint, a local Hugging Face model, the agent frameworks' built-in agents
MODEL_POLICIES = ("openai", "hf", *FRAMEWORKS)
NEEDS_A_SPEC = ("num_workers fans out a policy given as a picklable spec on an env id: a ModelSpec for a model, "
                "a ReferenceSpec for a reference policy")


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

    def build(self, concurrency: int) -> BatchPolicy | FrameworkPolicy:
        return model_policy(self.name, self.model, concurrency=concurrency, **self.options)


@dataclass(frozen=True)
class ReferenceSpec:
    """A reference policy of :data:`POLICIES` (``"expert"``, ``"random"``) by name, picklable:
    it plays with a fresh agent per episode, seeded by the episode
    (:class:`~agentgym_envs.core.runners.SeededAgents`), so that its episodes are the same
    wherever they are played (here, with any concurrency, or on Ray workers)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in POLICIES:
            raise ValueError(f"unknown policy {self.name!r}; choose from {list(POLICIES)} or pass an agent")

    def build(self, concurrency: int = 1) -> SeededAgents:
        return SeededAgents(POLICIES[self.name], self.name)


def evaluate(
    env: str | gym.Env,
    policy: str | Agent | BatchPolicy | ModelSpec | ReferenceSpec,
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
    """Summary metrics (:func:`~agentgym_envs.evaluation.results.summarize`) of the episodes
    :func:`episode_records` plays with these arguments."""
    records = episode_records(env, policy, episodes, split, seed, progress, trials=trials, concurrency=concurrency,
                              output=output, resume=resume, task_ids=task_ids, num_workers=num_workers,
                              recorder=recorder, **make_kwargs)
    return summarize(records, trials)


def episode_records(
    env: str | gym.Env,
    policy: str | Agent | BatchPolicy | ModelSpec | ReferenceSpec,
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
    env. ``policy`` is ``"expert"``, ``"random"`` (or its :class:`ReferenceSpec`: a fresh agent
    per episode, seeded by the episode), an agent callable (one env), or a batch policy with
    ``respond`` (the LLM agents), which answers the ``concurrency`` envs together, or a
    :class:`~agentgym_envs.agent_frameworks.FrameworkPolicy`, whose agents play ``concurrency`` episodes
    at once, one per thread, or a :class:`ModelSpec` (its agent is built here, and closed at the end). A batch
    policy's failed turn ends its episode as a recorded failure with the error.
    ``output`` names a JSONL file that receives each episode as it finishes; ``resume``
    continues such a file, skipping the episodes it holds. ``progress`` shows a progress bar.
    ``task_ids`` plays exactly these tasks (``reset(options={"task_id": ...})``, seed ``seed``
    + trial), each ``trials`` times, in place of ``episodes`` seeded draws: a benchmark's
    protocol (every task of a split, k times); results then key on the task id.
    ``num_workers`` fans the episodes out over that many Ray workers (a local Ray unless
    :func:`~agentgym_envs.scale.init_ray` connected one), each playing its share with its own
    policy built from ``policy`` (a :class:`ModelSpec`, a :class:`ReferenceSpec` or its name) and
    ``concurrency`` envs; the records, hence the summary, are those of a local run for a
    reference policy, and for a model that decodes greedily.
    Returns the requested episodes' records in order: ``task``, ``trial``, ``return``, ``metrics``,
    ``error``, ``outcome`` (the grader's ``success``, ``score`` and ``reason``; None for an episode
    an error ended) and, with ``keep_messages``, ``messages`` (the conversation as the env kept it).
    ``recorder`` records every episode played (messages, per-step rewards, span ids) in the
    rollout store (:mod:`agentgym_envs.observe.store`), from this process also when the episodes
    fan out; the evaluation is one run span when tracing is on (:mod:`agentgym_envs.observe.tracing`).
    """
    if isinstance(policy, str):
        policy = ReferenceSpec(policy)
    if num_workers is not None and not (isinstance(policy, ModelSpec | ReferenceSpec) and isinstance(env, str)):
        raise ValueError(NEEDS_A_SPEC)
    if episodes < 1 or trials < 1 or concurrency < 1:
        raise ValueError("episodes, trials and concurrency must be at least 1")
    spec = policy if isinstance(policy, ModelSpec | ReferenceSpec) else None
    if not isinstance(env, str) and concurrency > 1:
        raise ValueError("several environments need an env id, not an env instance")
    env_id = env if isinstance(env, str) else env.spec.id if env.spec else type(env.unwrapped).__name__
    tasks: list[Any] = list(task_ids) if task_ids is not None else [seed + task for task in range(episodes)]
    if not tasks:
        raise ValueError("task_ids is empty: nothing to evaluate")
    with contextlib.ExitStack() as stack:
        # a spec's policy is built here too: to describe it, and to play it unless it fans out
        played = stack.enter_context(built(spec, concurrency)) if spec is not None else policy
        concurrent = hasattr(played, "respond") or hasattr(played, "play_episode") or isinstance(played, SeededAgents)
        if not concurrent and concurrency > 1:
            raise ValueError("an agent callable plays one env: use concurrency 1, or pass a batch policy")
        config = {"env": env_id, "split": split, "make_kwargs": make_kwargs, "policy": describe(played)}
        if task_ids is not None:
            config["task_ids"] = tasks
        results = ResultsFile(output, config, resume, keep_messages=keep_messages)
        keys = [(task, trial) for task in tasks for trial in range(trials)]
        pending = [key for key in keys if not results.done(key)]
        span_attributes = {"agentgym.env.id": env_id, "agentgym.split": split, "agentgym.policy": config["policy"].get("name"),
                           "agentgym.episodes": len(pending), "agentgym.run.id": recorder.run_id if recorder else None}
        bar = functools.partial(tqdm, total=len(pending), desc=config["policy"].get("name", "agent"), disable=not progress)
        setup = EpisodeSetup(env, split, seed, concurrency, make_kwargs)
        with tracing.run_span("eval", span_attributes) as span:
            if recorder is not None:
                recorder.store.set_trace(recorder.run_id, *tracing.span_ids(span))
            if pending:  # the runner first: a local env that cannot be made fails before the bar shows
                chosen = runner_for(played if num_workers is None else spec, setup, len(pending), num_workers)
                with chosen as runner, bar() as progress_bar:
                    runner.run(pending, Finished(results, recorder, progress_bar))
    return [results.records[key] for key in keys]


def runner_for(policy: Agent | BatchPolicy | FrameworkPolicy | SeededAgents | ModelSpec | ReferenceSpec,
               setup: EpisodeSetup, episodes: int, num_workers: int | None = None) -> contextlib.AbstractContextManager[Runner]:
    """The runner that plays ``episodes`` episodes of ``policy`` on ``setup``'s envs, as a context
    manager (the envs it plays here are made on entry and closed on exit): with ``num_workers``,
    Ray workers, each building its own policy from ``policy``, a picklable spec
    (:class:`~agentgym_envs.scale.RayRunner`; ``setup.env`` an env id); else, in this process,
    one thread per env for a policy that drives its episodes (``play_episode``), or the envs
    stepped here (:func:`~agentgym_envs.core.runners.local_runner`)."""
    if num_workers is None:
        return local_runner(policy, setup, episodes)
    if not isinstance(policy, ModelSpec | ReferenceSpec) or not isinstance(setup.env, str):
        raise ValueError(NEEDS_A_SPEC)
    from agentgym_envs.scale import RayRunner  # Ray, imported when an evaluation fans out

    return contextlib.nullcontext(RayRunner(policy, setup, num_workers))


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


def describe(policy: Any) -> dict[str, Any]:
    """What identifies a policy in a results file: its name and the settings that change its play."""
    if isinstance(policy, str):
        return {"name": policy}
    settings = getattr(policy, "settings", None)
    return dict(settings) if settings else {"name": type(policy).__name__}
