"""Generated problems (``Coding-v1``): problem families, each a statement, a reference solution
and wrong variants with one integer parameter, instantiated once per parameter value.

A family's problem ``<family>-<p>`` gets its own statement, solution, visible examples and hidden
tests. The inputs are drawn from a generator seeded by the family and ``p``; the expected
outputs are those of the reference solution, and the examples are chosen so that every wrong
variant (off by one, the neighbouring parameter, a wrong comparison, a missed edge case) fails
at least one of them: running a program on the examples tells the solution apart. The hidden
tests hold the examples' inputs and more. The programs are this module's own templates, run
in-process only here, to compute the tests; agents' programs run in the sandbox.
"""

from __future__ import annotations

import copy
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import Candidate, CandidateKind, Problem, call

POOL = 40  # random inputs drawn per problem, from which the examples and hidden tests are taken
HIDDEN = 8  # hidden tests per problem (the examples' inputs among them)
MAX_EXAMPLES = 4
Inputs = Callable[[np.random.Generator, int], tuple[Any, ...]]


@dataclass(frozen=True)
class Template:
    """A problem family: ``name`` (the id stem), ``difficulty``, the ``function`` to define,
    the parameter values, and the ``statement``, ``solution`` and ``wrong`` variants as format
    strings over ``{p}`` (and ``{nth}``, ``p`` as an ordinal; ``{p2}``, twice ``p``). The
    neighbouring parameter ``p + 1`` is always one more wrong variant. ``inputs(rng, p)``
    draws the arguments of one call; ``edges`` are arguments always among the hidden tests."""

    name: str
    difficulty: str
    function: str
    params: tuple[int, ...]
    statement: str
    solution: str
    wrong: tuple[tuple[CandidateKind, str], ...]
    inputs: Inputs
    edges: tuple[tuple[Any, ...], ...] = ()


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _fill(text: str, p: int) -> str:
    return text.format(p=p, nth=_ordinal(p), p2=2 * p)


def _ints(rng: np.random.Generator, low: int, high: int, shortest: int, longest: int) -> list[int]:
    return [int(x) for x in rng.integers(low, high + 1, int(rng.integers(shortest, longest + 1)))]


def _letters(rng: np.random.Generator, shortest: int, longest: int) -> str:
    return "".join(chr(97 + int(i)) for i in rng.integers(0, 26, int(rng.integers(shortest, longest + 1))))


def _steps(rng: np.random.Generator, p: int) -> list[int]:
    """Runs of numbers rising by ``p`` (or by something else), joined: streaks to find."""
    values: list[int] = []
    while len(values) < int(rng.integers(4, 12)):
        step = p if rng.random() < 0.6 else int(rng.integers(-3, p + 3))
        start = int(rng.integers(-10, 20))
        values += [start + step * i for i in range(int(rng.integers(1, 5)))]
    return values


def _function(source: str, name: str) -> Callable[..., Any] | None:
    """The function ``name`` that ``source`` defines (None when it does not compile)."""
    namespace: dict[str, Any] = {}
    try:
        exec(source, namespace)  # noqa: S102 - this module's own templates, never an agent's program
    except Exception:  # noqa: BLE001 - a broken variant may raise anything
        return None
    return namespace.get(name)


def _results(source: str, name: str, inputs: list[tuple[Any, ...]]) -> list[str]:
    """What ``name(*args)`` of ``source`` returns on each input, as JSON (a failure: ``!`` and why)."""
    function = _function(source, name)
    results = []
    for args in inputs:
        try:
            results.append(json.dumps(function(*copy.deepcopy(args))) if function else "!does not compile")
        except Exception as exc:  # noqa: BLE001 - a wrong variant may raise anything
            results.append(f"!raises {type(exc).__name__}")
    return results


