"""The two reference agents: a scripted expert and a random policy (the agent protocols live in
:mod:`agentgym_envs.core.agent` and are re-exported here).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.core.agent import Agent, BatchPolicy, Turn, expert_action, run_episode, tool_env

__all__ = ["Agent", "BatchPolicy", "ExpertPolicy", "RandomPolicy", "Turn", "expert_action", "run_episode", "tool_env"]


class ExpertPolicy:
    """The scenario's scripted expert, acting through the env's own action mode.

    It reads the task (it is an oracle) and emits the same action a learner would: entity
    slots in structured mode, a JSON tool call in text mode.
    """

    def __init__(self, env: gym.Env) -> None:
        tool_env(env)  # a clear error now for an env that is none
        self.wrapped = env

    @property
    def env(self) -> ToolUseEnv:
        """The tool-use env under the wrappers, read each time (a curriculum changes it)."""
        return tool_env(self.wrapped)

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        assert self.env.episode is not None, "reset the environment first"
        return expert_action(self.env.episode, self.env.action_mode)


class RandomPolicy:
    """Uniformly random tool calls: a random tool and, per argument, a random entity that the
    action mask allows (in text mode, the same call written as JSON)."""

    def __init__(self, env: gym.Env, seed: int | None = None) -> None:
        self.env = tool_env(env)
        self.rng = np.random.default_rng(seed)
        self._nvec = np.array([len(self.env.scenario.tools)] + [self.env.scenario.max_entities] * (self._slots()))

    def _slots(self) -> int:
        return max((len(t.args) for t in self.env.scenario.tools), default=0)

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        episode = self.env.episode
        assert episode is not None, "reset the environment first"
        mask = episode.action_mask()
        action, offset = [], 0
        for size in self._nvec:
            allowed = np.flatnonzero(mask[offset : offset + size])
            action.append(int(self.rng.choice(allowed)))
            offset += size
        action = np.array(action, dtype=np.int64)
        if self.env.action_mode == "structured":
            return action
        call, problem = episode.decode(action)
        return call.to_json() if call is not None else f'{{"name": "{self.env.tool_names[action[0]]}", "arguments": {{}}}}'
