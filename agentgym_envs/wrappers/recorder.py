"""Record finished episodes as JSONL in OpenAI chat format (usable as SFT data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs.core.agent import tool_env


class TrajectoryRecorder(gym.Wrapper):
    """Append one JSON line per finished episode to ``path``:
    ``{"task_id", "messages", "tools", "return", "metrics"}``; ``messages`` and ``tools`` are
    in the OpenAI fine-tuning format. Each line is written and flushed whole."""

    def __init__(self, env: gym.Env, path: str | Path) -> None:
        super().__init__(env)
        self.base = tool_env(env)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._return = 0.0

    def reset(self, **kwargs: Any):
        self._return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        if terminated or truncated:
            record = {
                "task_id": info["task_id"],
                "messages": info["messages"],
                "tools": self.base.tool_schemas,
                "return": self._return,
                "metrics": info["metrics"],
            }
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return observation, reward, terminated, truncated, info
