"""The per-episode state of a coding task: what was tested, with which verdicts, and what was submitted."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .judge import Judge
from .runner import TestOutcome, TestStatus
from .tasks import CodingTask


@dataclass
class CodingWorld:
    """Mutable state of one episode.

    ``judge`` runs programs (the scenario's limits and cache); ``labels`` maps each candidate
    program (stripped) to its name in tool results, ``"program [i]"`` for entity row ``i``;
    ``tested`` holds every program run_tests ran, ``passing`` those that passed every visible
    example; ``last_test_new`` whether the latest one was new, ``last_test_passed`` whether it
    passed every example; ``verdicts`` counts the verdicts of every example run; ``submitted`` and
    ``submission`` are the submitted program and its hidden-test outcomes (None until then).
    """

    task: CodingTask
    judge: Judge
    labels: dict[str, str]
    tested: set[str] = field(default_factory=set)
    passing: set[str] = field(default_factory=set)
    last_test_new: bool = False
    last_test_passed: bool = False
    run_tests_calls: int = 0
    verdicts: Counter[TestStatus] = field(default_factory=Counter)
    submitted: str | None = None
    submission: tuple[TestOutcome, ...] | None = None

    @property
    def hidden_passed(self) -> int:
        """Hidden tests the submission passed (0 before a submission)."""
        return sum(outcome.passed for outcome in self.submission or ())

    @property
    def solved(self) -> bool:
        """Whether a program was submitted and passed every hidden test."""
        return self.submission is not None and self.hidden_passed == len(self.submission)
