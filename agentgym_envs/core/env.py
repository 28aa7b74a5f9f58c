"""ToolUseEnv: the gymnasium environment every tool-use scenario runs in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..observe import tracing
from .arguments import check_limits, check_path
from .episode import CallReport, Episode, max_observation_chars
from .features import FeatureEncoder
from .rewards import RewardConfig
from .scenario import Scenario
from .tasks import TaskList, TaskSource, load_task_file
from .text import text_space

ACTION_MODES = ("structured", "text")
OBSERVATIONS = ("text", "features")


def make_reward_config(base: RewardConfig, given: RewardConfig | dict[str, Any] | None) -> RewardConfig:
    """A scenario's default rewards, overridden by a RewardConfig or a dict of its fields."""
    if given is None:
        return base
    if isinstance(given, RewardConfig):
        return given
    if not isinstance(given, dict):
        raise ValueError(f"reward_config must be None, a RewardConfig or a dict of its fields, got {given!r}")
    unknown = set(given) - set(RewardConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown reward_config field(s) {sorted(unknown)}; fields: {list(RewardConfig.__dataclass_fields__)}")
    return replace(base, **given)


def check_modes(action_mode: str, render_mode: str | None, render_modes: list[str]) -> None:
    """Reject an unknown action or render mode with a message listing the valid ones."""
    if action_mode not in ACTION_MODES:
        raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
    if render_mode not in (None, *render_modes):
        raise ValueError(f"render_mode must be None or one of {render_modes}, got {render_mode!r}")


def make_task_source(scenario: Scenario, split: str, task_file: str | Path | None) -> TaskSource:
    """The user's task file if given (checked at once), else the scenario's ``split``."""
    check_path("task_file", task_file)
    if task_file is not None:
        return TaskList(load_task_file(task_file, scenario.task_from_dict))
    return scenario.task_source(split)


class ToolUseEnv(gym.Env[Any, Any]):
    """An agent resolves a task by calling tools, one call per step.

    Observation (``observation``): ``"text"`` (default), ``Text``: the task, the conversation
    so far (trimmed from the middle) and a numbered entity table; ``"features"``,
    ``Box(float32)``: what each tool was called with, the turn, whether the last call was
    valid and correct, the filled rows (kind one-hot, hashed text), the task and the last
    result as hashed bags of words (:class:`~agentgym_envs.core.features.FeatureEncoder`), a
    vector SB3's ``MlpPolicy`` trains on as it is. Actions (``action_mode``):

    - ``"structured"``: ``MultiDiscrete([n_tools, n_entities, ..., n_entities])``, the tool
      then one entity-table row per argument. The masks admit only valid calls:
      :meth:`action_masks` per dimension (MaskablePPO's form), :meth:`call_masks` for
      autoregressive policies (the tool, then its arguments: our own PPO's choice), and
      :class:`~agentgym_envs.wrappers.FlatDiscreteAction` one joint mask over a flat
      ``Discrete`` (SB3's MaskablePPO and DQN); ``mask_repeats`` also leaves out repeats.
    - ``"text"``: one tool call as language models write it (JSON, OpenAI's message or tool
      call as a string or a dict, a fenced block in prose, Hermes ``<tool_call>`` tags, a
      Python-style ``name(arg=value)``; see :mod:`~agentgym_envs.core.parsing`). Anything
      malformed is an error result, never an exception.

    Rewards (``reward_config``, :class:`RewardConfig`; each scenario sets its default, ``"shaped"``
    but for tau2's ``"outcome"``): ``"shaped"`` (per-call tool-choice reward plus the outcome), ``"outcome"`` (the score at the end), or
    ``"potential"`` (progress-based shaping that leaves the optimal policy unchanged, plus the
    score at the end).

    Each environment's own docstring (``agentgym info <env>``) documents it in full.

    ``info`` keys, every step: ``task_id``, ``unit_id`` (the task's unit of generalisation,
    :meth:`Scenario.unit_id`), ``turn``, ``tool_call`` (the parsed
    :class:`~agentgym_envs.core.parsing.ToolCall`, or None), ``valid``, ``correct``, ``error`` (str or None),
    ``tokens_used``, ``messages`` (OpenAI chat format); structured mode also
    ``action_mask`` (as :meth:`action_masks`) and ``argument_mask`` (``[tool, slot,
    entity]``, for autoregressive policies); text mode, and structured mode under
    :class:`~agentgym_envs.wrappers.FlatDiscreteAction` (whose ``info`` holds its joint mask in
    the masks' place), ``parse`` (the form the call was written in, and the repairs it needed). At the episode's end: ``metrics`` (``success``,
    ``score``, ``tool_reliability``, ``tokens_used``, ``cost_reduction``, ``time_savings``,
    ``turns``, ``invalid_calls``, ... ) and ``outcome`` (``success``, ``score``, ``reason``).

    Args:
        scenario: the domain.
        action_mode: ``"structured"`` or ``"text"``.
        split: which generated tasks ``reset`` draws from (``"train"``, ``"validation"`` where
            the scenario has it, or ``"test"``).
        task_file: a JSONL file of the user's own tasks (overrides ``split``).
        reward_config: a :class:`RewardConfig` or a dict overriding the scenario's defaults.
        max_turns: tool calls before truncation (scenario default when None).
        max_invalid_calls: truncate after this many invalid calls (None: never).
        history_turns: how many recent turns the observation shows.
        render_mode: ``"ansi"`` or None.
        mask_repeats: the masks also leave out calls identical to one already made (a
            repeat is never judged correct); see :meth:`action_masks`.
        observation: ``"text"`` or ``"features"``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}
    observations = OBSERVATIONS
    """The observations this env offers (``observation=``)."""
    info_masks = True
    """Whether ``info`` holds the per-dimension masks in structured mode (:class:`~agentgym_envs.wrappers.FlatDiscreteAction`,
    whose ``info`` holds its joint mask in their place, turns it off for the env under it)."""

    def __init__(
        self,
        scenario: Scenario,
        action_mode: str = "structured",
        split: str = "train",
        task_file: str | Path | None = None,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_turns: int | None = None,
        max_invalid_calls: int | None = None,
        history_turns: int = 8,
        render_mode: str | None = None,
        mask_repeats: bool = False,
        observation: str = "text",
    ) -> None:
        check_modes(action_mode, render_mode, self.metadata["render_modes"])
        check_limits(mask_repeats, history_turns, max_turns=max_turns, max_invalid_calls=max_invalid_calls)
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        self.scenario = scenario
        self.action_mode = action_mode
        self.split = split
        self.tasks = make_task_source(scenario, split, task_file)
        self.reward_config = make_reward_config(scenario.default_rewards, reward_config)
        self.max_turns = max_turns or scenario.max_turns
        self.max_invalid_calls = max_invalid_calls
        self.history_turns = history_turns
        self.render_mode = render_mode
        self.mask_repeats = mask_repeats
        self.max_entities = scenario.max_entities
        self.flat_capacity = scenario.flat_capacity
        self.tool_schemas: list[dict[str, Any]] = [tool.schema() for tool in scenario.tools]
        self.tool_names: list[str] = [tool.name for tool in scenario.tools]
        self.tool_arities: list[int] = [len(tool.args) for tool in scenario.tools]
        self.training_reward: dict[str, Any] = dict(scenario.training_rewards)
        n_slots = max((len(t.args) for t in scenario.tools), default=0)
        self._bounds = [len(scenario.tools)] + [scenario.max_entities] * n_slots
        if action_mode == "structured":
            self.action_space = spaces.MultiDiscrete(self._bounds)
        else:
            self.action_space = text_space(scenario.max_action_chars)
        self.features = FeatureEncoder(scenario, self.max_turns) if observation == "features" else None
        if self.features is not None:
            self.observation_space = self.features.space
        else:
            self.observation_space = text_space(max_observation_chars(scenario, history_turns))
        self.episode: Episode | None = None
        self._potential = 0.0  # Phi of the current state, in reward mode "potential"
        self.episode_trace: tracing.EpisodeTrace | None = None  # the episode's spans while tracing is on

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode: ``options={"task_id": ...}`` picks a task, else the seed draws one."""
        super().reset(seed=seed)
        if options and "task_id" in options:
            task = self.tasks.get(options["task_id"])
        else:
            task = self.tasks.sample(self.np_random)
        self.episode = Episode(self.scenario, task, self.history_turns, self.mask_repeats)
        self.episode_trace = tracing.start_episode(getattr(self.spec, "id", type(self).__name__), self.split, seed,
                                                   task.task_id, self.episode_trace)
        self._potential = self.episode.progress() if self.reward_config.mode == "potential" else 0.0
        observation = self.episode.observation() if self.features is None else self.features.reset(self.episode)
        return observation, self._info(None)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Run one tool call (inside a tool-call span while tracing is on)."""
        if self.episode_trace is not None:
            return self.episode_trace.step(self._step, action)
        return self._step(action)

    def close(self) -> None:
        if self.episode_trace is not None:
            self.episode_trace.abandon()
        super().close()

    def _step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        episode = self.episode
        if episode is None or episode.ended:
            raise RuntimeError("the episode has ended (or never started): call reset() before step()")
        if self.action_mode == "structured":
            report = episode.call_structured(self._checked_structured(action))
        else:
            report = episode.call_text(action)
        reward = self.reward_config.step_reward(report.correct)
        terminated = report.terminal
        truncated = not terminated and (
            episode.calls >= self.max_turns
            or (self.max_invalid_calls is not None and episode.invalid_calls >= self.max_invalid_calls)
        )
        info = self._info(report)
        if self.reward_config.mode == "potential":
            potential = 0.0 if terminated or truncated else episode.progress()
            reward += self.reward_config.potential_reward(self._potential, potential)
            self._potential = potential
        if terminated or truncated:
            episode.ended = True
            outcome = self.scenario.grade(episode.task, episode.world)
            metrics = episode.metrics(outcome)
            reward += self.reward_config.final_reward(
                outcome.score, outcome.success, metrics["cost_reduction"], metrics["time_savings"]
            )
            info["metrics"] = metrics
            info["outcome"] = {"success": outcome.success, "score": outcome.score, "reason": outcome.reason}
        observation = episode.observation() if self.features is None else self.features.step(episode, report)
        return observation, float(reward), terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self.episode is not None:
            return self.episode.observation()
        return None

    def action_masks(self) -> np.ndarray:
        """Boolean masks of every ``MultiDiscrete`` dimension, concatenated (MaskablePPO's form).

        The tool dimension allows the tools whose every argument has a filled row of its kind
        (with ``mask_repeats``, also some combination not yet called); each argument dimension
        allows the filled rows that one of those tools takes in that position. Masks per
        dimension cannot say which rows go with which tool: for calls that are valid as a
        whole, use :meth:`call_masks` (an autoregressive policy: the tool, then its arguments)
        or :class:`~agentgym_envs.wrappers.FlatDiscreteAction` (one joint mask).
        """
        return self._live_episode().action_mask().copy()

    def call_masks(self, repeats: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(tools, arguments)``: the tools that can be called now (``[n_tools]``) and, per
        tool and argument slot, the rows that fit (``[n_tools, n_slots, max_entities]``, as
        ``info["argument_mask"]``). A tool and one allowed row per argument is a valid call;
        with ``mask_repeats`` a one-argument tool's called rows are out, but a call of several
        arguments can only be ruled out as a whole (the flat wrapper's joint mask does it).
        ``repeats=False``: the masks with no call left out for having been made, read-only (the
        flat wrapper's starting point, which change only when rows are added)."""
        episode = self._live_episode()
        if not repeats:
            return episode.kind_masks()
        return episode.open_tools().copy(), episode.argument_mask().copy()

    def _live_episode(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("call reset() before asking for masks")
        if self.action_mode != "structured":
            raise RuntimeError("masks exist in action_mode='structured' only")
        return self.episode

    def sample_mask(self) -> tuple[np.ndarray, ...]:
        """The same masks split per dimension as ``int8`` arrays, the form Gymnasium's
        ``MultiDiscrete.sample`` takes: ``env.action_space.sample(mask=env.unwrapped.sample_mask())``."""
        flat = self.action_masks()
        return tuple(np.split(flat.astype(np.int8), np.cumsum(self._bounds)[:-1]))

    # ------------------------------------------------------------------ helpers
    def _checked_structured(self, action: Any) -> list[int]:
        if isinstance(action, np.ndarray) and action.dtype.kind in "iu" and action.shape == (len(self._bounds),):
            values = action.tolist()  # Python ints: only their range is left to check
            if all(0 <= v < n for v, n in zip(values, self._bounds)):
                return values
        elif (
            isinstance(action, (list, tuple))
            and len(action) == len(self._bounds)
            and all(type(v) is int or isinstance(v, np.integer) for v in action)
            and all(0 <= v < n for v, n in zip(action, self._bounds))
        ):
            return [int(v) for v in action]
        raise ValueError(
            f"action {action!r} is outside the action space {self.action_space}: expected "
            f"{len(self._bounds)} integers, the tool in [0, {self._bounds[0]}) and entity slots in [0, {self.scenario.max_entities})"
        )

    def _info(self, report: CallReport | None) -> dict[str, Any]:
        episode = self.episode
        assert episode is not None
        info: dict[str, Any] = {
            "task_id": episode.task.task_id,
            "unit_id": episode.unit_id,
            "turn": episode.calls,
            "tool_call": None if report is None else report.call,
            "valid": True if report is None else report.valid,
            "correct": False if report is None else report.correct,
            "error": None if report is None else report.error,
            "tokens_used": episode.tokens_used,
            "messages": list(episode.messages),
        }
        if self.action_mode == "structured" and self.info_masks:
            info["action_mask"] = episode.action_mask().copy()  # infos must not share objects
            info["argument_mask"] = episode.argument_mask().copy()
        else:
            info["parse"] = report.parse if report is not None else None
        return info
