"""The scenario interface: what a domain supplies to the generic tool-use machinery."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .parsing import ToolCall
from .rewards import RewardConfig
from .tasks import TaskSource
from .tools import Tool


@dataclass(frozen=True)
class Outcome:
    """How an episode ended: ``score`` in [0, 1] and whether it counts as a success."""

    success: bool
    score: float
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class Scenario(ABC):
    """A domain: tasks, per-episode world state, tools, a grader and a scripted expert.

    A scenario knows nothing of gymnasium; :class:`~agentgym_envs.core.env.ToolUseEnv`
    (and the multi-agent environments) run it.
    """

    name: ClassVar[str]
    env_id: ClassVar[str]
    description: ClassVar[str]
    tools: ClassVar[tuple[Tool, ...]]
    splits: ClassVar[tuple[str, ...]] = ("train", "test")
    difficulties: ClassVar[tuple[str, ...]] = ("easy", "medium", "hard")
    max_entities: ClassVar[int] = 32
    max_entity_chars: ClassVar[int] = 120
    max_prompt_chars: ClassVar[int] = 2_000
    max_result_chars: ClassVar[int] = 800
    max_action_chars: ClassVar[int] = 4_096
    max_turns: ClassVar[int] = 10
    baseline_tokens: ClassVar[int] = 500
    baseline_seconds: ClassVar[float] = 240.0
    success_criteria: ClassVar[dict[str, float]] = {}
    default_rewards: ClassVar[RewardConfig] = RewardConfig()
    gives_verdicts: ClassVar[bool] = False
    """Whether :meth:`verdict` gives any (the features then hold a verdict per entity row)."""
    gives_hints: ClassVar[bool] = False
    """Whether :meth:`hint` may give one (the features then hold it in a block of its own)."""
    flat_capacity: ClassVar[int] = 64
    """The calls per tool that :class:`~agentgym_envs.wrappers.FlatDiscreteAction`'s admissible
    layout numbers by default: enough for the expert's every call at each level where a
    capacity can be (``benchmarks/results/admissible_actions.md``)."""
    flat_holds: ClassVar[bool] = False
    """Whether the admissible layout holds back some entity rows until the episode names them
    (:meth:`flat_held`, :meth:`flat_names`, :class:`~agentgym_envs.core.flat_rows.FlatRows`)."""
    training_rewards: ClassVar[dict[str, Any]] = {}
    """``reward_config`` fields that trainers train on, over :attr:`default_rewards` (empty: the
    scenario's own reward); evaluation always uses :attr:`default_rewards`."""
    instructions: ClassVar[str] = ""
    static_entities: ClassVar[tuple[tuple[str, Any], ...]] = ()
    """``(kind, value)`` rows every episode's entity table starts with (enum values...),
    before :meth:`initial_entities`; built once and copied per episode."""

    @abstractmethod
    def task_source(self, split: str) -> TaskSource:
        """The tasks of ``split``."""

    def unit_id(self, task: Any) -> str:
        """The unit of generalisation ``task`` is drawn from (a phrasing or problem template, a
        coding problem, a tau2 user or real task): the splits are disjoint in it, and benchmarks
        resample it. Default: the task itself."""
        return str(task.task_id)

    @abstractmethod
    def task_from_dict(self, data: dict[str, Any]) -> Any:
        """Parse one task of a user's JSONL task file (raise ``TaskFormatError``)."""

    @abstractmethod
    def new_world(self, task: Any) -> Any:
        """A fresh, mutable world state for one episode of ``task``."""

    @abstractmethod
    def prompt(self, task: Any) -> str:
        """The opening text the agent reads (the ticket, the problem statement)."""

    def request_text(self, prompt: str) -> str:
        """The part of an opening ``prompt`` that tells one task from another: the features
        observation hashes it. By default the whole prompt; a scenario whose prompt carries a
        long text shared by every task (a policy) returns the rest, since a bag of words
        normalised over that text would leave the request a vanishing weight."""
        return prompt

    @abstractmethod
    def initial_entities(self, task: Any) -> Iterable[tuple[str, Any]]:
        """``(kind, value)`` rows of this task, added after :attr:`static_entities`."""

    @abstractmethod
    def judge_call(self, task: Any, world: Any, call: ToolCall) -> bool:
        """Whether a call that ran without error was the right tool choice for the task."""

    @abstractmethod
    def grade(self, task: Any, world: Any) -> Outcome:
        """Judge the episode on the final world state."""

    @abstractmethod
    def expert_call(self, task: Any, world: Any, history: Sequence[ToolCall]) -> ToolCall:
        """The scripted expert's next call, given the calls that ran without error so far.

        The expert is an oracle: it may read the task and the world.
        """

    @classmethod
    def data_status(cls) -> str:
        """Where the scenario's external data comes from, "missing" when it is not found,
        "" when the scenario needs none."""
        return ""

    def flat_held(self, kind: str, value: Any) -> bool:
        """Where :attr:`flat_holds`: whether the flat admissible layout numbers no call taking this
        initial entity row until a result reveals it or a text of the episode names it
        (:meth:`flat_names`). Default: none is held."""
        return False

    def flat_names(self, text: str, tool: str | None) -> Iterable[tuple[str, Any]]:
        """Where :attr:`flat_holds`: the ``(kind, value)`` entities that ``text`` names, the
        request (``tool`` None) or a result of ``tool``. Default: none."""
        return ()

    def finished(self, task: Any, world: Any) -> bool:
        """Whether the world ended the episode by itself (besides terminal tools)."""
        return False

    def hint(self, task: Any) -> str:
        """The tag a level writes into the task's text for the agent (CustomerSupport's
        ``Category:`` line), or "" (none; the default). Where :attr:`gives_hints`, the features
        observation hashes it apart from the task's other words, so that a stock MLP reads it
        whatever the rest of the wording."""
        return ""

    def verdict(self, task: Any, world: Any, call: ToolCall) -> bool | None:
        """What the result of ``call`` (just run without error) says about the entity rows it
        named, as an agent reading it would tell: True (good: a program passed every visible
        example), False (bad: it failed one), None (nothing; the default). Where
        :attr:`gives_verdicts`, the features observation keeps each row's last verdict in view."""
        return None

    def progress(self, task: Any, world: Any, correct_calls: int) -> float | None:
        """The task's progress in [0, 1] toward its goal, the potential of
        ``RewardConfig(mode="potential")``, or None (the default): the episode engine then
        measures it as the correct calls made so far (judged by :meth:`judge_call`) over those of
        the expert's plan (:func:`~agentgym_envs.core.episode.expert_plan_length`). Override it
        where the world says it cheaply (the goal's effects present)."""
        return None

    def extra_metrics(self, task: Any, world: Any) -> dict[str, float]:
        """Scenario-specific metrics added to ``info["metrics"]`` at the episode's end."""
        return {}
