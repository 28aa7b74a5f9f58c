"""Tiny trainer configurations: a few hundred steps, a small network, no progress bars."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import agentgym_envs  # noqa: F401  (registers the env ids)
from trainers.lifecycle import TrainResult, train
from trainers.run import TrainRequest

CS = "AgentGym/CustomerSupport-v0"
TINY_NET = dict(embed_dim=16, layers=1, heads=2, ff_dim=32)
TINY_PPO = dict(TINY_NET, num_envs=2, num_steps=16, num_minibatches=2, update_epochs=2, eval_every_steps=32,
                eval_curve_episodes=2, checkpoint_every=1)


@pytest.fixture
def tiny_ppo() -> dict:
    return dict(TINY_PPO)


@pytest.fixture
def train_tiny(tmp_path: Path) -> Callable[..., TrainResult]:
    """``train_tiny(algo, total_steps, env=CS, resume=False, root=tmp_path, seed=0, **overrides)``:
    one run through the lifecycle on the CPU, 2 final evaluation episodes per split."""

    def run(algo: str = "ppo", total_steps: int = 64, env: str = CS, resume: bool = False, root: Path | None = None,
            seed: int = 0, eval_episodes: int = 2, **overrides) -> TrainResult:
        request = TrainRequest(env, algo=algo, seed=seed, total_steps=total_steps, device="cpu",
                               run_root=str(root or tmp_path), eval_episodes=eval_episodes, resume=resume, progress=False,
                               overrides=overrides)
        return train(request)

    return run
