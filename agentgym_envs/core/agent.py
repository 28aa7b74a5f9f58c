"""The agent protocols and the small things every layer needs: the env under the wrappers, one
episode played to its end, and the scripted expert's next action.

An agent is any callable ``(observation, info) -> action`` bound to one env. A batch policy
(the LLM agents) answers many conversations at once with :class:`Turn` objects, so that one
model serves several environments and a failed call ends an episode instead of a program.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym

from .env import ToolUseEnv
from .episode import Episode


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


def expert_action(episode: Episode, action_mode: str) -> Any:
    """The scripted expert's next call in ``episode``, as an action of ``action_mode``."""
    call = episode.scenario.expert_call(episode.task, episode.world, episode.history)
    if action_mode == "text":
        return call.to_json()
    action = episode.encode(call)
    if action is None:
        raise RuntimeError(f"the entity table cannot express the expert's call {call}")
    return action


def play_episode(env: gym.Env, agent: Agent, seed: int | None = None,
                 options: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
    """Play one episode; return its return and the last ``info`` (metrics, outcome, messages)."""
    observation, info = env.reset(seed=seed, options=options)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent(observation, info))
        total += float(reward)
        done = terminated or truncated
    return total, info


def run_episode(env: gym.Env, agent: Agent, seed: int | None = None,
                options: dict[str, Any] | None = None) -> tuple[float, dict[str, float]]:
    """Play one episode; return its return and ``info["metrics"]`` (empty for an env without)."""
    total, info = play_episode(env, agent, seed, options)
    return total, info.get("metrics", {})
