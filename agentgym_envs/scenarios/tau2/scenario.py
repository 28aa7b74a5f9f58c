"""The tau2-bench domains as :class:`~agentgym_envs.core.Scenario` subclasses
(the environments, documented, are in :mod:`.env`): data, tasks (real or generated), the
simulated user, the entity table, grading and the scripted expert."""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, ClassVar

from agentgym_envs.core import (
    GeneratedTasks,
    Outcome,
    RewardConfig,
    Scenario,
    TaskFormatError,
    TaskList,
    TaskSource,
    ToolCall,
)
from agentgym_envs.core.tools import Tool

from .episode_tools import ListBuilder, use_device
from .expert import expert_plan
from .generator import GENERATED_SPLITS, generated_user
from .session import Tau2Session
from .upstream.arguments import check_tool_arguments
from .upstream.domain import Tau2Domain
from .upstream.errors import Tau2FormatError, Tau2MissingDataError
from .upstream.files import domain_dir, find_data_dir
from .upstream.scoring import matches_action, score_episode
from .upstream.tasks import Tau2Task, parse_tasks
from .user import (
    AGENT_MESSAGES,
    ASK_IDENTITY,
    DONE,
    TRANSFER_SUMMARY,
    UserFacts,
    UserSimulator,
    facts_from_instructions,
    goal_key,
    opening_message,
)

SOURCES = ("generated", "real")
POLICY_HEADING = "\n\nPOLICY\n"  # between the ticket and the domain policy in every prompt
USERS = ("rule", "llm")
_ADDRESS_WRITES = ("modify_pending_order_address", "modify_user_address")
_ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")
VALIDATION_EVERY = 3  # from v1, every 3rd of upstream's train tasks (ids sorted as strings) is validation


