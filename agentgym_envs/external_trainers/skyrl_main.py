"""SkyRL's PPO/GRPO entrypoint with the agentgym envs registered (``env_class: agentgym``).

SkyRL runs its trainer (and its generator, which makes the envs) in a Ray task; the SkyRL-Gym
registry is per process, so the envs are registered inside that task. Run it as SkyRL's own
``skyrl_train.entrypoints.main_base`` with the same Hydra overrides (docs/skyrl.md):

    python -m agentgym_envs.external_trainers.skyrl_main data.train_data=[data/skyrl/math_train.parquet] ...
"""

from __future__ import annotations

import hydra
import ray
from omegaconf import DictConfig
from skyrl_train.entrypoints.main_base import BasePPOExp, config_dir
from skyrl_train.utils import validate_cfg
from skyrl_train.utils.utils import initialize_ray


@ray.remote(num_cpus=1)
def skyrl_entrypoint(cfg: DictConfig) -> None:
    from agentgym_envs.external_trainers.skyrl_env import register_envs

    register_envs()
    BasePPOExp(cfg).run()


@hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
def main(cfg: DictConfig) -> None:
    validate_cfg(cfg)
    initialize_ray(cfg)
    ray.get(skyrl_entrypoint.remote(cfg))


if __name__ == "__main__":
    main()
