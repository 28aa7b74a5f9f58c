"""Reference teams (the scripted expert team, random agents) and team evaluation.

A team policy is any callable ``(agent, observation, info) -> action or None``; it is asked
for every live agent each cycle and answers ``None`` for an agent that should wait.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from agentgym_envs.core.agent import expert_action

from .env import ToolTeamParallelEnv


class TeamPolicy(Protocol):
    def __call__(self, agent: str, observation: Any, info: dict[str, Any]) -> Any: ...


def team_env(env: Any) -> ToolTeamParallelEnv:
    """The :class:`ToolTeamParallelEnv` under any PettingZoo wrappers or conversions."""
    base = env.unwrapped
    if not isinstance(base, ToolTeamParallelEnv):
        raise TypeError(f"expected an AgentGym team environment, got {type(base).__name__}")
    return base


class ExpertTeam:
    """The scripted expert team: the holder makes the base expert's next call if it holds
    the tool, else hands the ticket to the first agent that does; the others wait.

    Acts through the env's own action mode (entity rows or a JSON tool call).
    """

    def __init__(self, env: Any) -> None:
        self.env = team_env(env)

    def __call__(self, agent: str, observation: Any, info: dict[str, Any]) -> Any:
        env, episode = self.env, self.env.episode
        assert episode is not None, "reset the environment first"
        if agent != env.holder:
            return None
        return expert_action(episode, env.action_mode)


class RandomTeam:
    """Random agents: the holder picks a uniformly random action among those its action mask
    allows (in text mode, that call written as JSON); the others wait."""

    def __init__(self, env: Any, seed: int | None = None) -> None:
        self.env = team_env(env)
        self.rng = np.random.default_rng(seed)

    def __call__(self, agent: str, observation: Any, info: dict[str, Any]) -> Any:
        env, episode = self.env, self.env.episode
        assert episode is not None, "reset the environment first"
        if agent != env.holder:
            return None
        action = np.array([self.rng.choice(np.flatnonzero(mask)) for mask in env.action_mask(agent)], dtype=np.int64)
        if env.action_mode == "structured":
            return action
        call, _ = episode.decode(action)
        return call.to_json() if call is not None else json.dumps({"name": env.tool_names[action[0]], "arguments": {}})


TEAMS: dict[str, Callable[[Any, int], TeamPolicy]] = {
    "expert": lambda env, seed: ExpertTeam(env),
    "random": lambda env, seed: RandomTeam(env, seed),
}


def run_team_episode(env: Any, team: TeamPolicy, seed: int | None = None, options: dict[str, Any] | None = None
                     ) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """Play one episode of a Parallel team env; return each agent's return and the last infos."""
    observations, infos = env.reset(seed=seed, options=options)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {agent: team(agent, observations[agent], infos[agent]) for agent in env.agents}
        observations, rewards, _, _, infos = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += float(reward)
    return returns, infos


def evaluate_team(
    env: Any,
    policy: str | TeamPolicy,
    episodes: int = 100,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, float]:
    """Mean team metrics of ``policy`` (``"expert"``, ``"random"`` or a team callable) over
    ``episodes`` episodes of the Parallel env ``env`` seeded ``seed, seed+1, ...``.

    Returns the mean of every ``team_metrics`` entry, ``return`` (the sum of the agents'
    returns) and ``episodes``.
    """
    if isinstance(policy, str):
        if policy not in TEAMS:
            raise ValueError(f"unknown team policy {policy!r}; choose from {list(TEAMS)} or pass a callable")
        team = TEAMS[policy](env, seed)
    else:
        team = policy
    rows, totals = [], []
    for episode in tqdm(range(episodes), desc=str(policy), disable=not progress):
        returns, infos = run_team_episode(env, team, seed=seed + episode)
        rows.append(next(iter(infos.values()))["team_metrics"])
        totals.append(sum(returns.values()))
    summary = {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
    summary["return"] = float(np.mean(totals))
    summary["episodes"] = float(episodes)
    return summary