class Tau2Scenario(Scenario):
    """A tau2 domain as a scenario; subclasses fix the domain."""

    domain: ClassVar[Tau2Domain]
    builders: ClassVar[tuple[ListBuilder, ...]]
    enum_entities: ClassVar[tuple[tuple[str, Any], ...]]
    revealing_reads: ClassVar[Any]
    generator_class: ClassVar[type | None]
    real_kinds: ClassVar[tuple[str, ...]] = ()  # the kinds of the real tasks (their ids' "[kind]" prefix), if they have any
    sources: ClassVar[tuple[str, ...]] = SOURCES  # the first is the default
    identity_question: ClassVar[str] = ASK_IDENTITY
    splits = ("train", "test", "base")
    difficulties = ("real", "generated")
    max_entities = 256
    max_entity_chars = 120
    max_prompt_chars = 12_000
    max_result_chars = 2_000
    max_action_chars = 8_192
    max_turns = 40
    baseline_tokens = 20_000
    baseline_seconds = 600.0
    default_rewards = RewardConfig(mode="outcome")
    flat_capacities: ClassVar[dict[int, int]] = {}  # flat_capacity by version, where it differs from v0's
    flat_holds_from: ClassVar[int | None] = None  # the version from which the flat layout holds rows back (flat_held)
    instructions = (
        "You are a customer-service agent. Follow the policy. Each turn, call one tool; talk to the "
        "customer with the 'respond' tool."
    )

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        source: str | None = None,
        solo: bool = False,
        tool_arguments: str = "strict",
        user_client: Any = None,
        nl_judge: Any = None,
        kinds: Sequence[str] | None = None,
        max_actions: int | None = None,
        version: int = 0,
    ) -> None:
        source = source or self.sources[0]
        if source not in self.sources:
            raise ValueError(f"source must be one of {list(self.sources)} for {self.name}, got {source!r}")
        known = self.generator_class.kinds if source == "generated" else self.real_kinds
        if kinds is not None and not known:
            raise ValueError(f"kinds selects generated tasks (source='generated'), got source={source!r}")
        if kinds is not None and (not kinds or set(kinds) - set(known)):
            raise ValueError(f"kinds must be a non-empty subset of {list(known)}, got {kinds!r}")
        if max_actions is not None and source != "real":
            raise ValueError(f"max_actions selects real tasks (source='real'), got source={source!r}")
        self.kinds, self.max_actions, self.version = kinds, max_actions, version
        self.flat_capacity = self.flat_capacities.get(version, type(self).flat_capacity)
        self.flat_holds = self.flat_holds_from is not None and version >= self.flat_holds_from
        if version >= 1:  # a validation split beside train and test (see :func:`real_split`)
            self.splits = ("train", "validation", "test", "base")
        self._data_dir_arg = data_dir
        self.source, self.solo = source, solo
        self.tool_arguments = check_tool_arguments(tool_arguments)
        self.user_client, self.nl_judge = user_client, nl_judge  # a ChatClient, an NLJudge
        self._openings: dict[str, str] = {}
        if tool_arguments == "upstream":  # the domain tools check their own arguments
            self.tools = tuple(
                replace(tool, checked=False) if tool.name in self.domain.tools_by_name else tool
                for tool in type(self).tools
            )
        self._facts: dict[str, UserFacts] = {}

    # ---- data ----------------------------------------------------------------------------
    @classmethod
    def data_status(cls) -> str:
        try:
            return f"tau2 data from {find_data_dir(cls.domain.name)[1]}"
        except Tau2MissingDataError:
            return "tau2 data missing"

    @cached_property
    def data_dir(self) -> str:
        """The resolved data folder (raises a clear error naming data_dir / TAU2_DATA_DIR)."""
        return str(domain_dir(self.domain.name, self._data_dir_arg).parent)

    @cached_property
    def policy(self) -> str:
        return self.domain.policy(self.data_dir, self.solo)

    @cached_property
    def generator(self) -> Any:
        db = self.domain.new_world(self.data_dir).db
        return self.generator_class(db, self.version)

    @cached_property
    def tools_by_name(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.tools}

    def check_data(self) -> None:
        """Fail now, with a clear error, if the data cannot be read."""
        _ = self.policy
        self.domain.new_world(self.data_dir)

    def task_source(self, split: str) -> TaskSource:
        if self.source == "real":
            if split not in self.splits:
                raise ValueError(f"split must be one of {list(self.splits)}, got {split!r}")
            tasks = real_split(self.domain, split, self.data_dir, self.version)
            return TaskList(tasks_within(tasks, self.max_actions, self.kinds))
        kinds = tuple(self.kinds or self.generator.kinds)
        splits = GENERATED_SPLITS[min(self.version, max(GENERATED_SPLITS))]
        return GeneratedTasks(split, functools.partial(self.generator.generate, kinds=kinds), splits)

    def unit_id(self, task: Tau2Task) -> str:
        """A generated task's user (its ``get_user_details`` call's ``user_id``); the id of a real
        task or of a task file's task."""
        user = generated_user(task) if self.source == "generated" and "facts" in task.user_scenario else None
        return str(task.id) if user is None else user

    def task_from_dict(self, data: dict[str, Any]) -> Tau2Task:
        try:
            (task,) = parse_tasks([data], self.domain.name, self.domain.all_tools, functions=self.domain.functions)
        except Tau2FormatError as exc:
            raise TaskFormatError(str(exc)) from None
        return task

    # ---- episodes -------------------------------------------------------------------------
    def new_world(self, task: Tau2Task) -> Tau2Session:
        start = self.domain.new_world(self.data_dir, task=task)
        db = start.db
        criteria = task.evaluation_criteria
        all_actions = list(criteria.actions or ()) if criteria else []
        actions = [a for a in all_actions if a.requestor == "assistant"]
        tools = self.domain.all_tools
        writes = [goal_key(a.name, a.arguments) for a in all_actions if a.name in tools and tools[a.name].kind == "write"]
        facts = self.facts(task, db)
        user: Any
        if self.user_client is None:
            user = UserSimulator(
                facts=facts,
                reason=_instruction(task, "reason_for_call"),
                goal_writes=Counter(writes),
                goal_info=tuple(criteria.communicate_info or ()) if criteria else (),
                seed=f"{self.domain.name}/{task.id}",
                device_tools=frozenset(self.domain.user_tools_by_name),
            )
            opening = opening_message(task.id, _instruction(task, "reason_for_call"))
        else:
            from .llm_user import LLMUser, user_scenario_text

            device_tools = [tool.schema() for tool in self.domain.user_tools]
            user = LLMUser(self.user_client, user_scenario_text(task.user_scenario),
                           tools=None if self.solo or not device_tools else device_tools)
            opening = None
        builders = {b.kind: b for b in self.builders}
        reads = self.revealing_reads(actions, db, facts)
        plan = expert_plan(task, self.tools_by_name, builders, self.solo, reads, self.identity_question)
        session = Tau2Session(
            db=db, tool_arguments=self.tool_arguments, user_db=start.user_db, user=user, plan=plan,
            reference_writes=frozenset(writes), reference_actions=tuple(actions),
        )
        if self.domain.user_tools and not self.solo:
            user.device = functools.partial(use_device, session, self.domain)
        if opening is None:
            opening = user.opening()
        self._openings[task.id] = opening
        session.transcript.append(("user", opening))
        return session

    def facts(self, task: Tau2Task, db: Any) -> UserFacts:
        """What the task's user knows: the generator's facts, or those read from a real
        task's instructions (plus the new address of its reference address change)."""
        if "facts" in task.user_scenario:
            return UserFacts.from_dict(task.user_scenario["facts"])
        if task.id not in self._facts:
            tables = db.TABLES
            facts = facts_from_instructions(
                task.user_scenario.get("instructions"),
                db.table("orders") if "orders" in tables else (),
                db.table("reservations") if "reservations" in tables else (),
            )
            text = str(task.user_scenario.get("instructions")).lower()
            for action in (task.evaluation_criteria.actions or ()) if task.evaluation_criteria else ():
                if action.name in _ADDRESS_WRITES:
                    address = {k: action.arguments[k] for k in _ADDRESS_FIELDS if k in action.arguments}
                    facts = replace(facts, new_address=address)
                facts = _stated_arguments(facts, action.arguments, text)
                for passenger in action.arguments.get("passengers") or ():
                    if isinstance(passenger, dict) and str(passenger.get("first_name", "")).lower() in text:
                        facts = replace(facts, passengers=(*facts.passengers, passenger))
            self._facts[task.id] = facts
        return self._facts[task.id]

    def prompt(self, task: Tau2Task) -> str:
        if self.solo:
            lines = [f"{key.replace('_', ' ').capitalize()}: {_instruction(task, key)}"
                     for key in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
                     if _instruction(task, key)]
            ticket = "TICKET (act on the customer's behalf; the customer's full request):\n" + "\n".join(lines)
        else:
            opening = self._openings.pop(task.id, None)  # the opening of the episode new_world began
            if opening is None:
                opening = opening_message(task.id, _instruction(task, "reason_for_call"))
            ticket = f"CUSTOMER: {opening}"
        return f"{ticket}{POLICY_HEADING}{self.policy}"

    def request_text(self, prompt: str) -> str:
        """The ticket, without the domain policy every task shares."""
        return prompt.split(POLICY_HEADING, 1)[0]

    def initial_entities(self, task: Tau2Task) -> Iterable[tuple[str, Any]]:
        yield from (("message", m) for m in AGENT_MESSAGES)
        yield "text", TRANSFER_SUMMARY
        yield from self.enum_entities
        yield from ((b.kind, []) for b in self.builders)
        if self.solo:
            yield from self.facts(task, self.domain.new_world(self.data_dir).db).entities()

    def judge_call(self, task: Tau2Task, world: Tau2Session, call: ToolCall) -> bool:
        """A write is right if it is one of the task's reference writes; anything else that ran
        (reads, messages, builders) is harmless, as in upstream's scoring."""
        tool = self.domain.all_tools.get(call.name)
        if tool is not None and tool.kind == "write":
            return goal_key(call.name, call.arguments) in world.reference_writes
        return True

    def progress(self, task: Tau2Task, world: Tau2Session, correct_calls: int) -> float:
        """The share of the task's reference calls of the agent (reads and the write; upstream's
        evaluation actions, matched as its ACTION check matches them) made so far. Every read is a
        correct call (:meth:`judge_call`), so the default (correct calls over the expert's) would
        pay any call. In a dual-control domain (telecom) the goal is the user's device, reached by
        the user's actions, and the agent's reference calls do not measure it: the default there."""
        if self.domain.user_tools or not world.reference_actions:
            return super().progress(task, world, correct_calls)
        agent_calls = [call for call in world.calls if len(call) == 2]
        made = sum(any(matches_action(action, *call) for call in agent_calls) for action in world.reference_actions)
        return made / len(world.reference_actions)

    def finished(self, task: Tau2Task, world: Tau2Session) -> bool:
        return world.user is not None and world.user.stopped

    def grade(self, task: Tau2Task, world: Tau2Session) -> Outcome:
        score = score_episode(
            task, world.calls, world.agent_messages, data_dir=self.data_dir, ended_normally=world.ended_normally,
            with_hashes=False, tool_arguments=self.tool_arguments, nl_judge=self.nl_judge, transcript=world.transcript,
        )
        world.score = score
        reason = f"reward {score.reward:g} on {'x'.join(score.reward_basis) or 'nothing'}"
        for error in (world.user_error, score.judge_error):
            if error is not None:
                reason += f"; {error}"
        if score.not_evaluated:
            reason += f"; not evaluated offline: {', '.join(score.not_evaluated)}"
        if score.note:
            reason += f"; {score.note}"
        details = {"components": dict(score.components), "not_evaluated": list(score.not_evaluated),
                   "nl_checks": [list(check) for check in score.nl_checks]}
        return Outcome(score.success, score.reward, reason, details)

    def extra_metrics(self, task: Tau2Task, world: Tau2Session) -> dict[str, float]:
        score = world.score
        components = score.components if score is not None else {}
        return {
            "db": float(components.get("DB", 0.0)),
            "communicate": float(components.get("COMMUNICATE", 0.0)),
            "nl_assertion": float(components.get("NL_ASSERTION", 0.0)),
            "nl_not_evaluated": float(score is not None and "NL_ASSERTION" in score.not_evaluated),
            "endpoint_error": float(world.user_error is not None or (score is not None and score.judge_error is not None)),
        }

    def expert_call(self, task: Tau2Task, world: Tau2Session, history: Sequence[ToolCall]) -> ToolCall:
        """The next call of the expert's plan (:mod:`.expert`); one plan call per step."""
        step = world.agent_calls
        return world.plan[step] if step < len(world.plan) else ToolCall("respond", {"message": DONE})


