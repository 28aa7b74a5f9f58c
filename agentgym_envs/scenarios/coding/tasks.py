"""Coding tasks: a problem plus the candidate programs an episode offers, in shuffled order.

Built-in task ids are ``"<problem-id>#<shuffle>"`` (``shuffle`` in ``[0, SHUFFLES)``; a bare
problem id means shuffle 0): the order of the candidates is a pure function of the id, and
``reset(seed=...)`` draws both the problem and the shuffle from the episode's seed. Tasks of a
user's file (LiveCodeBench / DeepCoder rows) carry no candidates; their id is the row's.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from agentgym_envs.core import TaskFormatError, TaskSource

from .judge import digest_tests
from .problems import Problem, builtin_problems, get_problem, problem_from_row

SHUFFLES = 10_000


def display_program(source: str) -> str:
    """A candidate as the entity table holds it: on its own lines, one trailing newline."""
    return "\n" + source.strip("\n") + "\n"


@dataclass(frozen=True)
class CodingTask:
    """One task: ``problem``, the candidate ``programs`` in display order (empty for a user's
    problems, or when candidates are turned off), the reference ``solution`` as displayed
    (None when the problem has none) and digests of the example and hidden tests."""

    task_id: str
    problem: Problem
    programs: tuple[str, ...]
    solution: str | None
    examples_digest: str
    hidden_digest: str


@functools.cache
def _digests(problem_id: str) -> tuple[str, str]:
    problem = get_problem(problem_id)
    return digest_tests(problem.examples), digest_tests(problem.hidden)


def builtin_task(problem: Problem, shuffle: int, candidates: bool = True) -> CodingTask:
    """The task of a built-in problem with its solution and wrong candidates in the order
    that ``shuffle`` gives (or with no candidates)."""
    solution = display_program(problem.solution or "")
    programs: tuple[str, ...] = ()
    if candidates:
        canonical = [solution, *(display_program(c.source) for c in problem.candidates)]
        order = np.random.default_rng([zlib.crc32(problem.id.encode()), shuffle]).permutation(len(canonical))
        programs = tuple(canonical[i] for i in order)
    return CodingTask(f"{problem.id}#{shuffle}", problem, programs, solution, *_digests(problem.id))


class BuiltinTasks(TaskSource):
    """The built-in problems of one split (of ``difficulties`` only, when given); ``get``
    accepts any built-in problem's task id."""

    def __init__(self, split: str, candidates: bool = True, difficulties: Sequence[str] | None = None) -> None:
        problems = builtin_problems(split)  # raises ValueError for an unknown split
        self.problems = tuple(p for p in problems if difficulties is None or p.difficulty in difficulties)
        self.candidates = candidates

    def sample(self, rng: Any) -> CodingTask:
        problem = self.problems[int(rng.integers(len(self.problems)))]
        return builtin_task(problem, int(rng.integers(SHUFFLES)), self.candidates)

    def get(self, task_id: str) -> CodingTask:
        problem_id, _, shuffle = str(task_id).partition("#")
        try:
            problem = get_problem(problem_id)
        except KeyError:
            some = ", ".join(p.id for p in self.problems[:4])
            raise ValueError(f"unknown task_id {task_id!r}: built-in task ids look like '<problem-id>#<shuffle>', e.g. {some}") from None
        if shuffle and not (shuffle.isdigit() and int(shuffle) < SHUFFLES):
            raise ValueError(f"task_id {task_id!r}: the shuffle after '#' must be an integer in [0, {SHUFFLES})")
        return builtin_task(problem, int(shuffle or 0), self.candidates)


def task_from_row(row: dict[str, Any]) -> CodingTask:
    """A task from one LiveCodeBench or DeepCoder row (raise :class:`TaskFormatError`)."""
    problem = problem_from_row(row)
    if not problem.hidden:
        raise TaskFormatError(
            f"problem {problem.id!r} has no hidden tests (private_test_cases, or a second test in 'tests'): submit would have nothing to judge",
            "private_test_cases" if "question_content" in row else "tests",
        )
    return CodingTask(problem.id, problem, (), None, digest_tests(problem.examples), digest_tests(problem.hidden))
