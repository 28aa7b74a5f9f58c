"""``AgentGym/Math-v1`` (and ``-v0``): the math scenario run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.levels import check_version, with_level

from .scenario import MathScenario


class MathEnv(ToolUseEnv):
    """An agent solves a math problem with calculator tools and submits the answer.

    ## Description

    Problems are generated from a seed; each difficulty is drawn with probability 1/3: an
    arithmetic expression written in the question (easy, `What is 37 + 12 * 5?`), sums of
    integer ranges (medium), word problems whose numbers must be combined in the right order
    (hard). The splits are disjoint in their units and their values. `-v0`: train and test,
    12 train and 11 test templates with different phrasings (7 test templates also have
    solution shapes no train template has). `-v1`: train, validation and test; an expression
    problem's unit is its phrasing frame (an opener and a closing clause around the expression,
    split by fragment, so a test frame shares neither with train: 30 train, 12 validation, 20
    test frames, the last holding `-v0`'s test phrasings), the others' their template (test
    keeps `-v0`'s and adds new ones; validation has its own). Numbers from 2..99 in train,
    1000..2999 in validation and 100..999 in test, different names. Every step of a solution
    is a positive whole number. The evaluator never calls `eval`: it walks the parsed expression and refuses
    names, calls, attributes, huge powers (checked before computing), values past 10^15 and
    texts over 200 characters, each with a message saying what was refused.

    ## Action Space

    - `action_mode="structured"` (default): `MultiDiscrete([ 4 32 32 32])`, the tool, then
      one entity row per argument. Rows 0-6 are the operations, then the question's numbers,
      the expression (easy problems) and every computed value, so results can be operands and
      answers. `action_masks()` / `sample_mask()` as in every structured env.
    - `action_mode="text"`: `Text(max_length=4096)`, one tool call in any form language models
      write (JSON, OpenAI `tool_calls`, fenced, `<tool_call>`, `calculator(operation="add",
      a=2, b=3)`).

    Tools: `calculator(operation, a, b)` (operation one of `add subtract multiply divide power
    floor_divide modulo`), `evaluate_expression(expression)`, `sum_1_to_n(n)` (n up to
    10^7), `submit_answer(value)` (ends the episode). Two calculator tools keep both action
    modes clean: a structured action fills every argument of its tool, so a tool taking an
    expression *or* an operation on two operands has no structured form.

    ## Observation Space

    `Text(max_length=9844)`: `PROBLEM` and the question, the recent calls and results, and the
    entity table (numbers shown with 2 decimals; the value behind a row is exact).

    With `observation="features"`: `Box(0, 1, (999,), float32)`, the episode's state as one
    vector (its parts: the core `ToolUseEnv`'s docstring).

    ## Rewards

    The answer's score: 1.0 when exact (relative error <= 1e-9), from 1.0 down to 0.5 linearly
    for a relative error up to 10%, 0 beyond or without an answer. Default `RewardConfig`: the
    score at the end, +0.05 for a correct call (a new value on the reference solution's path,
    in any order, or the exact answer submitted) and -0.02 for any other. Shaping never adds
    up to more than the 0.5 floor of partial credit, so the outcome dominates. A correct
    alternative decomposition is judged off-path. `reward_config={"mode": "outcome"}` gives
    the score alone.

    ## Starting State

    `reset(seed=s)` draws a problem of `split`; `options={"task_id": "test-17"}` picks one. The
    entity table holds the operations, the question's numbers and, for easy problems, the
    expression.

    ## Episode End

    Terminated when `submit_answer` runs; truncated after `max_turns` (10) calls or
    `max_invalid_calls` invalid calls.

    ## Arguments

    `action_mode`, `split`, `reward_config`, `max_turns`, `max_invalid_calls`,
    `history_turns`, `render_mode`, `observation` (`"text"` | `"features"`), `mask_repeats`
    (False: True masks calls already made), and `task_file`: JSONL, one problem per line with
    `task_id`, `question` (its numbers become entities), `answer`, `solution` (an arithmetic
    expression over the question's numbers, may call `sum_1_to_n`), optional `difficulty`,
    `expression` (written verbatim in the question) and `template`. Every line is checked so
    that the expert can solve it; a bad line fails with the file, line number and field.
    `version` (1, the default, or 0), `level` (see Levels) and `problems`, the kinds of problem
    generated: `"addition"` (one addition shown as an expression), `"easy"`, `"medium"`,
    `"hard"` (default: these three) and, at `-v1`, `"first_n"` (the sum of the first n
    integers: one `sum_1_to_n` call) and `"guided"` (a range sum whose question names its plan:
    the sum up to b, minus the sum up to a, plus a). `split`: `"train"`, `"test"` and, at
    `-v1`, `"validation"`; `info["unit_id"]` names the task's unit.

    ## Info and Metrics

    The contract's `info` keys (`task_id`, `unit_id`, `turn`, `tool_call`, `valid`, `correct`, `error`,
    `tokens_used`, `messages`; `action_mask`/`argument_mask` or `parse` by mode). At the end
    `outcome` and `metrics`: the contract's (`success` means exact, `score`,
    `tool_reliability`, `tokens_used`, `cost_reduction`, `time_savings`, `elapsed_s`, `turns`,
    `invalid_calls`, `correct_calls`) plus `answer_error` (relative error, capped at 1; 1 with
    no answer) and `answered`. Baselines (estimates): 400 tokens, 90 s. Success criteria:
    success >= 0.95, tool reliability >= 0.90, cost reduction >= 0.30, time savings >= 0.95.

    ## Levels

    `level=k` (or the id `AgentGym/Math-L<k>-v1`) sets `problems` as below; arguments given
    explicitly override it. Tools and spaces are the same at every level; each split keeps its
    own units and numbers at every level. The rungs between expressions and range sums (L2-L4)
    add one step of the range-sum plan at a time: its one-call part, then the whole plan named
    in the question, then unnamed plans beside the named ones.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (addition) | `AgentGym/Math-L0-v1` | one addition of two numbers, shown as an expression in a phrasing frame | 10 |
    | 1 (expressions) | `AgentGym/Math-L1-v1` | arithmetic expressions shown in the question (the top's easy problems) | 10 |
    | 2 (first-n) | `AgentGym/Math-L2-v1` | expressions and first-n sums: one `sum_1_to_n` call, then submit | 10 |
    | 3 (guided-ranges) | `AgentGym/Math-L3-v1` | + range sums whose question names the plan (sum to b, minus sum to a, plus a) | 10 |
    | 4 (mixed-ranges) | `AgentGym/Math-L4-v1` | expressions, guided range sums and the top's medium problems (plans unnamed), 1/3 each | 10 |
    | 5 (expressions-ranges) | `AgentGym/Math-L5-v1` | expressions and the top's medium problems, 1/2 each (-v0's L2) | 10 |
    | v1 | `AgentGym/Math-v1` | arithmetic expressions, range sums and word problems, 1/3 each | 10 |

    `-v0`'s ladder (`AgentGym/Math-L<k>-v0`, `version=0`):

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (addition) | `AgentGym/Math-L0-v0` | one addition of two numbers, shown as an expression | 10 |
    | 1 (expressions) | `AgentGym/Math-L1-v0` | arithmetic expressions shown in the question (-v0's easy problems) | 10 |
    | 2 (expressions-ranges) | `AgentGym/Math-L2-v0` | expressions and sums of integer ranges (-v0's easy and medium) | 10 |
    | v0 | `AgentGym/Math-v0` | arithmetic expressions, range sums and word problems, 1/3 each | 10 |

    ## Splits

    Per `-v1` level, the unit of generalisation (`info["unit_id"]`) and the units of each split:

    | level | unit | train | validation | test |
    | --- | --- | --- | --- | --- |
    | 0 (addition) | phrasing frame | 30 | 12 | 20 |
    | 1 (expressions) | phrasing frame | 30 | 12 | 20 |
    | 2 (first-n) | phrasing frame (expressions), template (others) | 33 | 14 | 23 |
    | 3 (guided-ranges) | phrasing frame (expressions), template (others) | 37 | 16 | 26 |
    | 4 (mixed-ranges) | phrasing frame (expressions), template (others) | 38 | 17 | 29 |
    | 5 (expressions-ranges) | phrasing frame (expressions), template (others) | 34 | 15 | 26 |
    | v1 | phrasing frame (expressions), template (others) | 38 | 18 | 32 |

    `-v0`'s units are its templates: 2 train and 2 test at L0, 4 and 3 at L1, 8 and 7 at L2,
    12 and 11 at the top.

    ## Version History

    - v0: initial version; text actions in every form language models write;
      `info["parse"]`; `sample_mask()`; levels L0-L2 below `-v0` (`level=`, `problems=`),
      `-v0` unchanged; `FlatDiscreteAction` numbers 256 calls a tool here (the scenario's
      `flat_capacity`; 64 before, which left a range sum's subtraction without an action), so
      a features policy trained on math before has a smaller action layer.
    - v1: a validation split; expression problems phrased in compositional frames (20 test
      units per level from L0 up); new medium and hard templates in validation and test; the
      ladder gains the first-n, guided-ranges and mixed-ranges rungs (L2-L4), and `-v0`'s L2
      is L5; `info["unit_id"]` is the template or frame (`-v0`: the template).
    """

    def __init__(self, level: int | None = None, version: int = 1, **kwargs: Any) -> None:
        version = check_version("math", version)
        kwargs = with_level("math", level, kwargs, version=version)
        super().__init__(MathScenario(kwargs.pop("problems", None), version), **kwargs)
        self.level, self.version = level, version
