"""Judge a program against test cases, and describe the outcomes to an agent.

All tests of one :func:`run_tests` call run in one sandbox batch (one forked child per test;
see :mod:`.sandbox`): with a :class:`Sandbox` kept open a call costs a fork per test, else
one interpreter start-up more. Expected outputs never enter the sandbox: the supervisor
feeds the program one input at a time and this module compares the outputs.
"""

from __future__ import annotations

import enum
import json
import math
import signal
from collections.abc import Sequence
from dataclasses import dataclass

from .sandbox import Job, RunResult, Sandbox, SandboxLimits, Status, run_batch

DEFAULT_LIMITS = SandboxLimits(cpu_time_s=1.0)
"""Per-test limits: 1 s of CPU time, 3 s wall-clock, 256 MB, 64 KiB of output."""
TRIM_CHARS = 300
ERROR_LINES = 4


@dataclass(frozen=True)
class StdinTest:
    """The program reads ``input`` on stdin and must print ``output``. Outputs are
    compared after stripping trailing whitespace from each line and trailing blank lines."""

    input: str
    output: str


@dataclass(frozen=True)
class FunctionTest:
    """``function(*args)`` must return ``expected``. Arguments and result are JSON values;
    results are compared as JSON (tuples equal lists), floats to a relative 1e-6."""

    function: str
    args: tuple
    expected: object


Test = StdinTest | FunctionTest


class TestStatus(enum.StrEnum):
    """The verdict on one test."""

    __test__ = False  # not a pytest test class

    PASSED = "passed"
    WRONG_OUTPUT = "wrong_output"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class TestOutcome:
    """One test's verdict. ``input``, ``expected`` and ``got`` are trimmed for display;
    ``error`` holds the traceback's last lines or why the run was stopped."""

    __test__ = False  # not a pytest test class

    status: TestStatus
    input: str
    expected: str
    got: str = ""
    error: str = ""
    cpu_time_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status is TestStatus.PASSED


def run_tests(
    program: str, tests: Sequence[Test], limits: SandboxLimits = DEFAULT_LIMITS, sandbox: Sandbox | None = None
) -> list[TestOutcome]:
    """Run ``program`` on every test (the limits apply to each test) and judge it, in
    ``sandbox`` (by default one started for this call)."""
    jobs = [_job(test) for test in tests]
    results = sandbox.run(program, jobs, limits) if sandbox is not None else run_batch(program, jobs, limits)
    return [_judge(test, result, limits) for test, result in zip(tests, results, strict=True)]


def format_outcomes(outcomes: Sequence[TestOutcome], *, reveal: bool = True) -> str:
    """The agent-facing summary. With ``reveal=False`` (hidden tests) only the verdicts
    are shown, never inputs, expected outputs or error messages."""
    passed = sum(outcome.passed for outcome in outcomes)
    lines = [f"Passed {passed}/{len(outcomes)} tests."]
    for number, outcome in enumerate(outcomes, 1):
        verdict = outcome.status.value.replace("_", " ")
        if outcome.status is TestStatus.TIMEOUT and reveal:
            verdict += f" ({outcome.error})"
        lines.append(f"Test {number}: {verdict}")
        if reveal and not outcome.passed:
            lines.append(_field("input", outcome.input))
            if outcome.status is TestStatus.WRONG_OUTPUT:
                lines += [_field("expected", outcome.expected), _field("got", outcome.got)]
            elif outcome.status is TestStatus.RUNTIME_ERROR:
                lines.append(_field("error", outcome.error))
    return "\n".join(lines)


def normalize_output(text: str) -> str:
    """Output as compared: trailing whitespace stripped per line, trailing blank lines dropped."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def values_match(expected: object, got: object) -> bool:
    """JSON-value equality; floats within a relative 1e-6, booleans never equal numbers."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got
    if isinstance(expected, float) or isinstance(got, float):
        if isinstance(expected, int | float) and isinstance(got, int | float):
            return math.isclose(expected, got, rel_tol=1e-6, abs_tol=1e-9)
        return False
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(map(values_match, expected, got))
    if isinstance(expected, dict) and isinstance(got, dict):
        return expected.keys() == got.keys() and all(values_match(v, got[k]) for k, v in expected.items())
    return type(expected) is type(got) and expected == got


def describe_input(test: Test) -> str:
    """The test's input as shown to the agent: stdin text, or the call expression."""
    if isinstance(test, StdinTest):
        return test.input
    return f"{test.function}({', '.join(json.dumps(arg) for arg in test.args)})"


def describe_expected(test: Test) -> str:
    return test.output if isinstance(test, StdinTest) else json.dumps(test.expected)


def trim(text: str, limit: int = TRIM_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def _job(test: Test) -> Job:
    if isinstance(test, StdinTest):
        return Job(stdin=test.input)
    return Job(call=test.function, args=list(test.args))


def _judge(test: Test, result: RunResult, limits: SandboxLimits) -> TestOutcome:
    def outcome(status: TestStatus, got: str = "", error: str = "") -> TestOutcome:
        return TestOutcome(
            status,
            trim(describe_input(test)),
            trim(describe_expected(test)),
            trim(got),
            error,
            result.cpu_time_s,
        )

    if result.status is Status.TIMEOUT:
        limit = f"exceeded {limits.cpu_time_s:g} s of CPU time or {limits.wall_s:g} s of wall-clock time"
        return outcome(TestStatus.TIMEOUT, error=limit)
    if result.status is not Status.OK:
        return outcome(TestStatus.RUNTIME_ERROR, error=_error_message(result, limits))
    if isinstance(test, StdinTest):
        got = result.stdout
        matched = normalize_output(got) == normalize_output(test.output)
    else:
        got = result.returned or ""
        try:
            matched = values_match(test.expected, json.loads(got))
        except ValueError:
            matched = False
    return outcome(TestStatus.PASSED if matched else TestStatus.WRONG_OUTPUT, got=got.rstrip())


def _error_message(result: RunResult, limits: SandboxLimits) -> str:
    if result.status is Status.OUTPUT_LIMIT:
        return f"output limit exceeded (more than {limits.output_bytes} bytes)"
    if result.status is Status.MEMORY_LIMIT:
        return f"MemoryError: memory limit exceeded ({limits.memory_mb} MB)"
    if result.status is Status.KILLED and result.exit_code is not None and result.exit_code < 0:
        return f"killed by signal {signal.Signals(-result.exit_code).name}"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return trim("\n".join(lines[-ERROR_LINES:])) or f"exit code {result.exit_code}"


def _field(name: str, value: str) -> str:
    """``  name: value``, continuation lines indented under it."""
    return f"  {name}: " + value.rstrip("\n").replace("\n", "\n    ")
