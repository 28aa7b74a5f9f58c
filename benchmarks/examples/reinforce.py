"""A user's own algorithm, as small as one gets: REINFORCE on a linear softmax policy, in numpy.

The policy reads the env's features observation (a vector) and scores the flat admissible
actions (:class:`~agentgym_envs.wrappers.actions.FlatDiscreteAction`, the layout the SB3
baselines act through); the action mask removes the calls that cannot be made now. Training
plays ``batch_episodes`` episodes, then moves the weights along the policy gradient with the
batch's normalised discounted returns as advantages. Everything the run needs comes from
:class:`~trainers.run.Run`: the training envs, the learning-curve points on the run's grid,
early stopping, the checkpoint path.

The module is the algorithm (``agentgym train ENV --algo benchmarks.examples.reinforce``):
``train``, ``load_policy``, ``Config`` (the ``--set`` names), ``CHECKPOINT_NAME``, and
``search_space()``, what ``python -m benchmarks.your_algorithm`` tunes."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_envs.wrappers.actions import FlatDiscreteAction
from trainers.run import Run, Trained, features_kwargs, make_env

CHECKPOINT_NAME = "policy.npz"
LAYOUT = "admissible"


@dataclass
class Config:
    """The hyper-parameters (``--set`` names)."""

    learning_rate: float = 0.05
    gamma: float = 0.99
    batch_episodes: int = 8
    curve_every: int = 2048  # env steps between learning-curve points when the run sets none
    curve_episodes: int = 20


def search_space() -> dict[str, Any]:
    """What the equal tuning searches (Ray Tune distributions over :class:`Config` fields)."""
    from ray import tune

    return {"learning_rate": tune.loguniform(1e-3, 0.5), "gamma": tune.choice([0.9, 0.95, 0.99, 1.0]),
            "batch_episodes": tune.choice([4, 8, 16, 32])}


@dataclass
class LinearPolicy:
    """Logits ``observation @ weights + bias`` over the flat actions, masked; greedy when evaluated."""

    env_id: str
    weights: np.ndarray
    bias: np.ndarray
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # the features observation's gym.make arguments included

    def make_env(self, split: str) -> gym.Env:
        return FlatDiscreteAction(make_env(self.env_id, split, self.env_kwargs), LAYOUT)

    def agent(self, env: gym.Env):
        def act(observation: np.ndarray, info: dict[str, Any]) -> int:
            admissible, logits = self.logits(observation, info["action_mask"])
            return int(admissible[np.argmax(logits)])
        return act

    def logits(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The admissible actions and their logits (the others' are never computed)."""
        admissible = np.flatnonzero(mask)
        return admissible, observation @ self.weights[:, admissible] + self.bias[admissible]

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The admissible actions and the softmax over them."""
        admissible, logits = self.logits(observation, mask)
        exp = np.exp(logits - logits.max())
        return admissible, exp / exp.sum()


def play(env: gym.Env, policy: LinearPolicy, rng: np.random.Generator, steps_left: int) -> list[tuple] | None:
    """One training episode sampled from the policy: (observation, mask, action, reward) a step;
    None when the budget ran out before it ended."""
    observation, info = env.reset(seed=int(rng.integers(2**31)))
    steps = []
    while len(steps) < steps_left:
        mask = np.asarray(info["action_mask"], dtype=bool)
        admissible, probabilities = policy.probabilities(observation, mask)
        action = int(admissible[rng.choice(len(admissible), p=probabilities)])
        next_observation, reward, terminated, truncated, info = env.step(action)
        steps.append((observation, mask, action, float(reward)))
        observation = next_observation
        if terminated or truncated:
            return steps
    return None


def update(policy: LinearPolicy, episodes: list[list[tuple]], config: Config) -> None:
    """One REINFORCE step: ascend the mean of ``advantage * grad log pi(action)`` over every step."""
    returns = []
    for episode in episodes:
        total, discounted = 0.0, []
        for *_, reward in reversed(episode):
            total = reward + config.gamma * total
            discounted.append(total)
        returns += reversed(discounted)
    advantages = np.array(returns)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    steps = [step for episode in episodes for step in episode]
    grad_weights, grad_bias = np.zeros_like(policy.weights), np.zeros_like(policy.bias)
    for (observation, mask, action, _), advantage in zip(steps, advantages):
        admissible, probabilities = policy.probabilities(observation, mask)
        direction = np.where(admissible == action, 1.0, 0.0) - probabilities  # d log pi(action) / d logits
        grad_weights[:, admissible] += advantage * np.outer(observation, direction)
        grad_bias[admissible] += advantage * direction
    policy.weights += config.learning_rate * grad_weights / len(steps)
    policy.bias += config.learning_rate * grad_bias / len(steps)


def save(path: Path, policy: LinearPolicy) -> None:
    """The checkpoint, atomically: the weights and the env they act in."""
    temporary = path.with_name(path.name + ".tmp.npz")
    np.savez(temporary, weights=policy.weights, bias=policy.bias, env=np.array(json.dumps([policy.env_id, policy.env_kwargs])))
    os.replace(temporary, path)


def train(run: Run) -> Trained:
    """Train for ``run.total_steps`` env steps (a resumed run starts again: the example keeps no
    training state); a curve point every ``run.curve_interval`` steps, on the run's grid."""
    config = run.config(Config)
    options = features_kwargs(run.env_id, run.env_kwargs, mask_repeats=True)
    env = FlatDiscreteAction(run.env_factory("train", extra_kwargs=options)(), LAYOUT)
    policy = LinearPolicy(run.env_id, np.zeros((env.observation_space.shape[0], env.action_space.n)),
                          np.zeros(env.action_space.n), {**run.env_kwargs, **options})
    rng, step, curve = np.random.default_rng(run.seed), 0, []
    interval = run.curve_interval(config.curve_every)
    started = time.perf_counter()
    while step < run.total_steps and not run.early_stopped(curve):
        batch = []
        while len(batch) < config.batch_episodes and step < run.total_steps and not run.early_stopped(curve):
            episode = play(env, policy, rng, run.total_steps - step)
            taken = len(episode) if episode is not None else run.total_steps - step
            for point in range((step // interval + 1) * interval, step + taken + 1, interval):  # the grid's points passed
                curve.append((point, run.curve_point(policy, point, config.curve_episodes)))
            step += taken
            if episode is not None:
                batch.append(episode)
        if batch and not run.early_stopped(curve):
            update(policy, batch, config)
    env.close()
    save(run.checkpoint_path, policy)
    return Trained(policy, step, curve, time.perf_counter() - started)


def load_policy(checkpoint: str | Path, device: str) -> LinearPolicy:
    """The policy back from its checkpoint (``device`` unused: numpy)."""
    with np.load(checkpoint) as data:
        env_id, env_kwargs = json.loads(str(data["env"]))
        return LinearPolicy(env_id, data["weights"], data["bias"], env_kwargs)