def instantiate(template: Template, p: int) -> Problem:
    """The problem of ``template`` at parameter ``p`` (a ValueError when a wrong variant agrees
    with the solution on every input drawn: a template that cannot be told apart)."""
    solution = _fill(template.solution, p)
    wrong = [*((kind, _fill(source, p)) for kind, source in template.wrong),
             ("wrong_parameter", _fill(template.solution, p + 1))]
    rng = np.random.default_rng([zlib.crc32(template.name.encode()), p])
    drawn = {json.dumps(args): args for args in (template.inputs(rng, p) for _ in range(POOL))}
    edges = [args for args in template.edges if json.dumps(args) not in drawn]
    pool = [*drawn.values(), *edges]  # the first example is a drawn input
    right = _results(solution, template.function, pool)
    if any(r.startswith("!") for r in right):
        raise ValueError(f"{template.name}-{p}: the solution fails on an input")
    examples = [0]
    for kind, source in wrong:
        got = _results(source, template.function, pool)
        differs = [i for i in range(len(pool)) if got[i] != right[i]]
        if not differs:
            raise ValueError(f"{template.name}-{p}: the {kind} variant agrees with the solution on every input")
        if not set(differs) & set(examples):
            examples.append(differs[0])
    if len(examples) == 1:
        examples.append(1)
    if len(examples) > MAX_EXAMPLES:
        raise ValueError(f"{template.name}-{p}: {len(examples)} examples needed to catch every wrong variant")
    rest = [i for i in range(len(pool) - 1, -1, -1) if i not in examples]  # the edges first
    hidden = examples + rest[: HIDDEN - len(examples)]

    def tests(indices: list[int]) -> tuple[Any, ...]:
        return tuple(call(template.function, *pool[i], returns=json.loads(right[i])) for i in indices)

    return Problem(
        id=f"{template.name}-{p}",
        difficulty=template.difficulty,
        statement=_fill(template.statement, p),
        examples=tests(examples),
        hidden=tests(hidden),
        solution=solution,
        candidates=tuple(Candidate(kind, source, passes_examples=False) for kind, source in wrong),
        family=template.name,
    )


