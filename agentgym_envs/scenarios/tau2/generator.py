"""What the retail and airline task generators share: seeded draws, the user split, and
building a :class:`~agentgym_envs.scenarios.tau2.upstream.tasks.Tau2Task` from a solved draw.

The unit of generalisation of a generated task is its user. ``-v0`` splits the users 4:1 into
train and test by a CRC-32 of the user id; ``-v1`` keeps those test users and moves one train
user in 8 (by the same CRC-32, divided by 5) to a validation split."""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Any

from .upstream.tasks import EvaluationCriteria, Tau2Action, Tau2Task
from .user import UserFacts

GENERATED_SPLITS = {0: ("train", "test"), 1: ("train", "validation", "test")}  # by version
TEST_SHARE = 5  # one user in 5 belongs to the test split
VALIDATION_SHARE = 8  # from v1, one train user in 8 belongs to the validation split


def user_split(user_id: str, version: int = 0) -> str:
    """The split a user's tasks belong to at ``version``: the splits never share a user, and
    every version has the same test users."""
    crc = zlib.crc32(user_id.encode("utf-8"))
    if crc % TEST_SHARE == 0:
        return "test"
    return "validation" if version >= 1 and (crc // TEST_SHARE) % VALIDATION_SHARE == 0 else "train"


def generated_user(task: Tau2Task) -> str | None:
    """The user a generated task is about (its unit of generalisation): the ``user_id`` of its
    ``get_user_details`` reference call, which every generated task makes (None without one)."""
    actions = task.evaluation_criteria.actions if task.evaluation_criteria else ()
    return next((str(a.arguments["user_id"]) for a in actions or () if a.name == "get_user_details"), None)


def task_rng(domain: str, split: str, index: int) -> random.Random:
    """The generator of one task: a pure function of (domain, split, index)."""
    return random.Random(f"tau2-{domain}-{split}-{index}")


@dataclass(frozen=True)
class Solved:
    """A drawn and solved task: its kind, the user's side, and the reference calls."""

    kind: str
    reason_for_call: str
    known_info: str
    task_instructions: str
    facts: UserFacts
    actions: list[tuple[str, dict[str, Any]]]
    unknown_info: str | None = None


def make_task(domain: str, split: str, index: int, solved: Solved) -> Tau2Task:
    """A task in upstream's schema (plus the structured ``facts`` the simulated user reads),
    scored on DB x COMMUNICATE like every real airline task."""
    task_id = f"{split}-{index}"
    instructions = {
        "domain": domain,
        "reason_for_call": solved.reason_for_call,
        "known_info": solved.known_info,
        "unknown_info": solved.unknown_info,
        "task_instructions": solved.task_instructions,
    }
    actions = tuple(
        Tau2Action(f"{task_id}_{i}", name, arguments) for i, (name, arguments) in enumerate(solved.actions)
    )
    scenario = {"persona": None, "instructions": instructions, "facts": solved.facts.to_dict()}
    return Tau2Task(
        id=task_id,
        domain=domain,
        user_scenario=scenario,
        evaluation_criteria=EvaluationCriteria(
            actions=actions,
            communicate_info=(),
            nl_assertions=None,
            env_assertions=None,
            reward_basis=("DB", "COMMUNICATE"),
        ),
        description={"purpose": f"generated {solved.kind} task", "relevant_policies": None, "notes": None},
    )
