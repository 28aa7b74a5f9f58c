"""Difficulty ladders: each env family's levels below its top configuration, per version.

A level is a set of constructor arguments of the family's env class (``level=k`` applies
them; arguments the caller passes win) and a registered id, ``AgentGym/<Family>-L<k>-v<n>``.
Levels count up from 0, the easiest; ``<Family>-v<n>`` itself is the top of each ladder.
A family's version ``n`` (the env argument ``version=n``) fixes its tasks and splits, as
Gymnasium versions envs: ``-v0`` (train and test splits) stays registered as it was, ``-v1``
adds a validation split and at least 20 test units per level, ``-v2`` (retail, coding) re-cuts a ladder. Plain names
(``customer_support``) mean a family's latest version.
This module is pure data: the env classes read it, it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

NAMESPACE = "AgentGym"


@dataclass(frozen=True)
class Level:
    """One rung: ``family`` (the id stem, e.g. ``CustomerSupport``), its ``index``, a short
    ``name``, a one-line ``description`` and the env ``kwargs`` it sets."""

    family: str
    index: int
    name: str
    description: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    version: int = 0

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.family}-L{self.index}-v{self.version}"


@dataclass(frozen=True)
class Family:
    """An env family's ladder at one ``version``: its id ``stem``, short ``name``, what the top
    holds, the name and top value of its turn limit, and its levels (easiest first); ``content``: for a
    version that only re-cuts its ladder, the earlier version whose tasks, splits and spaces it keeps."""

    stem: str
    name: str
    top: str
    turns_arg: str
    turns: int
    levels: tuple[Level, ...]
    version: int = 0
    content: int | None = None  # the version whose tasks, splits and spaces this one keeps (None: its own)

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.stem}-v{self.version}"

    def ids(self) -> list[str]:
        return [level.env_id for level in self.levels] + [self.env_id]


def _ladder(stem: str, name: str, top: str, turns: int, rungs: list[tuple[str, str, dict[str, Any]]],
            turns_arg: str = "max_turns", version: int = 0, content: int | None = None) -> Family:
    levels = tuple(Level(stem, i, short, text, MappingProxyType(kwargs), version)
                   for i, (short, text, kwargs) in enumerate(rungs))
    return Family(stem, name, top, turns_arg, turns, levels, version, content)


_HINT = "; a `Category:` line in the ticket"
_SUPPORT_RUNGS: list[tuple[str, str, dict[str, Any]]] = [
    ("password-reset", "password reset tickets only" + _HINT,
     {"kinds": ("password_reset",), "category_hint": True}),
    ("easy", "the easy kinds: password reset, billing inquiry" + _HINT,
     {"kinds": ("password_reset", "billing_inquiry"), "category_hint": True}),
    ("easy-medium", "easy and medium kinds: + API integration, refund request" + _HINT,
     {"kinds": ("password_reset", "billing_inquiry", "api_integration", "refund_request"), "category_hint": True}),
    ("all-hinted", "all five kinds (+ data migration)" + _HINT, {"category_hint": True}),
]
# -v1 adds a rung between all-hinted and the top: the category line on half the tickets.
_SUPPORT_RUNGS_V1 = [*_SUPPORT_RUNGS, (
    "half-hinted", "all five kinds; a `Category:` line in half the tickets (a fixed half, by task id)",
    {"category_hint": 0.5})]
_RETAIL_RUNGS: list[tuple[str, str, dict[str, Any]]] = [
    ("cancel-solo", "cancelling a pending order (4 reference calls, one write); the ticket up front (solo)",
     {"kinds": ("cancel",), "solo": True}),
    ("one-write-solo", "cancel, address or payment change, return: one write after 3 reads; solo",
     {"kinds": ("cancel", "modify_address", "modify_payment", "return"), "solo": True}),
    ("all-solo", "all six kinds (+ item changes and exchanges, with product reads); solo", {"solo": True}),
]
# -v2 adds a rung between cancelling alone and the four one-write kinds: every one-write kind but the payment change
_RETAIL_RUNGS_V2 = [_RETAIL_RUNGS[0], (
    "cancel-address-return-solo", "cancel, address change or return: one write after 3 reads (no payment change); solo",
    {"kinds": ("cancel", "modify_address", "return"), "solo": True}), *_RETAIL_RUNGS[1:]]
_AIRLINE_RUNGS: list[tuple[str, str, dict[str, Any]]] = [
    ("cancel-solo", "cancelling a reservation (3 reference calls, one write); the ticket up front (solo)",
     {"kinds": ("cancel",), "solo": True}),
    ("one-write-solo", "cancel, bag change, compensation: one write after 2-3 reads; solo",
     {"kinds": ("cancel", "change_bags", "compensation"), "solo": True}),
    ("all-solo", "all five kinds (+ flight changes and bookings, with a flight search); solo", {"solo": True}),
]

_CODING_RUNGS_V1: list[tuple[str, str, dict[str, Any]]] = [
    ("easy-12", "easy problems; 12 programs, only the solution passes the visible examples",
     {"difficulties": ("easy",), "programs": 12, "max_turns": 16}),
    ("easy-medium-16", "easy and medium problems; 16 programs", {"difficulties": ("easy", "medium"), "programs": 16,
                                                                 "max_turns": 20}),
]
# -v2 adds a rung between them: the medium problems with L0's 12 programs and turns
_CODING_RUNGS_V2 = [_CODING_RUNGS_V1[0], (
    "easy-medium-12", "easy and medium problems; 12 programs",
    {"difficulties": ("easy", "medium"), "programs": 12, "max_turns": 16}), *_CODING_RUNGS_V1[1:]]

FAMILIES: tuple[Family, ...] = (
    _ladder("CustomerSupport", "customer_support", "all five kinds, no category line", 10, _SUPPORT_RUNGS),
    _ladder("Math", "math", "arithmetic expressions, range sums and word problems, 1/3 each", 10, [
        ("addition", "one addition of two numbers, shown as an expression", {"problems": ("addition",)}),
        ("expressions", "arithmetic expressions shown in the question (-v0's easy problems)", {"problems": ("easy",)}),
        ("expressions-ranges", "expressions and sums of integer ranges (-v0's easy and medium)",
         {"problems": ("easy", "medium")}),
    ]),
    _ladder("Math", "math", "arithmetic expressions, range sums and word problems, 1/3 each", 10, [
        ("addition", "one addition of two numbers, shown as an expression in a phrasing frame",
         {"problems": ("addition",)}),
        ("expressions", "arithmetic expressions shown in the question (the top's easy problems)", {"problems": ("easy",)}),
        ("first-n", "expressions and first-n sums: one `sum_1_to_n` call, then submit", {"problems": ("easy", "first_n")}),
        ("guided-ranges", "+ range sums whose question names the plan (sum to b, minus sum to a, plus a)",
         {"problems": ("easy", "first_n", "guided")}),
        ("mixed-ranges", "expressions, guided range sums and the top's medium problems (plans unnamed), 1/3 each",
         {"problems": ("easy", "guided", "medium")}),
        ("expressions-ranges", "expressions and the top's medium problems, 1/2 each (-v0's L2)",
         {"problems": ("easy", "medium")}),
    ], version=1),
    _ladder("Coding", "coding", "all 43 problems: easy, medium and hard", 10, [
        ("easy-distractors", "the easy problems (10 train, 4 test); 13-15 programs, only the solution passes the examples",
         {"difficulties": ("easy",), "subtle_candidates": False, "distractors": 12, "max_turns": 20}),
        ("easy-medium", "easy and medium problems (21 train, 9 test)", {"difficulties": ("easy", "medium")}),
    ]),
    _ladder("Tau2Retail", "tau2_retail", "generated tasks of all six kinds, in conversation with the customer", 40,
            _RETAIL_RUNGS),
    _ladder("Tau2Airline", "tau2_airline", "generated tasks of all five kinds, in conversation with the customer", 40,
            _AIRLINE_RUNGS),
    _ladder("Tau2Telecom", "tau2_telecom", "all of tau2's telecom tasks (74 train, 40 test)", 60, [
        ("service-two-calls", "real no-service tasks with at most 2 reference calls (9 train, 12 test)",
         {"kinds": ("service_issue",), "max_actions": 2, "max_turns": 6}),
        ("four-calls", "real tasks with at most 4 reference calls (36 train, 23 test)", {"max_actions": 4, "max_turns": 20}),
        ("seven-calls", "real tasks with at most 7 reference calls (60 train, 35 test)", {"max_actions": 7, "max_turns": 40}),
    ]),
    _ladder("SupportTeam", "support_team", "all five kinds, no category line", 14, _SUPPORT_RUNGS,
            turns_arg="max_cycles"),
    # version 1: a validation split, >= 20 test units a level, graded rungs
    _ladder("CustomerSupport", "customer_support", "all five kinds, no category line", 10, _SUPPORT_RUNGS_V1,
            version=1),
    _ladder("Coding", "coding", "all tiers (easy, medium, hard); 20 programs", 24, _CODING_RUNGS_V1, version=1),
    _ladder("Tau2Retail", "tau2_retail", "generated tasks of all six kinds, in conversation with the customer", 40,
            _RETAIL_RUNGS, version=1),
    _ladder("Tau2Airline", "tau2_airline", "generated tasks of all five kinds, in conversation with the customer", 40, [
        _AIRLINE_RUNGS[0],
        ("cancel-compensation-solo", "cancel, or a certificate for a cancelled flight (a status read first); solo",
         {"kinds": ("cancel", "compensation"), "solo": True}),
        *_AIRLINE_RUNGS[1:],
    ], version=1),
    _ladder("Tau2Telecom", "tau2_telecom", "all of tau2's telecom tasks (49 train, 25 validation, 40 test)", 60, [
        ("three-calls", "real tasks with at most 3 reference calls (19 train, 11 validation, 21 test)",
         {"max_actions": 3, "max_turns": 12}),
        ("five-calls", "real tasks with at most 5 reference calls (30 train, 17 validation, 28 test)", {"max_actions": 5, "max_turns": 24}),
        ("seven-calls", "real tasks with at most 7 reference calls (40 train, 20 validation, 35 test)",
         {"max_actions": 7, "max_turns": 40}),
    ], version=1),
    _ladder("SupportTeam", "support_team", "all five kinds, no category line", 14, _SUPPORT_RUNGS_V1,
            turns_arg="max_cycles", version=1),
    # version 2: a graded rung where the ladder fell by more than 0.35; tasks, splits and spaces as at version 1
    _ladder("Tau2Retail", "tau2_retail", "generated tasks of all six kinds, in conversation with the customer", 40,
            _RETAIL_RUNGS_V2, version=2, content=1),
    _ladder("Coding", "coding", "all tiers (easy, medium, hard); 20 programs", 24, _CODING_RUNGS_V2, version=2, content=1),
)
LEVELS: tuple[Level, ...] = tuple(level for family in FAMILIES for level in family.levels)


def latest_version(name: str) -> int:
    """The newest version of a family (short name or stem)."""
    versions = [fam.version for fam in FAMILIES if name in (fam.name, fam.stem)]
    if not versions:
        raise ValueError(f"unknown environment family {name!r}; known: {', '.join(sorted({f.name for f in FAMILIES}))}")
    return max(versions)


def family(name_or_id: str, version: int | None = None) -> Family:
    """The ladder of a short name (``customer_support``) or a stem, at ``version`` (default: the
    latest), or the one any of its ids names (full or without the namespace, a level's or the top)."""
    for fam in FAMILIES:
        if name_or_id in (*fam.ids(), *(i.split("/", 1)[1] for i in fam.ids())):
            return fam
    wanted = latest_version(name_or_id) if version is None else version
    for fam in FAMILIES:
        if name_or_id in (fam.name, fam.stem) and fam.version == wanted:
            return fam
    versions = sorted(fam.version for fam in FAMILIES if name_or_id in (fam.name, fam.stem))
    raise ValueError(f"{name_or_id!r} has no version {wanted!r}; it has {versions}")


def level_ids(name_or_id: str) -> list[str]:
    """A family's ids from ``-L0`` up to and including the top, at the version the id names
    (a short name: the latest)."""
    return family(name_or_id).ids()


def level_of(env_id: str) -> Level | None:
    """The level a registered level id names (None for any other id)."""
    return next((level for level in LEVELS if env_id in (level.env_id, level.env_id.split("/", 1)[1])), None)


def base_env_id(env_id: str) -> str:
    """A level id -> its family's top id at the same version; any other id unchanged."""
    level = level_of(env_id)
    return env_id if level is None else family(level.family, level.version).env_id


def check_version(name: str, version: Any) -> int:
    """``version`` if it is one of the family's versions, else a ValueError naming them."""
    versions = sorted(fam.version for fam in FAMILIES if name in (fam.name, fam.stem))
    if isinstance(version, bool) or version not in versions:
        raise ValueError(f"version must be one of {versions} for {name}, got {version!r}")
    return int(version)


def content_version(name: str, version: int) -> int:
    """The version whose tasks, splits and spaces ``version`` of family ``name`` holds: its own, or for a
    version that only re-cut its ladder, the earlier one it keeps (what the env's scenario is built at)."""
    fam = family(name, check_version(name, version))
    return fam.version if fam.content is None else fam.content


def with_level(name: str, level: int | None, given: Mapping[str, Any], version: int = 0) -> dict[str, Any]:
    """The env arguments of ``level`` of family ``name`` at ``version`` (None: the top, none),
    overridden by the ``given`` ones."""
    if level is None:
        return dict(given)
    levels = family(name, check_version(name, version)).levels
    if not (isinstance(level, int) and not isinstance(level, bool) and 0 <= level < len(levels)):
        raise ValueError(f"level must be None (the top configuration) or an int in [0, {len(levels)}), got {level!r}")
    return {**levels[level].kwargs, **given}


def levels_table(name: str, version: int | None = None) -> str:
    """The family's ladder as a Markdown table (the ``Levels`` section of its docstring)."""
    fam = family(name, version)
    rows = ["| level | id | what it holds | max turns |", "| --- | --- | --- | --- |"]
    for level in fam.levels:
        turns = level.kwargs.get(fam.turns_arg, fam.turns)
        rows.append(f"| {level.index} ({level.name}) | `{level.env_id}` | {level.description} | {turns} |")
    rows.append(f"| v{fam.version} | `{fam.env_id}` | {fam.top} | {fam.turns} |")
    return "\n".join(rows)
