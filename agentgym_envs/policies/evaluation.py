"""Evaluating an agent: mean episode metrics over seeded episodes."""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from .agents import Agent, ExpertPolicy, RandomPolicy

POLICIES: dict[str, Callable[[gym.Env, int], Agent]] = {
    "expert": lambda env, seed: ExpertPolicy(env),
    "random": lambda env, seed: RandomPolicy(env, seed),
}


def run_episode(env: gym.Env, agent: Agent, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[float, dict[str, float]]:
    """Play one episode; return its return and ``info["metrics"]`` (empty for an env without)."""
    observation, info = env.reset(seed=seed, options=options)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent(observation, info))
        total += float(reward)
        done = terminated or truncated
    return total, info.get("metrics", {})


def evaluate(
    env: str | gym.Env,
    policy: str | Agent,
    episodes: int = 100,
    split: str = "test",
    seed: int = 0,
    progress: bool = False,
    **make_kwargs: Any,
) -> dict[str, float]:
    """Mean metrics of ``policy`` over ``episodes`` episodes seeded ``seed, seed+1, ...``.

    ``env`` is an env id (made with ``split`` and ``make_kwargs``) or an env; ``policy`` is
    ``"expert"``, ``"random"`` or an agent callable.
    ``progress`` shows a progress bar. Returns the mean of every metric plus ``return`` and
    ``episodes``.
    """
    if isinstance(env, str):
        env = gym.make(env, split=split, **make_kwargs)
    if isinstance(policy, str):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose from {list(POLICIES)} or pass a callable")
        agent = POLICIES[policy](env, seed)
    else:
        agent = policy
    returns, rows = [], []
    for episode in tqdm(range(episodes), desc=f"{policy if isinstance(policy, str) else 'agent'}", disable=not progress):
        total, metrics = run_episode(env, agent, seed=seed + episode)
        returns.append(total)
        rows.append(metrics)
    summary = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
    summary["return"] = float(np.mean(returns))
    summary["episodes"] = float(episodes)
    return summary