def real_split(domain: Tau2Domain, split: str, data_dir: str, version: int) -> list[Tau2Task]:
    """Upstream's tasks of ``split`` at ``version``: ``-v0`` upstream's own splits; from ``-v1``
    every :data:`VALIDATION_EVERY`-th of upstream's train tasks (ids sorted as strings, from the
    first) is ``validation`` and train the rest, upstream's test and base untouched."""
    if version < 1 or split not in ("train", "validation"):
        return domain.load_tasks(split, data_dir)
    train = sorted(domain.load_tasks("train", data_dir), key=lambda task: str(task.id))
    held = {str(task.id) for task in train[::VALIDATION_EVERY]}
    return [task for task in train if (str(task.id) in held) == (split == "validation")]


def reference_actions(task: Tau2Task) -> int:
    """How many reference calls (the agent's and the customer's) a task's evaluation lists."""
    criteria = task.evaluation_criteria
    return len(criteria.actions or ()) if criteria else 0


def tasks_within(tasks: list[Tau2Task], max_actions: int | None, kinds: Sequence[str] | None = None) -> list[Tau2Task]:
    """The tasks with at most ``max_actions`` reference calls (any number for None) of one of
    ``kinds`` (a real task's kind: its id's ``[kind]`` prefix; any kind for None)."""
    return [task for task in tasks if (max_actions is None or reference_actions(task) <= max_actions)
            and (kinds is None or real_kind(task.id) in kinds)]


