"""Scoring an episode as tau2's evaluator does, offline.

- DB: the task's reference actions are replayed on a fresh database (an action that errors
  is skipped), the agent's WRITE calls on another; the component is 1 if the two hashes
  are equal. It is 1 without replay when the task has neither actions nor env assertions.
- COMMUNICATE: every ``communicate_info`` string must occur, case-insensitively, in one of
  the agent's messages to the user with its commas removed.
- NL_ASSERTION: with an ``nl_judge`` (:class:`~.llm_user.NLJudge`), 1 if the judge finds
  every assertion met in the transcript; it runs only when NL_ASSERTION is in the reward
  basis, as in upstream's default mode. A judge that fails gives 0 and ``judge_error``.
- Without a judge NL_ASSERTION, and always ACTION / ENV_ASSERTION (unused by these domains):
  when one of them is in the reward basis with something to check, it is reported in
  ``not_evaluated`` and left out of the reward.
- The reward is the product of the evaluated components of the task's reward basis.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .domain import DataDir, Tau2Domain, get_domain
from .tasks import Tau2Action, Tau2Task
from .toolkit import Tau2World

ToolCallLike = tuple[str, Mapping[str, Any]]
NLJudgeLike = Callable[[Sequence[str], Sequence[tuple[str, str]]], Any]  # -> llm_user.Judgement


@dataclass(frozen=True)
class CommunicateCheck:
    """Whether one ``communicate_info`` string was found in the agent's messages."""

    info: str
    met: bool


@dataclass(frozen=True)
class Tau2Score:
    """The result of scoring one episode.

    ``components`` holds every component scored offline (whether in the reward basis or
    not); ``not_evaluated`` the reward-basis components that could not be scored offline.
    ``reward`` is the product over the reward basis of the evaluated components: with
    ``not_evaluated`` non-empty it is an upper bound of upstream's reward.
    """

    reward: float
    reward_basis: tuple[str, ...]
    components: dict[str, float]
    not_evaluated: tuple[str, ...] = ()
    db_hash: str | None = None
    gold_db_hash: str | None = None
    communicate_checks: tuple[CommunicateCheck, ...] = ()
    gold_errors: tuple[str, ...] = ()
    note: str = ""
    nl_checks: tuple[tuple[str, bool], ...] = ()
    judge_error: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every reward-basis component was evaluated."""
        return not self.not_evaluated

    @property
    def success(self) -> bool:
        """Upstream's success test (reward == 1 within 1e-6) on the evaluated components."""
        return math.isclose(self.reward, 1.0, abs_tol=1e-6)


def score_episode(
    task: Tau2Task,
    tool_calls: Iterable[ToolCallLike],
    agent_messages: Iterable[str],
    *,
    data_dir: DataDir = None,
    ended_normally: bool = True,
    with_hashes: bool = True,
    tool_arguments: str = "strict",
    nl_judge: NLJudgeLike | None = None,
    transcript: Sequence[tuple[str, str]] = (),
) -> Tau2Score:
    """Score an episode of ``task`` from the agent's tool calls, as ``(name, arguments)`` in
    call order, and its messages to the user.

    ``ended_normally=False`` (the episode hit its turn limit instead of being ended by the
    agent or the user) gives reward 0, as upstream does.

    The DB component compares the records the two replays changed (equal hashes if and only
    if equal records); ``with_hashes=False`` skips computing the two hashes themselves
    (``db_hash`` and ``gold_db_hash`` stay None), which saves 10-40 ms per episode.
    ``tool_arguments``: how the episode's tools handled their arguments (the agent's writes
    are replayed the same way; :mod:`.arguments`). ``nl_judge`` judges the NL assertions
    on ``transcript`` (``(role, content)`` turns of the whole conversation).
    """
    criteria = task.evaluation_criteria
    if criteria is None:
        return Tau2Score(1.0, (), {}, note="no evaluation criteria")
    basis = criteria.reward_basis
    if not ended_normally:
        return Tau2Score(0.0, basis, {}, note="the episode was not ended by the agent or the user")
    domain = get_domain(task.domain)

    components: dict[str, float] = {}
    db_hash = gold_hash = None
    gold_errors: tuple[str, ...] = ()
    if criteria.actions is None and criteria.env_assertions is None:
        components["DB"] = 1.0
    else:
        agent_db = replay_writes(domain, tool_calls, data_dir, tool_arguments).db
        changes, gold_errors = gold_changes(domain, criteria.actions or (), data_dir)
        components["DB"] = 1.0 if agent_db.same_content(changes) else 0.0
        if with_hashes:
            db_hash, (gold_hash, _) = agent_db.hash(), gold_state(domain, criteria.actions or (), data_dir)

    checks = communicate_checks(criteria.communicate_info or (), agent_messages)
    components["COMMUNICATE"] = 1.0 if all(check.met for check in checks) else 0.0
    not_evaluated = []
    nl_checks: tuple[tuple[str, bool], ...] = ()
    judge_error = None
    if nl_judge is not None and criteria.nl_assertions and "NL_ASSERTION" in basis:
        judgement = nl_judge(criteria.nl_assertions, transcript)
        judge_error = judgement.error
        nl_checks = tuple(zip(criteria.nl_assertions, judgement.met))
        components["NL_ASSERTION"] = 1.0 if judgement.all_met else 0.0
    for kind, items in (
        ("NL_ASSERTION", criteria.nl_assertions),
        ("ACTION", criteria.actions),
        ("ENV_ASSERTION", criteria.env_assertions),
    ):
        if kind in components:
            continue
        if items:
            if kind in basis:
                not_evaluated.append(kind)
        else:
            components[kind] = 1.0
    reward = math.prod(components[kind] for kind in basis if kind in components)
    return Tau2Score(
        reward=reward,
        reward_basis=basis,
        components=components,
        not_evaluated=tuple(not_evaluated),
        db_hash=db_hash,
        gold_db_hash=gold_hash,
        communicate_checks=checks,
        gold_errors=gold_errors,
        nl_checks=nl_checks,
        judge_error=judge_error,
    )


