"""What a coding problem is: statement, visible examples, hidden tests, solution, candidates."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from ..runner import FunctionTest, StdinTest, Test, describe_expected, describe_input

Difficulty = Literal["easy", "medium", "hard"]
CandidateKind = Literal[
    "off_by_one",
    "wrong_operator",
    "wrong_edge_case",
    "indentation_error",
    "too_slow",
    "crashes_on_empty",
    "wrong_parameter",
]


@dataclass(frozen=True)
class Candidate:
    """A realistic wrong program for a problem. ``passes_examples`` records the design
    intent: True for candidates that pass every visible example and fail only hidden
    tests (testing on the examples is not enough), False for ones the examples catch."""

    kind: CandidateKind
    source: str
    passes_examples: bool


@dataclass(frozen=True)
class Problem:
    """A coding problem. ``examples`` are shown to the agent, ``hidden`` are not.

    Built-in problems carry a correct ``solution`` and wrong ``candidates``; problems
    loaded from external files have neither (``solution=None``, no candidates).
    """

    id: str
    difficulty: str  # easy, medium or hard; for external problems what the file says, or unknown
    statement: str
    examples: tuple[Test, ...]
    hidden: tuple[Test, ...]
    solution: str | None = None
    candidates: tuple[Candidate, ...] = ()
    starter_code: str = ""
    family: str = ""  # a generated problem's family (its template); "" for a hand-written one

    def __post_init__(self) -> None:
        if not self.tests:
            raise ValueError(f"problem {self.id!r} has no tests")
        kinds = {type(test) for test in self.tests}
        if len(kinds) != 1 or len({getattr(test, "function", None) for test in self.tests}) != 1:
            raise ValueError(f"problem {self.id!r}: tests must be all stdin or all calls of one function")

    @property
    def tests(self) -> tuple[Test, ...]:
        """Visible examples, then hidden tests."""
        return self.examples + self.hidden

    @property
    def form(self) -> Literal["stdin", "function"]:
        """``stdin`` (read input, print output) or ``function`` (define a function)."""
        return "stdin" if isinstance(self.tests[0], StdinTest) else "function"

    @property
    def function(self) -> str | None:
        """The function to define, for function-form problems."""
        test = self.tests[0]
        return test.function if isinstance(test, FunctionTest) else None

    def prompt(self) -> str:
        """The task text for an agent: statement, starter code and visible examples."""
        parts = [self.statement.strip()]
        if self.starter_code.strip():
            parts.append(f"Starter code:\n```python\n{self.starter_code.strip()}\n```")
        if self.form == "stdin":
            parts.append("Read the input from standard input and print the answer to standard output.")
        else:
            parts.append(
                f"Define the function `{self.function}` (at top level, or as a method of a class"
                " `Solution`); it is called with the arguments shown."
            )
        if self.examples:
            parts.append("Examples:\n" + "\n".join(_format_example(test) for test in self.examples))
        return "\n\n".join(parts)


def _format_example(test: Test) -> str:
    if isinstance(test, StdinTest):
        return f"Input:\n{test.input.rstrip()}\nOutput:\n{test.output.rstrip()}\n"
    return f"{describe_input(test)} returns {describe_expected(test)}"


def call(function: str, *args: object, returns: object) -> FunctionTest:
    """A function-call test, ``call("add", 1, 2, returns=3)``; values must be JSON values."""
    json.dumps([args, returns])  # fail at definition time on non-JSON values
    return FunctionTest(function, tuple(args), returns)


def mutate(source: str, old: str, new: str) -> str:
    """``source`` with its single occurrence of ``old`` replaced by ``new``: a wrong
    variant of a program that stays in step with it (raises if ``old`` is not there once)."""
    if source.count(old) != 1:
        raise ValueError(f"{old!r} occurs {source.count(old)} times, not once")
    return source.replace(old, new)


_BLOCK_CONTINUES = re.compile(r"[,(\[{\\]\s*$")


def misindent(source: str) -> str:
    """``source`` with one statement indented two spaces too far, the classic slip that
    makes Python raise ``IndentationError: unexpected indent``.

    The line chosen is the last one that follows a line of the same indentation which
    neither opens a block nor continues a bracket.
    """
    lines = source.split("\n")
    for index in range(len(lines) - 1, 0, -1):
        line, previous = lines[index], lines[index - 1]
        indent = len(line) - len(line.lstrip(" "))
        if (
            line.strip()
            and previous.strip()
            and len(previous) - len(previous.lstrip(" ")) == indent
            and not previous.rstrip().endswith(":")
            and not _BLOCK_CONTINUES.search(previous)
        ):
            lines[index] = "  " + line
            return "\n".join(lines)
    raise ValueError("no line to misindent")
