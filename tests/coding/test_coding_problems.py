"""The built-in problem set: its shape, its split, and that every program in it behaves as
labelled (each solution passes everything, each wrong candidate fails as its kind says)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import get_args

import pytest

from agentgym_envs.scenarios.coding.problems import (
    CandidateKind,
    Problem,
    builtin_problems,
    get_problem,
    misindent,
    mutate,
)
from agentgym_envs.scenarios.coding.runner import (
    DEFAULT_LIMITS,
    StdinTest,
    TestOutcome,
    TestStatus,
    run_tests,
)
from agentgym_envs.scenarios.coding.sandbox import SandboxLimits

PROBLEMS = builtin_problems()
# Half the environment's CPU limit: a stricter check of the solutions, and a cheaper run of
# the too_slow candidates (their large tests need orders of magnitude more than 1 s).
VALIDATION_LIMITS = SandboxLimits(cpu_time_s=DEFAULT_LIMITS.cpu_time_s / 2, wall_time_s=5)


def test_problem_set_shape():
    assert len(PROBLEMS) >= 40
    assert len({p.id for p in PROBLEMS}) == len(PROBLEMS)
    assert Counter(p.difficulty for p in PROBLEMS).keys() == {"easy", "medium", "hard"}
    assert min(Counter(p.difficulty for p in PROBLEMS).values()) >= 10
    assert {p.form for p in PROBLEMS} == {"stdin", "function"}
    for problem in PROBLEMS:
        assert 2 <= len(problem.examples) <= 3, problem.id
        assert 5 <= len(problem.hidden) <= 10, problem.id
        assert problem.solution and problem.candidates, problem.id
        assert problem.statement.strip(), problem.id


def test_candidates_cover_every_kind_and_both_visibilities():
    candidates = [c for p in builtin_problems(version=1) for c in p.candidates]
    assert {c.kind for c in candidates} == set(get_args(CandidateKind))
    candidates = [c for p in PROBLEMS for c in p.candidates]
    visible = Counter(c.passes_examples for c in candidates)
    assert visible[True] >= 30 and visible[False] >= 20


def test_split_is_disjoint_complete_and_stratified():
    train, test = builtin_problems("train"), builtin_problems("test")
    assert {p.id for p in train}.isdisjoint(p.id for p in test)
    assert len(train) + len(test) == len(PROBLEMS)
    for difficulty in ("easy", "medium", "hard"):
        assert sum(p.difficulty == difficulty for p in test) >= 3
        assert sum(p.difficulty == difficulty for p in train) >= 7
    with pytest.raises(ValueError):
        builtin_problems("validation")


def test_get_problem_and_prompt():
    problem = get_problem("two-sum")
    assert problem.form == "function" and problem.function == "two_sum"
    assert "two_sum([2, 7, 11, 15], 9) returns [0, 1]" in problem.prompt()
    stdin_problem = get_problem("merge-intervals")
    assert stdin_problem.form == "stdin" and stdin_problem.function is None
    assert "Input:\n2\n5 7\n1 2\nOutput:\n1 2\n5 7" in stdin_problem.prompt()
    with pytest.raises(KeyError):
        get_problem("no-such-problem")


def test_problem_rejects_mixed_test_forms():
    with pytest.raises(ValueError, match="all stdin or all calls"):
        Problem("mixed", "easy", "s", (StdinTest("", ""),), (get_problem("two-sum").examples[0],))


def test_misindent_and_mutate():
    source = "def f(x):\n    y = x\n    return y\n"
    broken = misindent(source)
    assert broken == "def f(x):\n    y = x\n      return y\n"
    with pytest.raises(ValueError):
        misindent("def f():\n    return 1\n")
    assert mutate(source, "y = x", "y = -x") == source.replace("y = x", "y = -x")
    with pytest.raises(ValueError, match="occurs 2 times"):
        mutate(source, "y", "z")


def _run_all(problem: Problem) -> tuple[list[TestOutcome], list[list[TestOutcome]]]:
    """The outcomes of the solution and of every candidate, run in parallel."""
    programs = [problem.solution, *(c.source for c in problem.candidates)]
    with ThreadPoolExecutor(len(programs)) as pool:
        solution, *candidates = pool.map(
            lambda program: run_tests(program, problem.tests, VALIDATION_LIMITS), programs
        )
    return solution, candidates


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_programs_behave_as_labelled(problem: Problem):
    solution, candidates = _run_all(problem)
    failures = [(i, o.status, o.error or o.got) for i, o in enumerate(solution) if not o.passed]
    assert failures == [], "the solution must pass every test"
    visible = len(problem.examples)
    for candidate, outcomes in zip(problem.candidates, candidates, strict=True):
        hidden = [o.status for o in outcomes[visible:]]
        label = f"{candidate.kind} candidate"
        assert all(o.passed for o in outcomes[:visible]) == candidate.passes_examples, f"{label}: examples"
        assert set(hidden) != {TestStatus.PASSED}, f"{label} passes every hidden test"
        if candidate.kind == "too_slow":
            assert TestStatus.TIMEOUT in hidden, label
        elif candidate.kind == "indentation_error":
            assert all("IndentationError" in o.error for o in outcomes), label
        elif candidate.kind == "crashes_on_empty":
            assert TestStatus.RUNTIME_ERROR in hidden, label
