"""Coding tasks: a problem plus the candidate programs an episode offers, in shuffled order.

Built-in task ids are ``"<problem-id>#<shuffle>"`` (``shuffle`` in ``[0, SHUFFLES)``; a bare
problem id means shuffle 0): the order of the candidates is a pure function of the id, and
``reset(seed=...)`` draws both the problem and the shuffle from the episode's seed. Tasks of a
user's file (LiveCodeBench / DeepCoder rows) carry no candidates; their id is the row's.

At version 1 a task offers a fixed number of ``programs``: the solution, the problem's wrong
candidates that fail a visible example (never the subtle ones), and solutions of the split's
generated problems of other families (which define another function) to fill the rest, so
every program but the solution fails a visible example.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
def _digests(problem_id: str, version: int) -> tuple[str, str]:
    problem = get_problem(problem_id, version)
    return digest_tests(problem.examples), digest_tests(problem.hidden)


def builtin_task(problem: Problem, shuffle: int, candidates: bool = True, subtle: bool = True,
                 distractors: Sequence[str] = (), version: int = 0) -> CodingTask:
    """The task of a built-in problem with its solution, its wrong candidates (without the
    ``subtle`` ones that pass every visible example, when False) and ``distractors`` (programs
    written for other problems) in the order that ``shuffle`` gives (or with no candidates)."""
    solution = display_program(problem.solution or "")
    programs: tuple[str, ...] = ()
    if candidates:
        wrong = [c.source for c in problem.candidates if subtle or not c.passes_examples]
        canonical = [solution, *(display_program(source) for source in (*wrong, *distractors))]
        order = np.random.default_rng([zlib.crc32(problem.id.encode()), shuffle]).permutation(len(canonical))
        programs = tuple(canonical[i] for i in order)
    return CodingTask(f"{problem.id}#{shuffle}", problem, programs, solution, *_digests(problem.id, version))


def distractor_programs(problem: Problem, pool: Sequence[Problem], shuffle: int, count: int) -> tuple[str, ...]:
    """``count`` solutions of other problems of ``pool`` (one split's), drawn by ``shuffle``:
    programs that fail the problem's visible examples, so only a test tells them apart."""
    others = [p.solution for p in pool if p.id != problem.id and p.solution]
    if count > len(others):
        raise ValueError(f"{count} distractors asked for, but the split has {len(others)} other solutions")
    picks = np.random.default_rng([zlib.crc32(problem.id.encode()), shuffle, 1]).choice(len(others), count, replace=False)
    return tuple(others[i] for i in sorted(picks))


class BuiltinTasks(TaskSource):
    """The built-in problems of one split of ``version`` (of ``difficulties`` only, when
    given); ``get`` accepts any built-in problem's task id of that version. ``subtle`` and
    ``distractors``: see :func:`builtin_task` (the distractors come from the same split's other
    problems). ``programs`` (version 1 only): the programs each task offers, see the module."""

    def __init__(self, split: str, candidates: bool = True, difficulties: Sequence[str] | None = None,
                 subtle: bool = True, distractors: int = 0, version: int = 0, programs: int | None = None) -> None:
        if (programs is not None) != (version >= 1):
            raise ValueError(f"programs is given at version 1 and only there (version {version}, programs {programs!r})")
        problems = builtin_problems(split, version)  # raises ValueError for an unknown split
        self.problems = tuple(p for p in problems if difficulties is None or p.difficulty in difficulties)
        self.version, self.programs = version, programs
        self.pool = tuple(p for p in problems if p.family) if version >= 1 else problems
        self.candidates, self.subtle, self.distractors = candidates, subtle and version == 0, distractors
        fewest = 1 + max(sum(not c.passes_examples for c in p.candidates) for p in problems)
        if programs is not None and programs < fewest:
            raise ValueError(f"programs must be >= {fewest} (a solution and every wrong candidate of a problem), got {programs!r}")

    def sample(self, rng: Any) -> CodingTask:
        problem = self.problems[int(rng.integers(len(self.problems)))]
        return self._task(problem, int(rng.integers(SHUFFLES)))

    def get(self, task_id: str) -> CodingTask:
        problem_id, _, shuffle = str(task_id).partition("#")
        try:
            problem = get_problem(problem_id, self.version)
        except KeyError:
            some = ", ".join(p.id for p in self.problems[:4])
            raise ValueError(f"unknown task_id {task_id!r}: built-in task ids look like '<problem-id>#<shuffle>', e.g. {some}") from None
        if shuffle and not (shuffle.isdigit() and int(shuffle) < SHUFFLES):
            raise ValueError(f"task_id {task_id!r}: the shuffle after '#' must be an integer in [0, {SHUFFLES})")
        return self._task(problem, int(shuffle or 0))

    def _task(self, problem: Problem, shuffle: int) -> CodingTask:
        pool, count = self.pool, self.distractors
        if self.programs is not None:  # version 1: other families' solutions fill the task to ``programs``
            pool = tuple(p for p in self.pool if p.family != problem.family)
            count = self.programs - 1 - sum(not c.passes_examples for c in problem.candidates)
        distractors = distractor_programs(problem, pool, shuffle, count) if count else ()
        return builtin_task(problem, shuffle, self.candidates, self.subtle, distractors, self.version)


def task_from_row(row: dict[str, Any]) -> CodingTask:
    """A task from one LiveCodeBench or DeepCoder row (raise :class:`TaskFormatError`)."""
    problem = problem_from_row(row)
    if not problem.hidden:
        raise TaskFormatError(
            f"problem {problem.id!r} has no hidden tests (private_test_cases, or a second test in 'tests'): submit would have nothing to judge",
            "private_test_cases" if "question_content" in row else "tests",
        )
    return CodingTask(problem.id, problem, (), None, digest_tests(problem.examples), digest_tests(problem.hidden))