EIGHT = tuple(range(2, 10))
TEMPLATES: tuple[Template, ...] = (
    Template(
        "kth-largest", "easy", "kth_largest", EIGHT,
        "Write `kth_largest(nums: list[int]) -> int` that returns the {nth} largest value of `nums`, "
        "counting repeated values separately (in [5, 5, 1] the 1st and 2nd largest are both 5). "
        "`nums` holds at least {p} integers.",
        "def kth_largest(nums):\n    return sorted(nums, reverse=True)[{p} - 1]\n",
        (("off_by_one", "def kth_largest(nums):\n    return sorted(nums, reverse=True)[{p}]\n"),
         ("wrong_operator", "def kth_largest(nums):\n    return sorted(nums)[{p} - 1]\n"),
         ("wrong_edge_case", "def kth_largest(nums):\n    return sorted(set(nums), reverse=True)[{p} - 1]\n")),
        lambda rng, p: (_ints(rng, 0, 12, p, p + 6),),
    ),
    Template(
        "count-divisible", "easy", "count_divisible", EIGHT,
        "Write `count_divisible(nums: list[int]) -> int` that returns how many elements of `nums` are "
        "divisible by {p} (0 and negative numbers count as usual: -{p} and 0 are divisible by {p}).",
        "def count_divisible(nums):\n    return sum(1 for x in nums if x % {p} == 0)\n",
        (("wrong_operator", "def count_divisible(nums):\n    return sum(1 for x in nums if x % {p} != 0)\n"),
         ("off_by_one", "def count_divisible(nums):\n    count = 0\n    for i in range(1, len(nums)):\n"
                        "        if nums[i] % {p} == 0:\n            count += 1\n    return count\n"),
         ("wrong_edge_case", "def count_divisible(nums):\n    return sum(1 for x in nums if x > 0 and x % {p} == 0)\n")),
        lambda rng, p: (_ints(rng, -20, 40, 3, 9),),
    ),
    Template(
        "rotate-left", "easy", "rotate_left", tuple(range(3, 11)),
        "Write `rotate_left(items: list[int]) -> list[int]` that returns `items` rotated left by {p} "
        "positions: {p} times over, the first element moves to the end. `items` may be shorter than {p} "
        "or empty (then return an empty list).",
        "def rotate_left(items):\n    if not items:\n        return []\n    shift = {p} % len(items)\n"
        "    return items[shift:] + items[:shift]\n",
        (("crashes_on_empty", "def rotate_left(items):\n    shift = {p} % len(items)\n    return items[shift:] + items[:shift]\n"),
         ("wrong_operator", "def rotate_left(items):\n    if not items:\n        return []\n    shift = {p} % len(items)\n"
                            "    return items[len(items) - shift:] + items[:len(items) - shift]\n"),
         ("wrong_edge_case", "def rotate_left(items):\n    return items[{p}:] + items[:{p}]\n")),
        lambda rng, p: (_ints(rng, 0, 99, 0, 12),),
        edges=(([],),),
    ),
    Template(
        "digit-sum-base", "easy", "digit_sum", EIGHT,
        "Write `digit_sum(n: int) -> int` that returns the sum of the digits of the non-negative "
        "integer `n` written in base {p}.",
        "def digit_sum(n):\n    total = 0\n    while n > 0:\n        total += n % {p}\n        n //= {p}\n    return total\n",
        (("off_by_one", "def digit_sum(n):\n    total = 0\n    while n >= {p}:\n        total += n % {p}\n"
                        "        n //= {p}\n    return total\n"),
         ("wrong_edge_case", "def digit_sum(n):\n    return sum(int(digit) for digit in str(n))\n")),
        lambda rng, p: (int(rng.integers(0, 5000)),),
        edges=((0,),),
    ),
    Template(
        "count-above", "easy", "count_above", tuple(range(0, 8)),
        "Write `count_above(nums: list[int]) -> int` that returns how many elements of `nums` are "
        "strictly greater than {p}.",
        "def count_above(nums):\n    return sum(1 for x in nums if x > {p})\n",
        (("wrong_operator", "def count_above(nums):\n    return sum(1 for x in nums if x >= {p})\n"),
         ("off_by_one", "def count_above(nums):\n    return sum(1 for x in nums[:-1] if x > {p})\n"),
         ("wrong_edge_case", "def count_above(nums):\n    return sum(1 for x in nums if abs(x) > {p})\n")),
        lambda rng, p: (_ints(rng, -12, 15, 3, 9),),
    ),
    Template(
        "repeat-chars", "easy", "repeat_chars", EIGHT,
        "Write `repeat_chars(text: str) -> str` that returns `text` with every character written "
        "{p} times in a row, in place.",
        "def repeat_chars(text):\n    return \"\".join(ch * {p} for ch in text)\n",
        (("wrong_operator", "def repeat_chars(text):\n    return text * {p}\n"),
         ("off_by_one", "def repeat_chars(text):\n    return \"\".join(text[i] * {p} for i in range(1, len(text)))\n")),
        lambda rng, p: (_letters(rng, 1, 6),),
        edges=(("",),),
    ),
    Template(
        "shift-letters", "easy", "shift_letters", tuple(range(1, 9)),
        "Write `shift_letters(text: str) -> str` that returns `text` (lowercase letters a-z only) "
        "with every letter moved {p} places forward in the alphabet, wrapping around from z to a.",
        "def shift_letters(text):\n    return \"\".join(chr((ord(ch) - 97 + {p}) % 26 + 97) for ch in text)\n",
        (("wrong_edge_case", "def shift_letters(text):\n    return \"\".join(chr(ord(ch) + {p}) for ch in text)\n"),
         ("wrong_operator", "def shift_letters(text):\n    return \"\".join(chr((ord(ch) - 97 - {p}) % 26 + 97) for ch in text)\n")),
        lambda rng, p: (_letters(rng, 3, 8),),
    ),
    Template(
        "every-nth", "easy", "every_nth", EIGHT,
        "Write `every_nth(items: list[int]) -> list[int]` that returns the elements of `items` at "
        "positions 0, {p}, {p2}, ...: every {nth} element, starting with the first.",
        "def every_nth(items):\n    return items[::{p}]\n",
        (("off_by_one", "def every_nth(items):\n    return items[{p} - 1::{p}]\n"),
         ("wrong_edge_case", "def every_nth(items):\n    return items[{p}::{p}]\n")),
        lambda rng, p: (_ints(rng, 0, 99, 1, 20),),
        edges=(([],),),
    ),
    Template(
        "sum-multiples", "easy", "sum_multiples", EIGHT,
        "Write `sum_multiples(limit: int) -> int` that returns the sum of the positive multiples of "
        "{p} that are less than `limit` (0 when there are none).",
        "def sum_multiples(limit):\n    return sum(range({p}, limit, {p}))\n",
        (("off_by_one", "def sum_multiples(limit):\n    return sum(range({p}, limit + 1, {p}))\n"),
         ("wrong_operator", "def sum_multiples(limit):\n    return sum(x for x in range(1, limit) if x % {p})\n")),
        lambda rng, p: (int(rng.integers(0, 80)),),
    ),
    Template(
        "chunk-sums", "easy", "chunk_sums", EIGHT,
        "Write `chunk_sums(nums: list[int]) -> list[int]` that splits `nums` into consecutive chunks "
        "of {p} elements (the last chunk may be shorter) and returns the list of the chunks' sums.",
        "def chunk_sums(nums):\n    return [sum(nums[i:i + {p}]) for i in range(0, len(nums), {p})]\n",
        (("wrong_edge_case", "def chunk_sums(nums):\n    return [sum(nums[i:i + {p}]) for i in range(0, len(nums) - {p} + 1, {p})]\n"),
         ("off_by_one", "def chunk_sums(nums):\n    return [sum(nums[i:i + {p} - 1]) for i in range(0, len(nums), {p})]\n")),
        lambda rng, p: (_ints(rng, -9, 9, 1, 20),),
    ),
    Template(
        "longest-step-run", "medium", "longest_step_run", tuple(range(1, 9)),
        "Write `longest_step_run(nums: list[int]) -> int` that returns the length of the longest "
        "stretch of consecutive elements of `nums` in which each element is exactly {p} more than the "
        "one before it (one element alone is a stretch of length 1; an empty list gives 0).",
        "def longest_step_run(nums):\n    if not nums:\n        return 0\n    best = run = 1\n"
        "    for i in range(1, len(nums)):\n        if nums[i] - nums[i - 1] == {p}:\n            run += 1\n"
        "        else:\n            run = 1\n        best = max(best, run)\n    return best\n",
        (("wrong_operator", "def longest_step_run(nums):\n    if not nums:\n        return 0\n    best = run = 1\n"
                            "    for i in range(1, len(nums)):\n        if nums[i] - nums[i - 1] >= {p}:\n"
                            "            run += 1\n        else:\n            run = 1\n        best = max(best, run)\n"
                            "    return best\n"),
         ("wrong_edge_case", "def longest_step_run(nums):\n    if not nums:\n        return 0\n    best = run = 1\n"
                             "    for i in range(1, len(nums)):\n        if nums[i] - nums[i - 1] == {p}:\n"
                             "            run += 1\n        else:\n            best = max(best, run)\n"
                             "            run = 1\n    return best\n"),
         ("crashes_on_empty", "def longest_step_run(nums):\n    best = run = 1\n    for i in range(1, len(nums)):\n"
                              "        if nums[i] - nums[i - 1] == {p}:\n            run += 1\n        else:\n"
                              "            run = 1\n        best = max(best, run)\n    return best\n")),
        lambda rng, p: (_steps(rng, p),),
        edges=(([],),),
    ),
    Template(
        "max-window-sum", "medium", "max_window_sum", EIGHT,
        "Write `max_window_sum(nums: list[int]) -> int` that returns the largest sum of {p} "
        "consecutive elements of `nums` (`nums` holds at least {p} integers; they may be negative).",
        "def max_window_sum(nums):\n    return max(sum(nums[i:i + {p}]) for i in range(len(nums) - {p} + 1))\n",
        (("off_by_one", "def max_window_sum(nums):\n    return max(sum(nums[i:i + {p}]) for i in range(len(nums) - {p}))\n"),
         ("wrong_operator", "def max_window_sum(nums):\n    return min(sum(nums[i:i + {p}]) for i in range(len(nums) - {p} + 1))\n"),
         ("wrong_edge_case", "def max_window_sum(nums):\n    best = 0\n    for i in range(len(nums) - {p} + 1):\n"
                             "        best = max(best, sum(nums[i:i + {p}]))\n    return best\n")),
        lambda rng, p: (_ints(rng, -20, 12, p, p + 8),),
    ),
    Template(
        "kth-missing", "medium", "kth_missing", tuple(range(1, 9)),
        "Write `kth_missing(nums: list[int]) -> int` where `nums` is a strictly increasing list of "
        "positive integers: return the {nth} smallest positive integer that is not in `nums`.",
        "def kth_missing(nums):\n    present = set(nums)\n    count, value = 0, 0\n    while count < {p}:\n"
        "        value += 1\n        if value not in present:\n            count += 1\n    return value\n",
        (("wrong_edge_case", "def kth_missing(nums):\n    present = set(nums)\n    count, value = 0, -1\n"
                             "    while count < {p}:\n        value += 1\n        if value not in present:\n"
                             "            count += 1\n    return value\n"),
         ("off_by_one", "def kth_missing(nums):\n    return {p} + sum(1 for x in nums if x < {p})\n")),
        lambda rng, p: (sorted(int(x) for x in rng.choice(np.arange(1, 16), int(rng.integers(0, 9)), replace=False)),),
    ),
    Template(
        "to-base", "medium", "to_base", EIGHT,
        "Write `to_base(n: int) -> str` that returns the non-negative integer `n` written in base {p}, "
        "as a string of digits without leading zeros (\"0\" for 0).",
        "def to_base(n):\n    if n == 0:\n        return \"0\"\n    digits = \"\"\n    while n > 0:\n"
        "        digits = str(n % {p}) + digits\n        n //= {p}\n    return digits\n",
        (("wrong_edge_case", "def to_base(n):\n    digits = \"\"\n    while n > 0:\n        digits = str(n % {p}) + digits\n"
                             "        n //= {p}\n    return digits\n"),
         ("wrong_operator", "def to_base(n):\n    if n == 0:\n        return \"0\"\n    digits = \"\"\n    while n > 0:\n"
                            "        digits = digits + str(n % {p})\n        n //= {p}\n    return digits\n")),
        lambda rng, p: (int(rng.integers(0, 3000)),),
        edges=((0,),),
    ),
)
