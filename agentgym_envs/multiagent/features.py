"""The features observation of a team episode: the single-agent
:class:`~agentgym_envs.core.features.FeatureEncoder` vector of the shared episode, then a
one-hot of the agent holding the ticket."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from agentgym_envs.core import CallReport, Episode
from agentgym_envs.core.features import FeatureEncoder

from .env import ToolTeamParallelEnv


class TeamFeatureEncoder:
    """Team episode -> ``Box(float32, (episode features + n_agents,))``: the
    :class:`FeatureEncoder` parts (``slices``) and ``agent``, the holder's one-hot in
    ``possible_agents`` order. Every entry lies in [0, 1]."""

    def __init__(self, team: ToolTeamParallelEnv) -> None:
        self.team = team
        self.episode_features = FeatureEncoder(team.scenario, team.max_cycles)
        size = self.episode_features.space.shape[0]
        self.slices = {**self.episode_features.slices, "agent": slice(size, size + len(team.possible_agents))}
        self.space = spaces.Box(0.0, 1.0, shape=(self.slices["agent"].stop,), dtype=np.float32)

    def reset(self, episode: Episode) -> np.ndarray:
        """The features of a fresh episode."""
        return self._with_holder(self.episode_features.reset(episode))

    def step(self, episode: Episode, report: CallReport) -> np.ndarray:
        """The features after one team turn (``report``: the holder's call)."""
        return self._with_holder(self.episode_features.step(episode, report))

    def _with_holder(self, features: np.ndarray) -> np.ndarray:
        holder = np.zeros(len(self.team.possible_agents), dtype=np.float32)
        holder[self.team.possible_agents.index(self.team.holder)] = 1.0
        return np.concatenate([features, holder])