def real_kind(task_id: str) -> str:
    """A real task's kind, its id's ``[kind]`` prefix (telecom: ``[service_issue]...``); "" without one."""
    return task_id[1 : task_id.index("]")] if task_id.startswith("[") and "]" in task_id else ""


def _stated_arguments(facts: UserFacts, arguments: dict[str, Any], text: str) -> UserFacts:
    """``facts`` plus the identifying arguments of a reference call whose values the
    instructions state word for word (phrasings the regular expressions miss)."""
    found: dict[str, Any] = {}
    for name in ("first_name", "last_name", "zip", "email", "user_id", "date"):
        value = arguments.get(name)
        if isinstance(value, str) and getattr(facts, name) is None and value.lower() in text:
            found[name] = value
    for name, field in (("order_id", "order_ids"), ("reservation_id", "reservation_ids")):
        value = arguments.get(name)
        if isinstance(value, str) and value.lower().lstrip("#") in text and value not in getattr(facts, field):
            found[field] = (*getattr(facts, field), value)
    return replace(facts, **found) if found else facts


def _instruction(task: Tau2Task, key: str) -> str:
    instructions = task.user_scenario.get("instructions")
    if isinstance(instructions, dict):
        return str(instructions.get(key) or "")
    return str(instructions) if key == "reason_for_call" else ""
