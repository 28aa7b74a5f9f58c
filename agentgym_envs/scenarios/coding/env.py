"""``AgentGym/Coding-v2`` (and ``-v1``, ``-v0``): the coding scenario run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.core.arguments import check_bool, check_int, check_names
from agentgym_envs.levels import check_version, content_version, latest_version, with_level

from .judge import CODING_LIMITS
from .sandbox import SandboxLimits
from .scenario import CodingScenario


class CodingEnv(ToolUseEnv):
    """An agent solves a programming problem in Python: it runs programs on the visible examples
    as often as it likes and ends the episode by submitting one program to the hidden tests.

    ## Description

    Version 1 (`AgentGym/Coding-v1`; the default, version 2, keeps its problems and adds a rung)
    adds 112 generated problems to the 43 hand-written ones of `-v0`: 14 problem families
    (`kth-largest`, `count-divisible`, `rotate-left`, `digit-sum-base`, `to-base`, ...), each instantiated at 8 values of its
    parameter, each problem with its own statement, reference solution, 2-4 visible examples
    and 8 hidden tests (the examples' inputs among them), and wrong variants (`off_by_one`,
    `wrong_parameter`, `wrong_operator`, `wrong_edge_case`, `crashes_on_empty`). The examples
    are chosen so that every wrong variant fails one, and a v1 task offers only programs that
    fail a visible example besides the solution (the hand-written problems' subtle candidates
    are left out; other families' solutions fill the rest): testing the programs and
    submitting the one that passes solves every v1 task, a random pick does not.

    Version 0: 43 built-in problems, each with a statement, 2-3 visible examples, 5-10 hidden tests
    (stdin/stdout or a function call), a reference solution and 1-4 realistic wrong candidates
    (`off_by_one`, `wrong_operator`, `wrong_edge_case`, `indentation_error`, `too_slow`,
    `crashes_on_empty`); most wrong candidates pass every visible example and fail only hidden
    tests, so testing on the examples is not enough. Splits are disjoint and stratified by
    difficulty: train 30 problems, test 13. Every program runs in a sandbox: a fork server per environment with
    CPU, wall, memory, file-size, process and output limits, a fresh unprivileged uid and a scrubbed
    environment; as root also in its own network, mount and pid namespaces, where it sees only its
    temporary directory and a read-only standard library (no network, no package, no hidden
    tests: the environment compares outputs). See `docs/coding_sandbox.md`.

    ## Action Space

    - `action_mode="structured"` (default): `MultiDiscrete([2 20])` at v1 (`[2 n]` for
      `programs=n`), `MultiDiscrete([2 6])` at `-v0`: the tool (`run_tests` or `submit`) and a
      candidate program's entity row. Needs the built-in problems with their
      candidates: refused with `task_file=` or `candidates=False`.
    - `action_mode="text"`: `Text(max_length=32000)`, one tool call in any form language
      models write, with the program's source as the argument; when the source holds a fenced
      code block, the first block's content runs.

    Tools: `run_tests(program)` (per visible example: passed, wrong output with input, expected
    and got, runtime error with the traceback's last lines, or timeout) and `submit(program)`
    (ends the episode; `Passed k/n hidden tests.` and each hidden test's verdict only).

    ## Observation Space

    `Text(max_length=74592)` at v1, `Text(max_length=52178)` at `-v0`: `PROBLEM` with the statement and its examples, the recent calls
    and results (4,000 characters each; the full text is in `info["messages"]`), then
    `ENTITIES`: one row per candidate program, shown whole.

    With `observation="features"`: `Box(0, 1, (657,), float32)` at v1 and v2 (473 at v2's L0), the episode's state as one
    vector (its parts: the core `ToolUseEnv`'s docstring).

    ## Rewards

    Default `RewardConfig`: the score at the end (1 when the submission passes every hidden
    test, else 0; with `partial_credit=True` the fraction passed), -0.05 for a repeated test,
    an invalid call or a wrong submission, and on success up to +0.2 for time saved (each call
    takes 15 simulated seconds against a 300 s baseline). A call is correct when it tests a
    program not tested before, or submits one that passes every hidden test.
    `reward_config={"mode": "outcome"}` gives the score alone.

    ## Starting State

    Task ids are `"<problem-id>#<shuffle>"` in every split (train, validation, test): the
    problem (e.g. `kth-largest-3`, the family and its parameter) and the order of its candidates.
    `reset(seed=s)` draws both, so the correct program moves from episode to episode;
    `options={"task_id": "two-sum#17"}` replays one (a bare problem id means shuffle 0).

    ## Episode End

    Terminated when `submit` runs; truncated after `max_turns` (10 at `-v0`; at v1 the
    `programs` plus 4, 24) calls or
    `max_invalid_calls` invalid calls.

    ## Arguments

    `partial_credit` (False), `candidates` (True: offer the candidate programs as entities;
    False for a text agent writing its own code), `subtle_candidates` (True: offer the wrong
    candidates that pass every visible example; False: only those the examples catch),
    `distractors` (0: this many more wrong programs, solutions of other problems of the split,
    each failing the examples; the entity table grows by as many rows), `limits` (per-test `SandboxLimits`: 1 s
    CPU, 4 s wall, 256 MB, 8 MB per file, 16 tasks, 64 KiB output), `cache_results` (True:
    identical runs are answered from a bounded, process-wide cache), `sandbox` (`"auto"`:
    namespaces, as root or in a user namespace, else an error at the first run; `"strict"`:
    the same error when the env is made; `"none"`: no isolation, with a warning), `task_file` (text mode
    only: LiveCodeBench rows with `question_content`, `public_test_cases`,
    `private_test_cases`, or DeepCoder rows with `problem` and `tests`; errors name the line
    and field), `difficulties` (the built-in problems' tiers drawn from, default all), `level`
    (see Levels), `version` (2, the default, 1 or 0), `programs` (from v1, default 20: the
    programs a task offers; `subtle_candidates` and `distractors` are v0's), and the core's `action_mode`, `split`, `reward_config`, `max_turns`,
    `max_invalid_calls`, `history_turns`, `render_mode`, `observation` (`"text"` | `"features"`),
    `mask_repeats` (False: True masks calls already made).

    ## Info and Metrics

    The contract's `info` keys; at the end `outcome` and `metrics`: the contract's plus
    `submitted_without_testing`, `submitted_after_testing`, `never_submitted` (they sum to
    1), `run_tests_calls`, `run_tests_passed`, `run_tests_wrong_output`,
    `run_tests_runtime_error`, `run_tests_timeout` (verdicts of all example runs) and
    `hidden_pass_fraction`. Baselines (estimates): 2000 tokens, 300 s. Success criteria:
    success >= 0.95, tool reliability >= 0.90, cost reduction >= 0.30, time savings >= 0.80.

    ## Levels

    Version 2 (`level=k`, or the id `AgentGym/Coding-L<k>-v2`) keeps version 1's problems, splits
    and spaces and adds a rung between its two levels, where the best trained test success fell
    from 0.99 to 0.63: the medium problems with L0's 12 programs and 16 turns.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (easy-12) | `AgentGym/Coding-L0-v2` | easy problems; 12 programs, only the solution passes the visible examples | 16 |
    | 1 (easy-medium-12) | `AgentGym/Coding-L1-v2` | easy and medium problems; 12 programs | 16 |
    | 2 (easy-medium-16) | `AgentGym/Coding-L2-v2` | easy and medium problems; 16 programs | 20 |
    | v2 | `AgentGym/Coding-v2` | all tiers (easy, medium, hard); 20 programs | 24 |

    Version 1 (`level=k`, or the id `AgentGym/Coding-L<k>-v1`): every rung has only wrong
    programs the examples catch, so "test until a program passes, submit it" solves every
    level within its turns (the programs plus 4) and the features policy's verdicts suffice;
    the rungs grow the programs to test (12, 16, 20: more turns to spend, a longer search, a
    random pick's success about 1/12, 1/16, 1/20) and the tiers (easy; + medium; + the
    hand-written hard problems, more code for a reader). Random on validation (200 episodes):
    L0 0.08.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (easy-12) | `AgentGym/Coding-L0-v1` | easy problems; 12 programs, only the solution passes the visible examples | 16 |
    | 1 (easy-medium-16) | `AgentGym/Coding-L1-v1` | easy and medium problems; 16 programs | 20 |
    | v1 | `AgentGym/Coding-v1` | all tiers (easy, medium, hard); 20 programs | 24 |

    Splits at v1 and v2 (unit: the coding problem, `info["unit_id"]`): the generated problems are
    split by family (3 easy and 1 medium family test, 2 easy and 1 medium validation, 7
    train), so a test problem's statement, solution and tests, and its family's, are never
    seen in train or validation; the hand-written problems keep their `-v0` split. Problems
    per split:

    | level | unit | train | validation | test |
    | --- | --- | --- | --- | --- |
    | `Coding-L0-v1` | coding problem | 50 | 16 | 28 |
    | `Coding-L1-v1` | coding problem | 77 | 24 | 41 |
    | `Coding-v1` | coding problem | 86 | 24 | 45 |
    | `Coding-L0-v2` | coding problem | 50 | 16 | 28 |
    | `Coding-L1-v2` | coding problem | 77 | 24 | 41 |
    | `Coding-L2-v2` | coding problem | 77 | 24 | 41 |
    | `Coding-v2` | coding problem | 86 | 24 | 45 |
    | `Coding-L0-v0` | coding problem | 10 | - | 4 |
    | `Coding-L1-v0` | coding problem | 21 | - | 9 |
    | `Coding-v0` | coding problem | 30 | - | 13 |

    Version 0: `level=k` (or the id `AgentGym/Coding-L<k>-v0`) sets the arguments below; arguments
    given explicitly override them. Tools are those of `-v0` at every level (L0's entity rows,
    hence its spaces, are more: 18), and each tier's
    test problems are held out of train as in `-v0`. L0 offers 13-15 programs of which only the
    solution passes the visible examples (its other candidates are ones the examples catch,
    the rest are solutions of other problems): a random pick rarely succeeds, while testing
    until a program passes and submitting it always does, within its 20 turns. From L1 up the wrong candidates
    are the written ones (2-4, most passing every example), and a random policy's success is
    near 0.3.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (easy-distractors) | `AgentGym/Coding-L0-v0` | the easy problems (10 train, 4 test); 13-15 programs, only the solution passes the examples | 20 |
    | 1 (easy-medium) | `AgentGym/Coding-L1-v0` | easy and medium problems (21 train, 9 test) | 10 |
    | v0 | `AgentGym/Coding-v0` | all 43 problems: easy, medium and hard | 10 |

    ## Version History

    - v0: initial version; text actions in every form language models write;
      `info["parse"]`; `sample_mask()`; `sandbox=`: network, mount and pid namespaces
      as root, hidden tests kept outside the program's view; the same without root, in a
      user namespace, and no unisolated run unless `sandbox="none"`; levels L0-L1 below
      `-v0` (`level=`, `difficulties=`), `-v0` unchanged.
    - v1: 112 generated problems (14 families) beside the 43 hand-written ones; a validation
      split (whole families); at least 20 test problems per level; every offered wrong
      program fails a visible example (`programs=` per task: 12, 16, 20 up the ladder);
      `info["unit_id"]` is the problem. `-v0` keeps its tasks.
    - v2: a rung (easy and medium problems, 12 programs) between v1's L0 and L1, which become L0
      and L2; the problems, splits, spaces and top are v1's.
    """

    def __init__(
        self,
        partial_credit: bool = False,
        candidates: bool = True,
        limits: SandboxLimits = CODING_LIMITS,
        cache_results: bool = True,
        sandbox: str = "auto",
        difficulties: Sequence[str] | None = None,
        subtle_candidates: bool | None = None,
        distractors: int | None = None,
        level: int | None = None,
        version: int | None = None,
        programs: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.version = check_version("coding", latest_version("coding") if version is None else version)
        version = content_version("coding", self.version)  # the problems, splits and spaces built
        for name, switch in (("partial_credit", partial_credit), ("candidates", candidates), ("cache_results", cache_results)):
            check_bool(name, switch)
        check_bool("subtle_candidates", subtle_candidates, optional=True)
        check_int("distractors", distractors, 0, optional=True)
        check_int("programs", programs, 1, optional=True)
        check_names("difficulties", difficulties)
        if not isinstance(limits, SandboxLimits):
            raise ValueError(f"limits must be a SandboxLimits, got {limits!r}")
        if version == 0 and programs is not None:
            raise ValueError("programs is an argument of version 1; at version 0 use distractors")
        given = {"difficulties": difficulties, "subtle_candidates": subtle_candidates, "distractors": distractors,
                 "programs": programs}
        kwargs = with_level("coding", level, {**kwargs, **{k: v for k, v in given.items() if v is not None}}, self.version)
        difficulties, programs = kwargs.pop("difficulties", None), kwargs.pop("programs", None)
        subtle_candidates, distractors = kwargs.pop("subtle_candidates", version == 0), kwargs.pop("distractors", 0)
        if kwargs.get("action_mode", "structured") == "structured":
            if kwargs.get("task_file") is not None:
                raise ValueError(
                    "AgentGym/Coding: task_file problems have no candidate programs, and the structured "
                    "action mode can only choose among candidates; use action_mode='text'"
                )
            if not candidates:
                raise ValueError(
                    "AgentGym/Coding: candidates=False leaves the structured action mode nothing to "
                    "choose; use action_mode='text'"
                )
        scenario = CodingScenario(partial_credit, candidates, limits, cache_results, sandbox, difficulties,
                                  subtle_candidates, distractors, version, programs)
        super().__init__(scenario, **kwargs)
        self.level = level

    def close(self) -> None:
        self.scenario.close()
        super().close()
