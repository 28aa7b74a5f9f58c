"""The coding tools: ``run_tests(program)`` on the visible examples and ``submit(program)``
on the hidden tests (terminal). Both take the program source; a fenced code block inside
the argument (```python ... ```) is accepted and its content run."""

from __future__ import annotations

import re

from agentgym_envs.core import Arg, Tool, ToolError

from .runner import TestStatus, format_outcomes
from .sandbox import SandboxError
from .world import CodingWorld

MAX_PROGRAM_CHARS = 20_000
PROGRAM_ENTITY = "program"
# The first fenced block: a line opening with ``` (and an optional language tag), its content,
# and a line closing with ```.
_FENCED = re.compile(r"^[ \t]*```[\w+.-]*[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)


def program_source(argument: str) -> str:
    """The program an argument holds: the content of its first fenced code block if it has
    one, else the argument itself. Raises :class:`ToolError` for an empty or oversized
    program and for text that is not valid Unicode."""
    fenced = _FENCED.search(argument)
    program = fenced.group(1) if fenced else argument
    if not program.strip():
        raise ToolError("the program is empty")
    if len(program) > MAX_PROGRAM_CHARS:
        raise ToolError(f"the program has {len(program)} characters; at most {MAX_PROGRAM_CHARS} are allowed")
    try:
        program.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("the program is not valid Unicode text (it holds a lone surrogate)") from None
    return program


def _named(world: CodingWorld, program: str, text: str) -> str:
    label = world.labels.get(program.strip())
    return f"{label}: {text}" if label else text


def run_tests(world: CodingWorld, program: str) -> str:
    program = program_source(program)
    task = world.task
    if not task.problem.examples:
        raise ToolError("this problem has no visible examples to run; submit is the only test")
    try:
        outcomes = world.judge.run(program, task.problem.examples, task.examples_digest)
    except SandboxError as exc:
        raise ToolError(f"the sandbox failed, not your program: {exc}") from None
    world.last_test_new = program not in world.tested
    world.tested.add(program)
    world.run_tests_calls += 1
    world.verdicts.update(outcome.status for outcome in outcomes)
    world.last_test_passed = all(outcome.status is TestStatus.PASSED for outcome in outcomes)
    if world.last_test_passed:
        world.passing.add(program)
    return _named(world, program, format_outcomes(outcomes, reveal=True))


def submit(world: CodingWorld, program: str) -> str:
    program = program_source(program)
    task = world.task
    try:
        outcomes = world.judge.run(program, task.problem.hidden, task.hidden_digest)
    except SandboxError as exc:
        raise ToolError(f"the sandbox failed, not your program: {exc}") from None
    world.submitted, world.submission = program, outcomes
    verdicts = format_outcomes(outcomes, reveal=False).replace(" tests.", " hidden tests.", 1)
    return _named(world, program, f"Submitted. {verdicts}")


TOOLS: tuple[Tool, ...] = (
    Tool(
        "run_tests",
        "Run a Python program on the problem's visible examples; per example: passed, wrong output "
        "(expected vs got), runtime error (the traceback's last lines) or timeout.",
        (Arg("program", "string", PROGRAM_ENTITY, "The program's Python source (a fenced code block is accepted)."),),
        run_tests,
        latency_s=15.0,
    ),
    Tool(
        "submit",
        "Submit a Python program: it runs on the hidden tests (only their verdicts are shown) and the episode ends.",
        (Arg("program", "string", PROGRAM_ENTITY, "The program's Python source (a fenced code block is accepted)."),),
        submit,
        terminal=True,
        latency_s=15.0,
        kind="write",
    ),
)
