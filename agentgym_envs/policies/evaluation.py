"""Evaluating a policy: seeded tasks, each played ``trials`` times, several environments at
once, every finished episode recorded (optionally to JSONL, which ``resume`` continues), and a
summary of mean metrics and pass^k."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
from tqdm import tqdm

from .agents import Agent, BatchPolicy, ExpertPolicy, RandomPolicy, Turn, tool_env
from .hf_agent import TransformersAgent
from .openai_agent import OpenAIChatAgent
from .results import Key, ResultsFile, summarize

POLICIES: dict[str, Callable[[gym.Env, int], Agent]] = {
    "expert": lambda env, seed: ExpertPolicy(env),
    "random": lambda env, seed: RandomPolicy(env, seed),
}
MODEL_POLICIES = ("openai", "hf")  # an OpenAI-compatible endpoint, a local Hugging Face model


def model_policy(name: str, model: str | None, *, base_url: str | None = None, api_key: str | None = None,
                 device: str = "auto", concurrency: int = 1, timeout: float = 60.0, max_retries: int = 3,
                 temperature: float | None = None, max_tokens: int = 256) -> BatchPolicy:
    """The agent for policy ``name`` of :data:`MODEL_POLICIES` (endpoint settings apply to
    ``openai``, ``device`` to ``hf``; ``temperature`` None: the server's default, greedy for ``hf``)."""
    if name == "openai":
        return OpenAIChatAgent(model, base_url, api_key, concurrency=concurrency, timeout=timeout,
                               max_retries=max_retries, temperature=temperature, max_tokens=max_tokens)
    if name != "hf":
        raise ValueError(f"unknown model policy {name!r}; choose from {list(MODEL_POLICIES)}")
    if not model:
        raise ValueError("--policy hf needs --model PATH (a local model directory or a hub id)")
    return TransformersAgent(model, device=device, max_new_tokens=max_tokens, temperature=temperature or 0.0)


def run_episode(env: gym.Env, agent: Agent, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[float, dict[str, float]]:
    """Play one episode; return its return and ``info["metrics"]`` (empty for an env without)."""
    observation, info = env.reset(seed=seed, options=options)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent(observation, info))
        total += float(reward)
        done = terminated or truncated
    return total, info.get("metrics", {})


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


def evaluate(
    env: str | gym.Env,
    policy: str | Agent | BatchPolicy,
    episodes: int = 100,
    split: str = "test",
    seed: int = 0,
    progress: bool = False,
    *,
    trials: int = 1,
    concurrency: int = 1,
    output: str | None = None,
    resume: bool = False,
    **make_kwargs: Any,
) -> dict[str, float]:
    """Summary metrics of ``policy`` over tasks seeded ``seed .. seed+episodes-1``, each played ``trials`` times.

    ``env`` is an env id (made with ``split`` and ``make_kwargs``, ``concurrency`` copies) or one
    env. ``policy`` is ``"expert"``, ``"random"``, an agent callable (one env), or a batch policy
    with ``respond`` (the LLM agents), which answers the ``concurrency`` envs together. A batch
    policy's failed turn ends its episode as a recorded failure with the error.
    ``output`` names a JSONL file that receives each episode as it finishes; ``resume``
    continues such a file, skipping the episodes it holds. ``progress`` shows a progress bar.
    Returns :func:`~agentgym_envs.policies.results.summarize` of the requested episodes.
    """
    if episodes < 1 or trials < 1 or concurrency < 1:
        raise ValueError("episodes, trials and concurrency must be at least 1")
    env_id = env if isinstance(env, str) else env.spec.id if env.spec else type(env.unwrapped).__name__
    batch = hasattr(policy, "respond")
    if not isinstance(policy, str) and not batch and concurrency > 1:
        raise ValueError("an agent callable plays one env: use concurrency 1, or pass a batch policy")
    if not isinstance(env, str) and concurrency > 1:
        raise ValueError("several environments need an env id, not an env instance")
    if isinstance(policy, str) and policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {list(POLICIES)} or pass an agent")
    config = {"env": env_id, "split": split, "make_kwargs": make_kwargs, "policy": describe(policy)}
    store = ResultsFile(output, config, resume)
    keys = [(seed + task, trial) for task in range(episodes) for trial in range(trials)]
    pending = deque(key for key in keys if not store.done(key))
    if pending:
        envs = [gym.make(env, split=split, **make_kwargs) for _ in range(min(concurrency, len(pending)))] if isinstance(env, str) else [env]
        agents = [POLICIES[policy](e, seed + i) if isinstance(policy, str) else None if batch else policy for i, e in enumerate(envs)]
        label = config["policy"].get("name", "agent")
        with tqdm(total=len(pending), desc=label, disable=not progress) as bar:
            _play(policy if batch else None, [_Slot(e, a) for e, a in zip(envs, agents)], pending, store, bar)
    return summarize((store.records[key] for key in keys), trials)


def _play(batch_policy: BatchPolicy | None, slots: list[_Slot], pending: deque, store: ResultsFile, bar: tqdm) -> None:
    """Run every pending episode, each slot taking the next task when its episode ends."""
    finished, successes = 0, 0.0
    for slot in slots:
        _start(slot, pending)
    while running := [slot for slot in slots if slot.key is not None]:
        if batch_policy is None:
            turns = [Turn(slot.agent(slot.observation, slot.info)) for slot in running]
        else:
            turns = batch_policy.respond([slot.info["messages"] for slot in running], tool_env(running[0].env).tool_schemas)
        for slot, turn in zip(running, turns, strict=True):
            slot.usage.update(turn.usage)
            metrics = None
            if turn.error is not None:
                metrics = {"success": 0.0, **slot.usage}
            else:
                slot.observation, reward, terminated, truncated, slot.info = slot.env.step(turn.action)
                slot.total += float(reward)
                if terminated or truncated:
                    metrics = {**slot.info["metrics"], **slot.usage}
            if metrics is not None:
                store.add({"task": slot.key[0], "trial": slot.key[1], "return": slot.total, "metrics": metrics, "error": turn.error})
                finished, successes = finished + 1, successes + metrics["success"]
                bar.update()
                bar.set_postfix(success=f"{successes / finished:.3f}")
                _start(slot, pending)


def _start(slot: _Slot, pending: deque) -> None:
    slot.key = pending.popleft() if pending else None
    if slot.key is not None:
        slot.observation, slot.info = slot.env.reset(seed=slot.key[0])
        slot.total, slot.usage = 0.0, Counter()


def describe(policy: Any) -> dict[str, Any]:
    """What identifies a policy in a results file: its name and the settings that change its play."""
    if isinstance(policy, str):
        return {"name": policy}
    settings = getattr(policy, "settings", None)
    return dict(settings) if settings else {"name": type(policy).__name__}
