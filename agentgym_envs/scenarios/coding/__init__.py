"""AgentGym/Coding-v0: an agent tests Python programs on a problem's examples and submits one
to its hidden tests.

The machinery: a sandbox for untrusted programs (:mod:`.sandbox`), a test runner
(:mod:`.runner`), a cached judge (:mod:`.judge`), the problem set (:mod:`.problems`), tasks
with shuffled candidate programs (:mod:`.tasks`), the tools, the scenario and the env.
"""

from .env import CodingEnv
from .judge import CODING_LIMITS, SHARED_CACHE, Judge, OutcomeCache
from .runner import FunctionTest, StdinTest, Test, TestOutcome, TestStatus, format_outcomes, run_tests
from .sandbox import (
    IsolationUnavailable,
    Job,
    RunResult,
    Sandbox,
    SandboxError,
    SandboxLimits,
    SandboxWarning,
    Status,
    run_batch,
    run_program,
)
from .scenario import CodingScenario
from .tasks import CodingTask

__all__ = [
    "CODING_LIMITS",
    "SHARED_CACHE",
    "CodingEnv",
    "CodingScenario",
    "CodingTask",
    "FunctionTest",
    "IsolationUnavailable",
    "Job",
    "Judge",
    "OutcomeCache",
    "RunResult",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxWarning",
    "Status",
    "StdinTest",
    "Test",
    "TestOutcome",
    "TestStatus",
    "format_outcomes",
    "run_batch",
    "run_program",
    "run_tests",
]
