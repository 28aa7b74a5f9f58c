"""Scoring an episode as tau2's evaluator does, offline.

- DB: the task's reference actions are replayed on a fresh world set up as the task says
  (an action that errors is skipped; no ``sync`` between them, as upstream's
  ``make_tool_call``), the episode's WRITE calls (the agent's and, in a dual-control domain,
  the user's) on another; the component is 1 if the two hashes are equal (both databases'
  in telecom). It is 1 without replay when the task has neither actions nor env assertions.
- ENV_ASSERTION (telecom): each env assertion's function is run on the replayed world; the
  component is 1 if every one returns its ``assert_value``.
- ACTION: every reference action must match one of the episode's calls by name and by the
  call's arguments (only ``compare_args`` when given; an empty list matches on the name).
- COMMUNICATE: every ``communicate_info`` string must occur, case-insensitively, in one of
  the agent's messages to the user with its commas removed.
- NL_ASSERTION: with an ``nl_judge`` (:class:`~.llm_user.NLJudge`), 1 if the judge finds
  every assertion met in the transcript; it runs only when NL_ASSERTION is in the reward
  basis, as in upstream's default mode. A judge that fails gives 0 and ``judge_error``.
- Without a judge NL_ASSERTION, and ENV_ASSERTION in a domain without task functions: when
  one of them is in the reward basis with something to check, it is reported in
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
from .tasks import EnvCall, Tau2Action, Tau2Task
from .toolkit import Tau2World

ToolCallLike = tuple[Any, ...]  # (name, arguments) by the agent, or (name, arguments, requestor)
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
    env_assertion_checks: tuple[tuple[str, bool], ...] = ()
    action_checks: tuple[tuple[str, bool], ...] = ()
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
    """Score an episode of ``task`` from its tool calls in call order, as ``(name,
    arguments)`` for the agent's and ``(name, arguments, "user")`` for the user's (dual
    control), and the agent's messages to the user.

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

    calls = [_parts(call) for call in tool_calls]
    components: dict[str, float] = {}
    db_hash = gold_hash = None
    gold_errors: tuple[str, ...] = ()
    assertion_checks: tuple[tuple[str, bool], ...] = ()
    if criteria.actions is None and criteria.env_assertions is None:
        components["DB"] = 1.0
    else:
        world = replay_writes(domain, calls, data_dir, tool_arguments, task)
        changes, gold_errors = gold_changes(domain, criteria.actions or (), data_dir, task)
        components["DB"] = 1.0 if _same_state(world, changes) else 0.0
        if with_hashes:
            db_hash, (gold_hash, _) = world.db.hash(), gold_state(domain, criteria.actions or (), data_dir, task)
        if domain.functions:
            assertion_checks = tuple(
                (f"{a.func_name}({json.dumps(a.arguments, sort_keys=True)}) == {a.assert_value}", _holds(domain, world, a))
                for a in criteria.env_assertions or ()
            )
            components["ENV_ASSERTION"] = 1.0 if all(met for _, met in assertion_checks) else 0.0
    action_checks = tuple((f"{a.action_id} ({a.name})", any(matches_action(a, name, args) for name, args, _ in calls))
                          for a in criteria.actions or ())
    components["ACTION"] = 1.0 if all(met for _, met in action_checks) else 0.0

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
    for kind, items in (("NL_ASSERTION", criteria.nl_assertions), ("ENV_ASSERTION", criteria.env_assertions)):
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
        env_assertion_checks=assertion_checks,
        action_checks=action_checks,
        gold_errors=gold_errors,
        nl_checks=nl_checks,
        judge_error=judge_error,
    )


def communicate_checks(infos: Sequence[str], agent_messages: Iterable[str]) -> tuple[CommunicateCheck, ...]:
    """Upstream's substring rule: ``info.lower()`` in ``message.lower()`` with commas removed."""
    texts = [message.lower().replace(",", "") for message in agent_messages if message]
    return tuple(CommunicateCheck(info, any(info.lower() in text for text in texts)) for info in infos)


def _parts(call: ToolCallLike) -> tuple[str, Mapping[str, Any], str]:
    name, arguments, *requestor = call
    return name, arguments, requestor[0] if requestor else "assistant"


