"""RLlib on agentgym environments through the documented wrappers.

Needs ``pip install 'agentgym-envs[rllib]'``, which installs the gymnasium release RLlib pins.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

try:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("RLlib is missing: pip install 'agentgym-envs[rllib]' (see docs/ray.md)") from exc


def bag_of_tokens_env(config: dict[str, Any]) -> gym.Env:
    """RLlib env creator: ``config["env_id"]`` made with the other entries as ``gym.make``
    keyword arguments, its text observation as ``BagOfTokensObservation``'s ``Box``."""
    from agentgym_envs.wrappers import BagOfTokensObservation

    make_kwargs = {key: value for key, value in config.items() if key != "env_id"}
    return BagOfTokensObservation(gym.make(config["env_id"], **make_kwargs))


def register(name: str = "agentgym") -> str:
    """Register :func:`bag_of_tokens_env` with Ray Tune under ``name``; returns ``name``."""
    register_env(name, bag_of_tokens_env)
    return name


def ppo_config(env_id: str, batch_size: int = 1000, seed: int = 0, split: str = "train", **make_kwargs: Any) -> PPOConfig:
    """A PPO configuration for ``env_id`` (small batches for CPU runs); tune it further as usual."""
    return (PPOConfig()
            .environment(register(), env_config={"env_id": env_id, "split": split, **make_kwargs})
            .env_runners(num_env_runners=0, num_envs_per_env_runner=4)
            .training(train_batch_size_per_learner=batch_size, minibatch_size=max(batch_size // 4, 32), num_epochs=4,
                      lr=3e-4, entropy_coeff=0.01)
            .debugging(seed=seed))
