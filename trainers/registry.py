"""Every training algorithm behind one call: ``run(algo, spec) -> TrainResult``.

Each algorithm module exposes a function ``(RunSpec) -> TrainResult``; this registry maps
the names the CLI and the benchmarks use to those functions (imported lazily, so that
listing algorithms costs nothing).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class RunSpec:
    """What every algorithm is asked to do: train on ``env_id`` for ``total_steps``
    environment steps with ``seed`` on ``device`` ("auto" | "cpu" | "cuda"), write
    TensorBoard logs and checkpoints to ``run_dir``; ``overrides`` set fields of the
    algorithm's own config dataclass."""

    env_id: str
    seed: int = 0
    total_steps: int = 200_000
    device: str = "auto"
    run_dir: str = "runs"
    eval_episodes: int = 100
    resume: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class TrainResult:
    """The outcome of a run, as the benchmarks table it.

    ``curve`` holds ``(env_steps, test_success)`` evaluation points; ``steps_to_target`` the
    first env step count at which test success reached the scenario's target (None if never).
    """

    algo: str
    env_id: str
    seed: int
    total_steps: int
    wall_time_s: float
    sps: float
    train_metrics: dict[str, float]
    test_metrics: dict[str, float]
    curve: list[tuple[int, float]]
    steps_to_target: int | None
    run_dir: str


ALGORITHMS: dict[str, str] = {
    "ppo": "trainers.ppo:run",
    "grpo": "trainers.grpo:run",
    "bc": "trainers.bc:run",
    "bc-ppo": "trainers.bc:run_then_ppo",
    "bc-grpo": "trainers.bc:run_then_grpo",
    "sb3-ppo": "trainers.sb3_baselines:run_ppo",
    "sb3-a2c": "trainers.sb3_baselines:run_a2c",
    "sb3-dqn": "trainers.sb3_baselines:run_dqn",
    "sb3-maskable-ppo": "trainers.sb3_baselines:run_maskable_ppo",
    "llm-sft": "trainers.llm.sft:run",
    "llm-grpo": "trainers.llm.grpo:run",
    "random": "trainers.reference:run_random",
    "expert": "trainers.reference:run_expert",
}


def resolve(algo: str) -> Callable[[RunSpec], TrainResult]:
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; choose from {list(ALGORITHMS)}")
    module, _, name = ALGORITHMS[algo].partition(":")
    return getattr(importlib.import_module(module), name)


TEAM_ALGORITHMS = ("ppo",)  # what trains a PettingZoo team env (parameter-shared, one network)


def run(algo: str, spec: RunSpec) -> TrainResult:
    """Train ``algo`` as ``spec`` says and return its result."""
    from .common import TEAM_ENVS, canonical_env_id

    if algo not in TEAM_ALGORITHMS and canonical_env_id(spec.env_id) in TEAM_ENVS:
        raise ValueError(f"{spec.env_id}: a team env trains with {' or '.join(TEAM_ALGORITHMS)} (parameter-shared); "
                         f"{algo!r} needs a single-agent env")
    return resolve(algo)(spec)
