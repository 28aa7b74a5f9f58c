"""The agent protocols and the two reference agents: a scripted expert and a random policy.

An agent is any callable ``(observation, info) -> action`` bound to one env. A batch policy
(the LLM agents) answers many conversations at once with :class:`Turn` objects, so that one
model serves several environments and a failed call ends an episode instead of a program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import gymnasium as gym
import numpy as np

from agentgym_envs.core import Episode, ToolUseEnv


class Agent(Protocol):
    def __call__(self, observation: Any, info: dict[str, Any]) -> Any: ...


@dataclass
class Turn:
    """A batch policy's answer for one conversation: the text action, token counts to add to
    the episode's metrics (e.g. ``llm_prompt_tokens``), or the error that ends the episode."""

    action: Any = None
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None


class BatchPolicy(Protocol):
    def respond(self, conversations: Sequence[Sequence[dict[str, Any]]], tools: list[dict[str, Any]] | None) -> list[Turn]:
        """One :class:`Turn` per conversation (OpenAI chat messages), in order."""
        ...


def tool_env(env: gym.Env) -> ToolUseEnv:
    """The :class:`ToolUseEnv` under any wrappers."""
    base = env.unwrapped
    if not isinstance(base, ToolUseEnv):
        raise TypeError(f"expected an AgentGym tool-use environment, got {type(base).__name__}")
    return base


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


def expert_action(episode: Episode, action_mode: str) -> Any:
    """The scripted expert's next call in ``episode``, as an action of ``action_mode``."""
    call = episode.scenario.expert_call(episode.task, episode.world, episode.history)
    if action_mode == "text":
        return call.to_json()
    action = episode.encode(call)
    if action is None:
        raise RuntimeError(f"the entity table cannot express the expert's call {call}")
    return action


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
        return call.to_json() if call is not None else '{"name": "%s", "arguments": {}}' % self.env.tool_names[action[0]]
