"""The evaluation protocol every run shares, so that benchmark rows are comparable.

Final metrics come from :func:`agentgym_envs.policies.evaluate` on the ``train`` and the
``test`` split, episodes seeded ``EVAL_SEED, EVAL_SEED + 1, ...`` whatever the run's own
seed; a run "reaches the target" when its test success is at least ``TARGET_SUCCESS``.
Each run writes its :class:`~trainers.registry.TrainResult` to ``<run_dir>/result.json``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

from agentgym_envs.policies import Agent, evaluate

from .registry import TrainResult

EVAL_SEED = 0
TARGET_SUCCESS = 0.95
RESULT_FILE = "result.json"
EPISODE_METRICS = ("success", "tool_reliability", "tokens_used", "cost_reduction")  # logged as metrics/<name>
# The reward every trainer (ours and the SB3 baselines) trains tool-use envs on, passed to the
# training envs as ``reward_config``; evaluation uses the env's own. Milder penalties than the
# env's defaults (incorrect call -20, failure -5): under those, a policy that cannot yet find
# correct calls does best by ending the episode at once (a premature close_ticket: -20 - 5)
# rather than exploring at -20 per wrong call, and PPO, GRPO and SB3 settle there (measured:
# episode length -> 1, success 0). Success and tool reliability are graded the same whatever
# the reward.
TRAINING_REWARD = {"incorrect_call": -2.0, "failure": -10.0}


def evaluate_splits(
    make_env: Callable[[str], gym.Env],
    make_agent: Callable[[gym.Env], Agent],
    episodes: int,
    splits: tuple[str, ...] = ("train", "test"),
) -> dict[str, dict[str, float]]:
    """``{split: mean metrics}`` of the agent on each split (``make_env(split)`` builds the env,
    with whatever wrappers the agent reads through)."""
    out = {}
    for split in splits:
        env = make_env(split)
        out[split] = evaluate(env, make_agent(env), episodes=episodes, split=split, seed=EVAL_SEED)
        env.close()
    return out


def first_step_at_target(curve: list[tuple[int, float]], target: float = TARGET_SUCCESS) -> int | None:
    """The first env step of ``curve`` (``(steps, test_success)`` points) at which success >= target."""
    return next((steps for steps, success in sorted(curve) if success >= target), None)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write ``data`` as JSON so that a reader never sees a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, allow_nan=True), encoding="utf-8")
    os.replace(tmp, path)


def save_result(result: TrainResult) -> Path:
    """Write ``result`` to ``<run_dir>/result.json``; return the path."""
    path = Path(result.run_dir) / RESULT_FILE
    write_json_atomic(path, asdict(result))
    return path


def load_result(run_dir: str | Path) -> TrainResult:
    """The :class:`TrainResult` a finished run wrote to ``run_dir``."""
    data = json.loads((Path(run_dir) / RESULT_FILE).read_text(encoding="utf-8"))
    data["curve"] = [tuple(point) for point in data["curve"]]
    return TrainResult(**data)
