"""ToolTeamParallelEnv: a PettingZoo Parallel environment in which a team of agents runs one
:class:`~agentgym_envs.multiagent.team.TeamScenario` episode with the core's engine.

One cycle (one ``step``) is one team turn: the agent holding the ticket makes one tool call
(or a handoff); the others wait. See ``support_team_v0`` for the documented environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from agentgym_envs.core import CallReport, Episode, RewardConfig
from agentgym_envs.core.arguments import check_limits
from agentgym_envs.core.env import check_modes, make_reward_config, make_task_source
from agentgym_envs.core.episode import MAX_ECHO_CHARS, max_observation_chars
from agentgym_envs.core.text import text_space

from .team import HANDOFF, TeamScenario, TeamWorld


@dataclass
class AgentStats:
    """One agent's counters over an episode."""

    turns: int = 0
    correct_calls: int = 0
    invalid_calls: int = 0
    handoffs: int = 0
    tokens_used: int = 0
    out_of_turn_actions: int = 0


class ToolTeamParallelEnv(ParallelEnv):
    """A team resolves one task of ``scenario`` together, one tool call per cycle.

    Each cycle the ticket holder's action runs as a tool call (a missing or ``None`` action
    from the holder is an invalid turn); the other agents should send no action (omit it or
    send ``None``); an action from them is ignored, with an ``out of turn`` error in their
    info. Nothing an agent sends raises: out-of-space actions, tools the agent does not
    hold, malformed JSON all become error results.

    Args:
        scenario: the team scenario (the base scenario, the roster, the handoff tool).
        action_mode: ``"structured"`` (``MultiDiscrete``) or ``"text"`` (JSON tool calls).
        split: ``"train"``, ``"validation"`` (where the scenario has it) or ``"test"``: which
            generated tasks ``reset`` draws from.
        task_file: a JSONL file of the user's own tasks, in the base scenario's schema.
        reward_config: a :class:`RewardConfig` or a dict overriding the scenario's defaults.
        max_cycles: team turns before truncation (default: the base ``max_turns`` plus one
            per agent).
        max_invalid_calls: truncate after this many invalid team turns (None: never).
        history_turns: how many recent turns the holder's observation shows.
        render_mode: ``"ansi"`` or None.
        mask_repeats: the masks also leave out calls identical to one already made (as
            :class:`~agentgym_envs.core.ToolUseEnv`'s ``mask_repeats``; a repeated handoff too).

    ``last_report``: the :class:`~agentgym_envs.core.CallReport` of the latest cycle (None
    before the first), for observations built from the call (the features of the adapter).
    """

    metadata = {"name": "tool_team", "render_modes": ["ansi"], "render_fps": 4, "is_parallelizable": True}

    def __init__(
        self,
        scenario: TeamScenario,
        action_mode: str = "structured",
        split: str = "train",
        task_file: str | Path | None = None,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_cycles: int | None = None,
        max_invalid_calls: int | None = None,
        history_turns: int = 8,
        render_mode: str | None = None,
        mask_repeats: bool = False,
    ) -> None:
        check_modes(action_mode, render_mode, self.metadata["render_modes"])
        check_limits(mask_repeats, history_turns, max_cycles=max_cycles, max_invalid_calls=max_invalid_calls)
        self.scenario = scenario
        self.action_mode = action_mode
        self.split = split
        self.tasks = make_task_source(scenario, split, task_file)
        self.reward_config = make_reward_config(scenario.default_rewards, reward_config)
        self.max_cycles = max_cycles or scenario.max_turns + len(scenario.agents)
        self.max_invalid_calls = max_invalid_calls
        self.history_turns = history_turns
        self.render_mode = render_mode
        self.mask_repeats = mask_repeats
        self.possible_agents: list[str] = list(scenario.agents)
        self.agents: list[str] = []
        self.tool_names: list[str] = [tool.name for tool in scenario.tools]
        self._tools_held = {a: [t for t in self.tool_names if t in scenario.holdings[a]] for a in self.possible_agents}
        self._tool_rows = {a: np.array([t in scenario.holdings[a] for t in self.tool_names]) for a in self.possible_agents}
        n_slots = max(len(tool.args) for tool in scenario.tools)
        self.nvec = np.array([len(scenario.tools)] + [scenario.max_entities] * n_slots, dtype=np.int64)
        self._headers = {a: f"AGENT {a}: you hold the ticket. Your tools: {', '.join(self._tools_held[a])}." for a in self.possible_agents}
        longest_header = max(
            *(len(h) for h in self._headers.values()),
            *(len(self._waiting_text(a, b)) for a in self.possible_agents for b in self.possible_agents),
        )
        text = text_space(longest_header + 2 + max_observation_chars(scenario, history_turns))
        self._action_spaces: dict[str, spaces.Space] = {}
        self._observation_spaces: dict[str, spaces.Space] = {}
        for agent in self.possible_agents:
            if action_mode == "structured":
                self._action_spaces[agent] = spaces.MultiDiscrete(self.nvec)
                masks = spaces.Tuple([spaces.MultiBinary(int(n)) for n in self.nvec])
                self._observation_spaces[agent] = spaces.Dict({"text": text, "action_mask": masks})
            else:
                self._action_spaces[agent] = text_space(scenario.max_action_chars)
                self._observation_spaces[agent] = spaces.Dict({"text": text})
        self.episode: Episode | None = None
        self.last_report: CallReport | None = None
        self.np_random: np.random.Generator | None = None
        self.stats: dict[str, AgentStats] = {}

    # ------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def tool_schemas(self, agent: str) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas of the tools ``agent`` holds (handoff included)."""
        return [tool.schema() for tool in self.scenario.tools if tool.name in self.scenario.holdings[agent]]

    def header(self, agent: str) -> str:
        """The line that opens ``agent``'s observation while it holds the ticket: who it is and its tools."""
        return self._headers[agent]

    def holds_tools(self, agent: str) -> np.ndarray:
        """Boolean per tool (in ``tool_names`` order): whether ``agent`` holds it."""
        return self._tool_rows[agent].copy()

    @property
    def holder(self) -> str:
        """The agent holding the ticket."""
        return self._world().holder

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Start an episode: ``options={"task_id": ...}`` picks a task, else the seed draws one
        (the same task as the single-agent environment with that seed and split)."""
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        if options and "task_id" in options:
            task = self.tasks.get(options["task_id"])
        else:
            task = self.tasks.sample(self.np_random)
        self.episode = Episode(self.scenario, task, self.history_turns, self.mask_repeats)
        self.last_report = None
        self.agents = list(self.possible_agents)
        self.stats = {agent: AgentStats() for agent in self.agents}
        self.stats[self.holder].tokens_used = self.episode.tokens_used  # the first holder reads the ticket
        infos = {agent: self._info(agent, None, None) for agent in self.agents}
        return {agent: self._observe(agent) for agent in self.agents}, infos

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        episode = self.episode
        if episode is None or not self.agents:
            raise RuntimeError("the episode has ended (or never started): call reset() before step()")
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
        unknown = sorted(map(str, set(actions) - set(self.agents)))
        if unknown:
            raise ValueError(f"actions for unknown or finished agent(s) {unknown}; live agents: {self.agents}")
        holder = self.holder
        out_of_turn = {}
        for agent in self.agents:
            if agent != holder and actions.get(agent) is not None:
                self.stats[agent].out_of_turn_actions += 1
                out_of_turn[agent] = f"out of turn: the ticket is with {holder}; {agent} must wait (send no action); the action was ignored"
        tokens_before = episode.tokens_used
        report = self.last_report = self._act(holder, actions.get(holder))
        self._count(holder, report, episode.tokens_used - tokens_before)
        rewards = dict.fromkeys(self.agents, 0.0)
        rewards[holder] += self.reward_config.step_reward(report.correct)
        terminated = report.terminal
        truncated = not terminated and (
            episode.calls >= self.max_cycles
            or (self.max_invalid_calls is not None and episode.invalid_calls >= self.max_invalid_calls)
        )
        infos = {
            agent: self._info(agent, report if agent == holder else None, out_of_turn.get(agent))
            for agent in self.agents
        }
        if terminated or truncated:
            episode.ended = True
            outcome = self.scenario.grade(episode.task, episode.world)
            team_metrics = episode.metrics(outcome)
            final = self.reward_config.final_reward(
                outcome.score, outcome.success, team_metrics["cost_reduction"], team_metrics["time_savings"]
            )
            for agent in self.agents:
                rewards[agent] += final
                infos[agent]["metrics"] = self.agent_metrics(agent, outcome.success, outcome.score)
                infos[agent]["team_metrics"] = dict(team_metrics)
                infos[agent]["outcome"] = {"success": outcome.success, "score": outcome.score, "reason": outcome.reason}
        observations = {agent: self._observe(agent) for agent in self.agents}
        terminations = dict.fromkeys(self.agents, bool(terminated))
        truncations = dict.fromkeys(self.agents, bool(truncated))
        if terminated or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self.episode is not None:
            return f"HOLDER {self.holder}\n\n{self.episode.observation()}"
        return None

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------ observations
    def action_mask(self, agent: str) -> tuple[np.ndarray, ...]:
        """``agent``'s per-dimension masks (int8), the form ``MultiDiscrete.sample(mask)`` reads.

        The holder: the tools it holds, and per argument slot the entity rows that some tool
        it holds takes there (slots beyond a tool's arity allow row 0). A waiting agent: all
        zeros (no action is legal; it sends None).
        """
        episode = self.episode
        assert episode is not None, "reset the environment first"
        if agent != self.holder:
            return tuple(np.zeros(int(n), dtype=np.int8) for n in self.nvec)
        held = self._tool_rows[agent]
        argument = episode.argument_mask()[held]
        slots = [argument[:, k, :].any(axis=0) for k in range(argument.shape[1])]
        return tuple(mask.astype(np.int8) for mask in (held, *slots))

    def _observe(self, agent: str) -> dict[str, Any]:
        episode = self.episode
        assert episode is not None
        holder = self.holder
        text = f"{self._headers[agent]}\n\n{episode.observation()}" if agent == holder else self._waiting_text(agent, holder)
        observation: dict[str, Any] = {"text": text}
        if self.action_mode == "structured":
            observation["action_mask"] = self.action_mask(agent)
        return observation

    @staticmethod
    def _waiting_text(agent: str, holder: str) -> str:
        return f"AGENT {agent}: waiting; the ticket is with {holder}. Send no action."

    # ------------------------------------------------------------ acting
    def _act(self, holder: str, action: Any) -> CallReport:
        episode = self.episode
        assert episode is not None
        allowed = self.scenario.holdings[holder]
        if action is None:
            report = episode.reject("(no action)", f"{holder} holds the ticket and must act, but sent no action")
        elif self.action_mode == "text":
            report = episode.call_text(action, allowed)
        else:
            space = self._action_spaces[holder]
            try:
                inside = space.contains(action)
            except Exception:  # an odd object (ragged list, ...) is simply outside the space
                inside = False
            if inside:
                report = episode.call_structured(np.asarray(action, dtype=np.int64), allowed)
            else:
                written = repr(action)[:MAX_ECHO_CHARS]
                report = episode.reject(written, f"action {written} is outside the action space {space}: expected "
                                        f"{len(self.nvec)} integers, the tool in [0, {self.nvec[0]}) and entity rows in [0, {self.nvec[1]})")
        episode.messages[-2]["name"] = holder  # every turn adds (assistant, result): name who acted
        return report

    def _count(self, agent: str, report: CallReport, tokens: int) -> None:
        stats = self.stats[agent]
        stats.turns += 1
        stats.correct_calls += report.correct
        stats.invalid_calls += not report.valid
        stats.handoffs += report.ok and report.call is not None and report.call.name == HANDOFF
        stats.tokens_used += tokens

    # ------------------------------------------------------------ infos
    def _world(self) -> TeamWorld:
        assert self.episode is not None, "reset the environment first"
        return self.episode.world

    def _info(self, agent: str, report: CallReport | None, out_of_turn: str | None) -> dict[str, Any]:
        episode = self.episode
        assert episode is not None
        info: dict[str, Any] = {
            "task_id": episode.task.task_id,
            "unit_id": episode.unit_id,
            "cycle": episode.calls,
            "holder": self.holder,
            "acted": report is not None,
            "tool_call": None,
            "valid": out_of_turn is None,
            "correct": False,
            "error": out_of_turn,
            "tokens_used": self.stats[agent].tokens_used,
            "team_tokens_used": episode.tokens_used,
            "messages": list(episode.messages),
        }
        if report is not None:
            call = report.call
            info.update(
                tool_call=None if call is None else {"name": call.name, "arguments": call.arguments},
                valid=report.valid,
                correct=report.correct,
                error=report.error,
            )
            if report.parse is not None:
                info["parse"] = report.parse
        return info

    def agent_metrics(self, agent: str, success: bool, score: float) -> dict[str, float]:
        """``agent``'s episode metrics: the team's ``success`` and ``score`` and its own
        ``tool_reliability`` (correct calls / its calls; 0 with no calls), ``turns``,
        ``correct_calls``, ``invalid_calls``, ``handoffs``, ``tokens_used``, ``out_of_turn_actions``."""
        stats = self.stats[agent]
        counts = {key: float(value) for key, value in asdict(stats).items()}
        reliability = stats.correct_calls / stats.turns if stats.turns else 0.0
        return {"success": float(success), "score": float(score), "tool_reliability": reliability, **counts}
