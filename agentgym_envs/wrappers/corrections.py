"""Label any agent's episodes with the scripted expert's next call (DAgger's labels), as SFT data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs.core.agent import tool_env
from agentgym_envs.core.episode import assistant_message
from agentgym_envs.core.parsing import ToolCall


class ExpertCorrections(gym.Wrapper):
    """Before each step, ask the scripted expert (an oracle: it reads the task) what it would
    call from the state the agent has reached, and append a chat record to ``path`` for the
    states worth learning from: ``{"task_id", "messages", "tools"}`` where ``messages`` is the
    conversation so far, its assistant turns marked ``"weight": 0`` (context, as in the OpenAI
    fine-tuning format), followed by the expert's call as the one assistant turn to learn.

    This is DAgger's data (Ross, Gordon and Bagnell, 2011): the states come from the agent,
    the actions from the expert, so the records show what the expert's own episodes never do:
    how to go on after a slip (a lookup that failed on a miscopied address, a call the env
    rejected, a reply it could not read). By default, states are labelled from the episode's
    first slip on (the first call that is not a correct call: invalid, failed, unreadable or
    judged wrong), that state included; before it the episode follows the expert, whose
    episodes the SFT corpus already holds. ``all_states=True`` labels every state, as DAgger
    does. States where the expert has nothing left to call are not labelled. The agent's
    action is what steps the env: the wrapper only records. Each line is written and flushed
    whole; ``records`` counts them and ``labelled_episodes`` the episodes that have one.
    """

    def __init__(self, env: gym.Env, path: str | Path, all_states: bool = False) -> None:
        super().__init__(env)
        self.base = tool_env(env)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.all_states = all_states
        self.records = 0
        self.labelled_episodes = 0
        self._messages: list[dict[str, Any]] = []
        self._task_id = ""
        self._slipped = self._labelled = False

    def reset(self, **kwargs: Any):
        observation, info = self.env.reset(**kwargs)
        self._messages, self._task_id = info["messages"], info["task_id"]
        self._slipped = self._labelled = False
        return observation, info

    def step(self, action: Any):
        episode = self.base.episode
        if episode is None:
            raise gym.error.ResetNeeded("call reset before step")
        expert, calls_before = self._expert_call(), episode.calls
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._slipped = self._slipped or not (info["valid"] and info["correct"])
        if expert is not None and (self._slipped or self.all_states):
            self.labelled_episodes += not self._labelled
            self._labelled = True
            self._write(assistant_message(expert, f"call_{calls_before + 1}"))
        self._messages = info["messages"]
        return observation, reward, terminated, truncated, info

    def _expert_call(self) -> ToolCall | None:
        episode = self.base.episode
        try:
            return episode.scenario.expert_call(episode.task, episode.world, episode.history)
        except StopIteration:  # the expert's plan is done
            return None

    def _write(self, correction: dict[str, Any]) -> None:
        context = [{**m, "weight": 0} if m["role"] == "assistant" else m for m in self._messages]
        record = {"task_id": self._task_id, "messages": context + [correction], "tools": self.base.tool_schemas}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.records += 1