def communicate_checks(infos: Sequence[str], agent_messages: Iterable[str]) -> tuple[CommunicateCheck, ...]:
    """Upstream's substring rule: ``info.lower()`` in ``message.lower()`` with commas removed."""
    texts = [message.lower().replace(",", "") for message in agent_messages if message]
    return tuple(CommunicateCheck(info, any(info.lower() in text for text in texts)) for info in infos)


_GOLD_CACHE: dict[tuple[Any, ...], tuple[str, tuple[tuple[int, str], ...]]] = {}
_GOLD_CACHE_SIZE = 4096


def gold_state(
    domain: Tau2Domain, actions: Sequence[Tau2Action], data_dir: DataDir = None
) -> tuple[str, tuple[str, ...]]:
    """The database hash after the reference ``actions`` (the last 4096 cached per process), and the
    errors of the actions that failed (upstream logs and skips them)."""
    world = domain.new_world(data_dir)
    key = (
        domain.name,
        world.db.snapshot,
        json.dumps([[a.name, a.arguments] for a in actions], sort_keys=True),
    )
    cached = _GOLD_CACHE.get(key)
    if cached is None:
        outcomes = [domain.call(world, action.name, action.arguments) for action in actions]
        failures = tuple((i, outcome.output) for i, outcome in enumerate(outcomes) if outcome.error)
        if len(_GOLD_CACHE) >= _GOLD_CACHE_SIZE:  # generated tasks are unbounded: forget the oldest
            del _GOLD_CACHE[next(iter(_GOLD_CACHE))]
        cached = _GOLD_CACHE[key] = (world.db.hash(), failures)
    db_hash, failed = cached
    return db_hash, tuple(f"{actions[i].action_id} ({actions[i].name}): {output}" for i, output in failed)


_CHANGES_CACHE: dict[tuple[Any, ...], tuple[dict[tuple[str, str], str], tuple[str, ...]]] = {}


def gold_changes(
    domain: Tau2Domain, actions: Sequence[Tau2Action], data_dir: DataDir = None
) -> tuple[dict[tuple[str, str], str], tuple[str, ...]]:
    """The records the reference ``actions`` change (:meth:`Tau2DB.changes`, the last 4096
    cached per process) and the errors of the actions that failed."""
    world = domain.new_world(data_dir)
    key = (domain.name, world.db.snapshot, json.dumps([[a.name, a.arguments] for a in actions], sort_keys=True))
    cached = _CHANGES_CACHE.get(key)
    if cached is None:
        outcomes = [domain.call(world, action.name, action.arguments) for action in actions]
        errors = tuple(
            f"{action.action_id} ({action.name}): {outcome.output}"
            for action, outcome in zip(actions, outcomes)
            if outcome.error
        )
        if len(_CHANGES_CACHE) >= _GOLD_CACHE_SIZE:
            del _CHANGES_CACHE[next(iter(_CHANGES_CACHE))]
        cached = _CHANGES_CACHE[key] = (world.db.changes(), errors)
    return cached


def replay_writes(
    domain: Tau2Domain, calls: Iterable[ToolCallLike], data_dir: DataDir = None, tool_arguments: str = "strict"
) -> Tau2World[Any]:
    """A fresh world after re-running the WRITE calls of ``calls`` (others, and unknown
    tools, are skipped), as upstream rebuilds the agent's end state."""
    world = domain.new_world(data_dir, tool_arguments)
    for name, arguments in calls:
        tool = domain.tools_by_name.get(name)
        if tool is not None and tool.kind == "write":
            domain.call(world, name, arguments)
    return world
