"""CodingScenario: write or pick a program, test it on the examples, submit it to the hidden tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentgym_envs.core import Outcome, RewardConfig, Scenario, TaskSource, ToolCall

from .judge import CODING_LIMITS, SHARED_CACHE, Judge
from .problems import SPLITS
from .runner import TestStatus
from .sandbox import Sandbox, SandboxLimits
from .tasks import BuiltinTasks, CodingTask, task_from_row
from .tools import PROGRAM_ENTITY, TOOLS
from .world import CodingWorld

MAX_PROGRAMS = 6  # entity rows at version 0: the solution and up to five wrong candidates
V1_PROGRAMS = 20  # programs a version 1 task offers by default
SLACK_TURNS = 4  # version 1's turns beyond one test of every program
INSTRUCTIONS = (
    "You are solving a programming problem in Python with tools, one call per turn: run_tests(program) "
    "runs a program on the visible examples and shows each verdict; submit(program) runs it on the hidden "
    "tests and ends the episode."
)
CANDIDATES_NOTE = (
    "CANDIDATE PROGRAMS are listed under ENTITIES as 'program [i]'; exactly one of them passes every "
    "hidden test."
)
# The outcome dominates: 1 when every hidden test passes (partial-credit mode: the fraction
# passed), else 0. Repeated tests, invalid calls and wrong submissions cost 0.05. On success,
# up to 0.2 more for time saved against a 300 s baseline: each call takes 15 simulated
# seconds, so every test costs 0.01 of that bonus -- testing pays only when it changes the
# choice.
CODING_REWARDS = RewardConfig(
    success=1.0, failure=0.0, correct_call=0.0, incorrect_call=-0.05, token_efficiency=0.0, speed=0.2
)
VERDICT_METRICS = {status: f"run_tests_{status.value}" for status in TestStatus}


class CodingScenario(Scenario):
    """Built-in problems with candidate programs, or a user's LiveCodeBench/DeepCoder problems.

    Args:
        partial_credit: score a submission by the fraction of hidden tests it passes
            (success still needs them all); by default the score is 1 or 0.
        candidates: offer the solution and its wrong candidates as ``program`` entities
            (structured mode needs them; turn them off to have a text agent write code).
        limits: per-test sandbox limits.
        cache_results: reuse the outcomes of identical runs (see :mod:`.judge`).
        sandbox: ``"auto"`` runs programs in network, mount and pid namespaces (as root,
            or in a user namespace) and raises :class:`~.sandbox.IsolationUnavailable` at
            the first run where neither can be made; ``"strict"`` raises it at
            construction; ``"none"`` runs them without isolation, with a warning (see
            :mod:`.sandbox`).
        difficulties: the built-in problems' tiers drawn from (None: all).
        subtle_candidates: offer the wrong candidates that pass every visible example and
            fail only hidden tests (False: only those the examples catch).
        distractors: offer this many more wrong programs, solutions of other problems of the
            split, which fail the visible examples: a pick at random rarely succeeds, a test
            tells them apart.
        version: the problem set and its splits: 0 (hand-written problems; train and test) or
            1 (hand-written and generated problems; train, validation and test; every program
            but the solution fails a visible example; see :mod:`.tasks`).
        programs: at version 1, the programs each task offers (default 20); the turn limit
            is that many plus 4.
    """

    name = "coding"
    env_id = "AgentGym/Coding-v0"
    description = "Pick or write a Python program, test it on the examples, submit it to hidden tests; sandboxed."
    tools = TOOLS
    max_entities = MAX_PROGRAMS
    max_entity_chars = 1_600  # the longest candidate row is shown whole (tests check it)
    max_prompt_chars = 8_000
    max_result_chars = 4_000
    max_action_chars = 32_000
    max_turns = 10
    baseline_tokens = 2_000
    baseline_seconds = 300.0
    success_criteria = {"success": 0.95, "tool_reliability": 0.90, "cost_reduction": 0.30, "time_savings": 0.80}
    default_rewards = CODING_REWARDS
    gives_verdicts = True  # a test run's: every visible example passed, or not
    instructions = INSTRUCTIONS

    def __init__(
        self,
        partial_credit: bool = False,
        candidates: bool = True,
        limits: SandboxLimits = CODING_LIMITS,
        cache_results: bool = True,
        sandbox: str = "auto",
        difficulties: Sequence[str] | None = None,
        subtle_candidates: bool = True,
        distractors: int = 0,
        version: int = 0,
        programs: int | None = None,
    ) -> None:
        if version >= 1 and (subtle_candidates or distractors):
            raise ValueError("at version 1 no candidate passes every visible example and tasks hold `programs` "
                             "programs: subtle_candidates=True and distractors are version 0's")
        if version >= 1 and programs is None:
            programs = V1_PROGRAMS
        if difficulties is not None and (not difficulties or set(difficulties) - set(self.difficulties)):
            raise ValueError(f"difficulties must be a non-empty subset of {list(self.difficulties)}, got {difficulties!r}")
        if distractors < 0:
            raise ValueError(f"distractors must be >= 0, got {distractors!r}")
        self.tiers = difficulties
        self.subtle_candidates, self.distractors = subtle_candidates, distractors
        self.version, self.programs = version, programs
        self.splits = SPLITS[version]
        self.max_entities = MAX_PROGRAMS + distractors if programs is None else programs
        if programs is not None:
            self.max_turns = programs + SLACK_TURNS
        self.partial_credit = partial_credit
        self.candidates = candidates
        self.sandbox = Sandbox(sandbox)
        self.judge = Judge(limits, SHARED_CACHE if cache_results else None, self.sandbox)

    def close(self) -> None:
        """Stop the sandbox's fork server (a later run starts it again)."""
        self.sandbox.close()

    def task_source(self, split: str) -> TaskSource:
        return BuiltinTasks(split, self.candidates, self.tiers, self.subtle_candidates, self.distractors,
                            self.version, self.programs)

    def unit_id(self, task: CodingTask) -> str:
        """The coding problem the task poses (the splits are disjoint in problems)."""
        return task.problem.id

    def task_from_dict(self, data: dict[str, Any]) -> CodingTask:
        return task_from_row(data)

    def new_world(self, task: CodingTask) -> CodingWorld:
        labels = {program.strip(): f"program [{row}]" for row, program in enumerate(task.programs)}
        return CodingWorld(task, self.judge, labels)

    def prompt(self, task: CodingTask) -> str:
        text = f"PROBLEM\n{task.problem.prompt()}"
        return f"{text}\n\n{CANDIDATES_NOTE}" if task.programs else text

    def initial_entities(self, task: CodingTask) -> Iterable[tuple[str, Any]]:
        for program in task.programs:
            yield PROGRAM_ENTITY, program

    def judge_call(self, task: CodingTask, world: CodingWorld, call: ToolCall) -> bool:
        """Right: testing a program not tested before, or submitting one that passes every hidden test."""
        if call.name == "submit":
            return world.solved
        return world.last_test_new

    def verdict(self, task: CodingTask, world: CodingWorld, call: ToolCall) -> bool | None:
        """A test run's: whether the program passed every visible example (a submission: None)."""
        return world.last_test_passed if call.name == "run_tests" else None

    def progress(self, task: CodingTask, world: CodingWorld, correct_calls: int) -> float:
        """Half for having tested a program that passes every visible example, all of it for a
        solved task: the potential of ``RewardConfig(mode="potential")``."""
        return 1.0 if world.solved else 0.5 * bool(world.passing)

    def grade(self, task: CodingTask, world: CodingWorld) -> Outcome:
        if world.submission is None:
            return Outcome(False, 0.0, "no program submitted")
        passed, total = world.hidden_passed, len(world.submission)
        score = passed / total if self.partial_credit else float(world.solved)
        return Outcome(world.solved, score, f"the submission passed {passed}/{total} hidden tests")

    def expert_call(self, task: CodingTask, world: CodingWorld, history: Sequence[ToolCall]) -> ToolCall:
        """Test the reference solution once, then submit it."""
        if task.solution is None:
            raise ValueError(f"task {task.task_id!r} has no reference solution: the scripted expert needs a built-in problem")
        tested = any(call.name == "run_tests" for call in history)
        return ToolCall("submit" if tested else "run_tests", {"program": task.solution})

    def extra_metrics(self, task: CodingTask, world: CodingWorld) -> dict[str, float]:
        """One-hot ``submitted_without_testing`` / ``submitted_after_testing`` /
        ``never_submitted``; ``run_tests_calls`` (runs, not errors); ``run_tests_<verdict>``:
        how many example runs ended ``passed`` / ``wrong_output`` / ``runtime_error`` /
        ``timeout``; ``hidden_pass_fraction`` of the submission (0 without one)."""
        submitted = world.submission is not None
        metrics = {
            "submitted_without_testing": float(submitted and world.run_tests_calls == 0),
            "submitted_after_testing": float(submitted and world.run_tests_calls > 0),
            "never_submitted": float(not submitted),
            "run_tests_calls": float(world.run_tests_calls),
            "hidden_pass_fraction": world.hidden_passed / len(world.submission) if world.submission else 0.0,
        }
        metrics.update({name: float(world.verdicts[status]) for status, name in VERDICT_METRICS.items()})
        return metrics
