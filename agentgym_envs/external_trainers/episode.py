"""One agentgym episode in text mode, the unit every framework integration plays.

A framework's rollout loop hands over the model's reply as text; :meth:`TextEpisode.step` gives
it to the env as-is (``action_mode="text"``: the env's own parser reads JSON, OpenAI
``tool_calls``, fenced blocks, Hermes ``<tool_call>`` tags or ``name(arg=value)``) and returns the
env's replies as chat messages, the step's reward and whether the episode ended. The same seed
draws the same task wherever it is played, so an episode's return and metrics are the same in
process, in verl's agent loop and in SkyRL's generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_envs import resolve_env_id
from agentgym_envs.core.agent import expert_action
from agentgym_envs.core.parsing import compact_json
from agentgym_envs.core.runners import episode_tool_schemas


def canonical_id(env: str) -> str:
    """An agentgym name (``math``), short id (``Math-v0``) or full id -> the registered env id."""
    try:
        return resolve_env_id(env)
    except ValueError:
        if env in gym.registry:
            return env
        raise


def chat_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message of the env's conversation as plain ``role``/``content`` text (tool results keep
    their ``tool`` role; structured content is written as compact JSON)."""
    content = message.get("content")
    if content is None:
        content = ""
    elif not isinstance(content, str):
        content = compact_json(content)
    return {"role": message["role"], "content": content}


@dataclass
class Step:
    """What the env answered to one reply."""

    replies: list[dict[str, Any]]
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


class TextEpisode:
    """One env of ``env`` (name or id) on ``split`` in text mode, played one reply at a time."""

    def __init__(self, env: str, split: str = "train", **make_kwargs: Any) -> None:
        self.env_id = canonical_id(env)
        self.split = split
        self.env = gym.make(self.env_id, split=split, **{**make_kwargs, "action_mode": "text"})
        try:
            episode_tool_schemas(self.env)  # one tool list per episode: an env whose tools change is refused now
        except ValueError:
            self.env.close()
            raise
        self.episode_return = 0.0
        self.turns = 0
        self.ended = True
        self.metrics: dict[str, float] = {}
        self.messages: list[dict[str, Any]] = []
        self.task_id: str | None = None

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The env's tools as OpenAI function-calling schemas."""
        return list(episode_tool_schemas(self.env))

    def reset(self, seed: int, task_id: str | None = None) -> list[dict[str, Any]]:
        """Start the task ``seed`` draws; its opening messages (system, then the request). A
        ``task_id`` that is not the task drawn is an error (rows made for other env arguments)."""
        _, info = self.env.reset(seed=int(seed))
        if task_id is not None and info["task_id"] != task_id:
            raise RuntimeError(f"seed {seed} drew task {info['task_id']!r}, the row says {task_id!r}: "
                               f"the rows were made for other env arguments")
        self.task_id = info["task_id"]
        self.episode_return, self.turns, self.ended, self.metrics = 0.0, 0, False, {}
        self.messages = [dict(m) for m in info["messages"]]
        return [chat_message(m) for m in self.messages]

    def step(self, reply: str) -> Step:
        """Give the env one model reply as it was written; the env's answer to it."""
        if self.ended:
            raise RuntimeError("the episode has ended; reset first")
        seen = len(self.messages)
        _, reward, terminated, truncated, info = self.env.step(reply)
        self.episode_return += float(reward)
        self.turns += 1
        self.messages = [dict(m) for m in info["messages"]]
        if terminated or truncated:
            self.ended = True
            self.metrics = {k: float(v) for k, v in info.get("metrics", {}).items() if _numeric(v)}
        # the env records the reply as one assistant turn; what follows it is the env's answer
        replies = [chat_message(m) for m in self.messages[seen + 1:]]
        return Step(replies=replies, reward=float(reward), done=bool(terminated or truncated), info=info)

    def expert_reply(self) -> str:
        """The scripted expert's next reply as text (a JSON tool call), for tests and demos."""
        episode = self.env.unwrapped.episode
        if episode is None:
            raise RuntimeError("reset first")
        return expert_action(episode, "text")

    def close(self) -> None:
        self.env.close()


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float))


def play_in_process(env: str, seed: int, split: str = "train", **make_kwargs: Any) -> dict[str, Any]:
    """The scripted expert's episode on ``seed`` played directly on the env: its return, metrics,
    replies (text) and the full conversation. The reference the integrations are checked against."""
    episode = TextEpisode(env, split, **make_kwargs)
    try:
        opening = episode.reset(seed)
        actions, rewards = [], []
        while not episode.ended:
            action = episode.expert_reply()
            step = episode.step(action)
            actions.append(action)
            rewards.append(step.reward)
        return {"return": episode.episode_return, "metrics": dict(episode.metrics), "actions": actions,
                "rewards": rewards, "opening": opening, "messages": [chat_message(m) for m in episode.messages],
                "task_id": episode.task_id}
    finally:
        episode.close()