def matches_action(action: Tau2Action, name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether the call ``name(arguments)`` is ``action``: upstream's
    ``Action.compare_with_tool_call`` (the requestor is not compared)."""
    if action.name != name:
        return False
    keys = list(arguments) if action.compare_args is None else list(action.compare_args)
    if not keys:
        return True
    return ({k: v for k, v in arguments.items() if k in keys}
            == {k: v for k, v in action.arguments.items() if k in keys})


def _holds(domain: Tau2Domain, world: Tau2World[Any], assertion: EnvCall) -> bool:
    """Whether an env assertion holds on ``world`` (one whose function fails does not)."""
    try:
        result = domain.run_function(world, assertion.env_type, assertion.func_name, assertion.arguments)
    except Exception:  # noqa: BLE001  (upstream's evaluator would stop on it; here it fails the check)
        return False
    return isinstance(result, bool) and result == assertion.assert_value


def _state_changes(world: Tau2World[Any]) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str] | None]:
    return world.db.changes(), None if world.user_db is None else world.user_db.changes()


def _same_state(world: Tau2World[Any], changes: tuple[dict[tuple[str, str], str], Any]) -> bool:
    agent, user = changes
    return world.db.same_content(agent) and (user is None or world.user_db.same_content(user))


def _gold_key(domain: Tau2Domain, world: Tau2World[Any], actions: Sequence[Tau2Action], task: Tau2Task | None) -> tuple[Any, ...]:
    setup = [[c.env_type, c.func_name, c.arguments] for c in task.initial_actions] if task is not None else []
    calls = [[a.name, a.arguments, a.requestor] for a in actions]
    return domain.name, id(world.db.snapshot), json.dumps([setup, calls], sort_keys=True, default=str)


def _run_gold(domain: Tau2Domain, world: Tau2World[Any], actions: Sequence[Tau2Action]) -> list[str]:
    """Run the reference actions as upstream's evaluator does (``make_tool_call``: no sync);
    the errors of those that failed."""
    errors = []
    for action in actions:
        outcome = domain.call(world, action.name, action.arguments, action.requestor, sync=False)
        if outcome.error:
            errors.append(f"{action.action_id} ({action.name}): {outcome.output}")
    return errors


_GOLD_CACHE: dict[tuple[Any, ...], tuple[str, tuple[str, ...]]] = {}
_GOLD_CACHE_SIZE = 4096


def _remember(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> Any:
    if len(cache) >= _GOLD_CACHE_SIZE:  # generated tasks are unbounded: forget the oldest
        del cache[next(iter(cache))]
    cache[key] = value
    return value


def gold_state(
    domain: Tau2Domain, actions: Sequence[Tau2Action], data_dir: DataDir = None, task: Tau2Task | None = None
) -> tuple[str, tuple[str, ...]]:
    """The database hash after ``task``'s set-up and the reference ``actions`` (the last 4096
    cached per process), and the errors of the actions that failed (upstream logs and skips them)."""
    world = domain.new_world(data_dir, task=task)
    key = _gold_key(domain, world, actions, task)
    cached = _GOLD_CACHE.get(key)
    if cached is None:
        errors = _run_gold(domain, world, actions)
        cached = _remember(_GOLD_CACHE, key, (world.db.hash(), tuple(errors)))
    return cached


_CHANGES_CACHE: dict[tuple[Any, ...], tuple[Any, tuple[str, ...]]] = {}


def gold_changes(
    domain: Tau2Domain, actions: Sequence[Tau2Action], data_dir: DataDir = None, task: Tau2Task | None = None
) -> tuple[Any, tuple[str, ...]]:
    """The state after ``task``'s set-up and the reference ``actions`` (each database's
    :meth:`~.store.Tau2DB.changes`, the last 4096 cached per process) and the errors of the
    actions that failed."""
    world = domain.new_world(data_dir, task=task)
    key = _gold_key(domain, world, actions, task)
    cached = _CHANGES_CACHE.get(key)
    if cached is None:
        errors = _run_gold(domain, world, actions)
        cached = _remember(_CHANGES_CACHE, key, (_state_changes(world), tuple(errors)))
    return cached


def replay_writes(
    domain: Tau2Domain, calls: Iterable[ToolCallLike], data_dir: DataDir = None, tool_arguments: str = "strict",
    task: Tau2Task | None = None,
) -> Tau2World[Any]:
    """A fresh world, set up as ``task`` says, after re-running the WRITE calls of ``calls``
    (others, and unknown tools, are skipped; each is followed by the domain's sync), as
    upstream rebuilds the episode's end state."""
    world = domain.new_world(data_dir, tool_arguments, task)
    for call in calls:
        name, arguments, requestor = _parts(call)
        tool, _ = domain.resolve(name, requestor)
        if tool is not None and tool.kind == "write":
            domain.call(world, name, arguments, requestor)
    return world
