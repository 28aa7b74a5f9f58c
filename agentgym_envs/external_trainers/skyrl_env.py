"""agentgym environments as SkyRL-Gym text environments.

SkyRL's generator makes one env per trajectory with ``skyrl_gym.make(env_class, env_config=...,
extras=row)``, where ``row`` is the dataset row without its ``prompt`` and ``env_class``; it
calls ``init(prompt)``, then ``step(reply)`` with each generated reply until ``done``, then
``get_metrics()``. :class:`AgentGymTextEnv` plays one agentgym episode that way:

- ``extras`` (a row of :func:`agentgym_envs.external_trainers.data.skyrl_rows`): ``env`` (name or
  id), ``seed`` (draws the task), ``split``, optionally ``task_id`` (checked) and ``env_kwargs``
  (``gym.make`` arguments: ``reward_config``, ``max_turns``, ``data_dir``, ...). ``env_config``
  (``skyrl_gym_cfg.agentgym`` in SkyRL's config) may give the same keys as defaults.
- ``step`` hands the reply to the env's text-mode parser as it was written and returns the env's
  replies (``tool`` results, ``user`` errors and simulated users) as observations and the step's
  reward, so the rewards of a trajectory sum to the env's return.
- ``get_metrics`` is the env's episode metrics (``success``, ``tool_reliability``, ...) and the
  ``return``.

The generator sets ``extras["max_turns"]`` to ``generator.max_turns``: the trajectory stops
there even if the env has not ended; set it at least to the env's own ``max_turns``.

:func:`register_envs` registers ``agentgym`` (the env named by the row) and one id per env
(``agentgym_math``, ``agentgym_tau2_retail``, ...); importing this module calls it.
"""

from __future__ import annotations

import json
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import register, registry

from agentgym_envs import ENVIRONMENTS

from .episode import TextEpisode

ENV_CLASS = "agentgym"
ENTRY_POINT = "agentgym_envs.external_trainers.skyrl_env:AgentGymTextEnv"


def _plain(value: Any) -> Any:
    """An OmegaConf container as plain Python (SkyRL passes ``env_config`` as a DictConfig)."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - skyrl_gym depends on omegaconf
        return value
    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=True)
    return value


class AgentGymTextEnv(BaseTextEnv):
    """One agentgym episode as a SkyRL ``BaseTextEnv``."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None, env: str | None = None) -> None:
        super().__init__()
        settings = {**(_plain(env_config) or {}), **(_plain(extras) or {})}
        name = settings.get("env") or env
        if name is None:
            raise ValueError("name the agentgym env: extras['env'] (a dataset column) or env_config.env")
        if "seed" not in settings:
            raise ValueError("extras['seed'] (a dataset column) draws the task; it is missing")
        self.seed = int(settings["seed"])
        self.task_id = settings.get("task_id")
        self.max_turns = int(settings["max_turns"]) if settings.get("max_turns") else None
        env_kwargs = settings.get("env_kwargs") or {}
        if isinstance(env_kwargs, str):  # a parquet column holds it as JSON
            env_kwargs = json.loads(env_kwargs)
        self.episode = TextEpisode(str(name), str(settings.get("split") or "train"), **dict(env_kwargs))
        self.opening: list[dict[str, Any]] = []

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start the row's task. The prompt is the row's own (the env's opening messages); an
        empty prompt is replaced by the env's opening messages."""
        self.opening = self.episode.reset(self.seed, self.task_id)
        self.turns = 0
        return (list(prompt) if prompt else list(self.opening)), {"task_id": self.episode.task_id,
                                                                  "env_id": self.episode.env_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        step = self.episode.step(action)
        self.turns += 1
        done = step.done or (self.max_turns is not None and self.turns >= self.max_turns)
        info = step.info
        metadata = {"parse": info.get("parse"), "valid": info.get("valid"), "correct": info.get("correct")}
        if step.done:
            metadata["metrics"] = dict(self.episode.metrics)
        return BaseTextEnvStepOutput(observations=step.replies, reward=step.reward, done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        """The env's episode metrics (``success``, ``tool_reliability``, ...), ``return`` and
        ``finished`` (whether the env ended the episode, not SkyRL's turn limit)."""
        return {**self.episode.metrics, "return": self.episode.episode_return, "finished": float(self.episode.ended)}

    def close(self) -> None:
        self.episode.close()


def env_class_name(name: str) -> str:
    """The SkyRL id of one agentgym env: ``agentgym_<name>``."""
    return f"{ENV_CLASS}_{name}"


def register_envs() -> list[str]:
    """Register ``agentgym`` and ``agentgym_<name>`` for every agentgym env with SkyRL-Gym
    (again: nothing); the ids registered."""
    ids = [ENV_CLASS] + [env_class_name(entry.name) for entry in ENVIRONMENTS]
    for env_class in ids:
        if env_class in registry:
            continue
        kwargs = {} if env_class == ENV_CLASS else {"env": env_class[len(ENV_CLASS) + 1:]}
        register(id=env_class, entry_point=ENTRY_POINT, kwargs=kwargs)
    return ids


register_envs()
