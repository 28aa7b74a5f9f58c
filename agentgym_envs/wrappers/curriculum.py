"""A curriculum over a ladder of levels: one env that moves up a level as its agent learns."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

LEVEL_KEY = "curriculum_level"  # the episode-end metric holding the level the episode was played on


class Curriculum(gym.Env):
    """Play the first level's tasks until the success rate of the last ``window`` finished
    episodes reaches ``threshold``, then the next level's, up to the last one (it stays there).

    Every level must have the same observation and action spaces (a family's levels do), so one
    policy acts on all of them. The episode's success is read from ``info["metrics"]["success"]``
    at its end, where ``info["metrics"][LEVEL_KEY]`` adds the level it was played on (trainers log
    it as ``metrics/curriculum_level``). A level's env is built when the
    curriculum first reaches it. ``unwrapped`` is the current level's env, so wrappers and agents
    that read the tool-use env (masks, the episode) see the level being played.

    Args:
        factories: one env factory per level, easiest first.
        threshold: the windowed success rate that moves the curriculum up.
        window: how many of the latest episodes of a level the rate is taken over.
    """

    def __init__(self, factories: Sequence[Callable[[], gym.Env]], threshold: float = 0.9, window: int = 50) -> None:
        if not factories:
            raise ValueError("a curriculum needs at least one level")
        if not 0.0 < threshold <= 1.0 or window < 1:
            raise ValueError(f"threshold must be in (0, 1] and window >= 1, got {threshold} and {window}")
        self.factories, self.threshold, self.window = list(factories), threshold, window
        self.envs: list[gym.Env | None] = [None] * len(self.factories)
        self.level = 0
        self.successes: deque[float] = deque(maxlen=window)
        first = self._env(0)
        self.observation_space, self.action_space = first.observation_space, first.action_space
        self.metadata = first.metadata
        self.render_mode = first.render_mode
        self.spec = first.spec

    @property
    def unwrapped(self) -> gym.Env:
        return self._env(self.level).unwrapped

    @property
    def current(self) -> gym.Env:
        """The env of the level being played."""
        return self._env(self.level)

    def _env(self, level: int) -> gym.Env:
        env = self.envs[level]
        if env is None:
            env = self.envs[level] = self.factories[level]()
            if level and (env.observation_space, env.action_space) != (self.observation_space, self.action_space):
                raise ValueError(f"level {level} has other spaces than level 0: {env.observation_space}, {env.action_space}")
        return env

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self.level + 1 < len(self.factories) and len(self.successes) == self.window \
                and sum(self.successes) >= self.threshold * self.window:
            self.level += 1
            self.successes.clear()
        return self.current.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.current.step(action)
        if (terminated or truncated) and "metrics" in info:
            self.successes.append(float(info["metrics"].get("success", 0.0)))
            info = {**info, "metrics": {**info["metrics"], LEVEL_KEY: float(self.level)}}
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> Any:
        return self.current.get_wrapper_attr("action_masks")()

    def render(self) -> Any:
        return self.current.render()

    def close(self) -> None:
        for env in self.envs:
            if env is not None:
                env.close()
