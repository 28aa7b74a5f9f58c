"""Numbers for neural team policies: token-id observations for every agent, and the adapter
that presents the team to a single-agent learner with one shared network (parameter sharing),
with token ids or the features vector, or to one language model playing every agent in turn.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from agentgym_envs.core import Episode
from agentgym_envs.wrappers.tokens import PAD_ID, check_token_layout, episode_token_ids

from .features import TeamFeatureEncoder
from .policies import team_env

OBSERVATIONS = ("tokens", "features", "text")


class TeamTokenIds(BaseParallelWrapper):
    """Each agent's ``"text"`` -> ``"observation"``: a ``Box`` of cl100k token ids in the
    single-agent :class:`~agentgym_envs.wrappers.TokenIdsObservation` layout of the shared
    episode (task, recent turns, entity rows at fixed positions) for the ticket holder; all
    :data:`PAD_ID` for a waiting agent (who sees no conversation). ``action_mask`` is kept.

    For the AEC API: ``pettingzoo.utils.conversions.parallel_to_aec(TeamTokenIds(penv))``.
    """

    def __init__(self, env: ParallelEnv, context_len: int = 256, entity_len: int = 12) -> None:
        check_token_layout(context_len, entity_len)
        super().__init__(env)
        self.base = team_env(env)
        self.context_len, self.entity_len = context_len, entity_len
        size = context_len + self.base.scenario.max_entities * entity_len
        self.token_space = spaces.Box(0, PAD_ID, shape=(size,), dtype=np.int64)
        self._observation_spaces = {
            agent: spaces.Dict(
                {"observation": self.token_space, **{k: v for k, v in env.observation_space(agent).spaces.items() if k != "text"}}
            )
            for agent in self.base.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._tokens(observations), infos

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._tokens(observations), rewards, terminations, truncations, infos

    def _tokens(self, observations: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        episode = self.base.episode
        assert episode is not None
        holder = self.base.holder
        out = {}
        for agent, observation in observations.items():
            if agent == holder:
                ids = episode_token_ids(episode, self.context_len, self.entity_len)
            else:
                ids = np.full(self.token_space.shape, PAD_ID, dtype=np.int64)
            out[agent] = {"observation": ids, **{k: v for k, v in observation.items() if k != "text"}}
        return out


class ActiveAgentEnv(gym.Env):
    """The team as one gymnasium env for parameter-shared training (one network, an agent-id
    input): every step is the ticket holder's decision.

    Observation (``observation=``): ``"tokens"`` (default),
    ``Dict(tokens=Box(int64, (context_len + max_entities * entity_len,)),
    agent_id=Discrete(n_agents))``: the holder's :class:`TeamTokenIds` view (the single-agent
    TokenIds layout) and its index in ``possible_agents``; ``"features"``, a float ``Box``:
    the single-agent features vector of the shared episode, then the holder's one-hot
    (:class:`~agentgym_envs.multiagent.features.TeamFeatureEncoder`), for SB3's ``MlpPolicy``
    through :class:`~agentgym_envs.wrappers.FlatDiscreteAction`. Action: the team's
    ``MultiDiscrete`` (a text tool call in text mode, below). :meth:`action_masks` gives the holder's masks
    flat, in MaskablePPO's layout; :meth:`call_masks` the tools it holds (with the team env's
    ``mask_repeats``, less the calls already made) and their rows.

    Reward: the acting agent's reward (its tool-choice reward, plus the team outcome reward
    once at the end). ``info``: the acting agent's team info plus ``agent`` (who acted),
    ``next_agent``, ``action_mask`` and ``argument_mask`` (``[tool, slot, entity]``, zero for
    tools the next agent does not hold); at the end ``metrics`` (the team's metrics, as the
    single-agent env) and ``agent_metrics`` (per agent).

    ``"text"`` (a team in ``action_mode="text"``): one language model plays every agent in turn,
    as one network does in the other views. The observation is the holder's text (its header,
    then the shared episode), the action a text tool call; ``info["messages"]`` is the team
    conversation as the holder reads it (the system message ends with the holder's header: who it
    is, which tools it holds) and :attr:`tool_schemas` the tools it holds. No masks. A recorded
    episode keeps the view of its last holder (its header and tools).

    Public attributes for trainers: the token layout (``context_len``, ``entity_len``,
    ``max_entities``), ``tool_arities`` (arguments per tool), ``flat_capacity`` and
    ``training_reward`` (the scenario's, as :class:`~agentgym_envs.core.ToolUseEnv` has them).
    """

    metadata = {"render_modes": []}

    observations = OBSERVATIONS
    """The observations this env offers (``observation=``)."""

    def __init__(self, team: ParallelEnv, context_len: int = 256, entity_len: int = 12, observation: str = "tokens") -> None:
        self.base = team_env(team)
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        self.text = observation == "text"
        if self.text != (self.base.action_mode == "text"):
            raise ValueError(f"observation={observation!r} needs a team env with action_mode="
                             f"{'text' if self.text else 'structured'}")
        self.features = TeamFeatureEncoder(self.base) if observation == "features" else None
        self.team = TeamTokenIds(team, context_len, entity_len) if observation == "tokens" else team
        self.agents = list(self.base.possible_agents)
        self._schemas = {agent: self.base.tool_schemas(agent) for agent in self.agents}
        self.context_len, self.entity_len = context_len, entity_len
        self.max_entities = self.base.scenario.max_entities
        self.flat_capacity = self.base.scenario.flat_capacity
        self.tool_arities = [len(tool.args) for tool in self.base.scenario.tools]
        self.training_reward = dict(self.base.scenario.training_rewards)
        if self.text:
            self.observation_space = team.observation_space(self.agents[0])["text"]
            self.action_space = team.action_space(self.agents[0])
        elif self.features is None:
            self.observation_space = spaces.Dict({"tokens": self.team.token_space, "agent_id": spaces.Discrete(len(self.agents))})
        else:
            self.observation_space = self.features.space
        if not self.text:
            self.action_space = spaces.MultiDiscrete(self.base.nvec)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        observations, infos = self.team.reset(seed=seed, options=options)
        holder = self.base.holder
        return self._observation(observations, holder), self._info(dict(infos[holder]), holder)

    def step(self, action: Any):
        agent = self.base.holder
        observations, rewards, terminations, truncations, infos = self.team.step({agent: action})
        holder = self.base.holder
        info = self._info(dict(infos[agent]), holder)
        info["agent"] = agent
        if terminations[agent] or truncations[agent]:
            info["agent_metrics"] = {a: infos[a]["metrics"] for a in infos}
            info["metrics"] = infos[agent]["team_metrics"]
        return self._observation(observations, holder), float(rewards[agent]), terminations[agent], truncations[agent], info

    def action_masks(self) -> np.ndarray:
        """The holder's per-dimension masks, concatenated (bool), as MaskablePPO reads them."""
        return np.concatenate(self.base.action_mask(self.base.holder)).astype(bool)

    tools_follow_holder = True
    """The tools (:attr:`tool_schemas`) change within an episode: integrations that fix one tool list per episode
    (:func:`~agentgym_envs.core.runners.episode_tool_schemas`) refuse this env."""

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas of the tools the ticket holder holds (handoff included); there is
        no holder before :meth:`reset`."""
        if self.base.episode is None:
            raise RuntimeError("reset() first: the tools are the ticket holder's, and no ticket is held yet")
        return self._schemas[self.base.holder]

    @property
    def episode(self) -> Episode | None:
        """The team's shared episode."""
        return self.base.episode

    def call_masks(self, repeats: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(tools, arguments)`` as :meth:`ToolUseEnv.call_masks`, for the holder: the tools it
        holds that can be called now, and per tool and argument slot the rows that fit."""
        episode = self.base.episode
        assert episode is not None, "reset the environment first"
        held = self.base.holds_tools(self.base.holder)
        tools, argument = (episode.open_tools(), episode.argument_mask()) if repeats else episode.kind_masks()
        return tools & held, argument & held[:, None, None]

    def _observation(self, observations: dict[str, dict[str, Any]], holder: str) -> Any:
        if self.text:
            return observations[holder]["text"]
        if self.features is None:
            return {"tokens": observations[holder]["observation"], "agent_id": self.agents.index(holder)}
        episode, report = self.base.episode, self.base.last_report
        assert episode is not None
        return self.features.reset(episode) if report is None else self.features.step(episode, report)

    def _info(self, info: dict[str, Any], holder: str) -> dict[str, Any]:
        episode = self.base.episode
        assert episode is not None
        if self.text:
            info.update(next_agent=holder, messages=self._holders_view(info["messages"], holder))
            return info
        argument = episode.argument_mask().copy()
        argument[~self.base.holds_tools(holder)] = False
        info.update(next_agent=holder, action_mask=self.action_masks(), argument_mask=argument)
        return info

    def _holders_view(self, messages: list[dict[str, Any]], holder: str) -> list[dict[str, Any]]:
        """The team conversation with the holder's header at the end of the system message."""
        header = self.base.header(holder)
        if messages and messages[0]["role"] == "system":
            return [{**messages[0], "content": f"{messages[0]['content']}\n\n{header}"}, *messages[1:]]
        return [{"role": "system", "content": header}, *messages]


class AgentIdTokens(gym.ObservationWrapper):
    """:class:`ActiveAgentEnv`'s ``Dict`` observation as one int64 ``Box``
    ``[agent_id, *tokens]``: column 0 is the acting agent's index in ``possible_agents``, the
    rest the single-agent TokenIds layout. The layout a token policy built with ``n_agents``
    reads (``trainers.policy.TokenPolicy``); ``info`` is unchanged."""

    def __init__(self, env: ActiveAgentEnv) -> None:
        super().__init__(env)
        tokens, agent_id = env.observation_space["tokens"], env.observation_space["agent_id"]
        self.n_agents = int(agent_id.n)
        high = np.concatenate([[self.n_agents - 1], tokens.high]).astype(np.int64)
        self.observation_space = spaces.Box(0, high, shape=(1 + tokens.shape[0],), dtype=np.int64)

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        return np.concatenate([[observation["agent_id"]], observation["tokens"]]).astype(np.int64)
