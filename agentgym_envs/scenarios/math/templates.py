"""Problem templates and value ranges, disjoint between the splits (-v1 adds validation).

A template's ``text`` and ``solution`` share placeholders ``{a}``, ``{b}``, ... (numbers
drawn from the split's range) and ``{name}``; ``{expression}`` in the text stands for the
solution itself (easy problems show the arithmetic to do). The test split has its own
phrasings, its own solution shapes and numbers in a range train never uses; -v1's validation
split (:mod:`.catalogue`) has its own numbers and names too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import gcd

import numpy as np

VALUE_RANGES: dict[str, tuple[int, int]] = {"train": (2, 99), "validation": (1000, 2999), "test": (100, 999)}
NAMES: dict[str, tuple[str, ...]] = {
    "train": ("Ana", "Ben", "Chloe", "Dev", "Emma", "Felix", "Gita", "Hugo"),
    "validation": ("Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tariq"),
    "test": ("Ingrid", "Jamal", "Keiko", "Lars", "Mirela", "Nnamdi"),
}


class Redraw(Exception):
    """The drawn values cannot satisfy the template; draw again."""


class Draw:
    """Random numbers for one problem from a split's value range."""

    def __init__(self, rng: np.random.Generator, low: int, high: int) -> None:
        self.rng, self.low, self.high = rng, low, high

    def number(self) -> int:
        return int(self.rng.integers(self.low, self.high + 1))

    def congruent(self, residue: int, modulus: int) -> int:
        """A number in range that is ``residue`` modulo ``modulus``."""
        first = self.low + (residue - self.low) % modulus
        count = (self.high - first) // modulus + 1
        if count <= 0:
            raise Redraw
        return first + modulus * int(self.rng.integers(count))

    def multiple_of(self, factor: int) -> int:
        return self.congruent(0, factor)

    def at_most(self, limit: int) -> int:
        """A number in range that is at most ``limit``."""
        if limit < self.low:
            raise Redraw
        return int(self.rng.integers(self.low, min(self.high, limit) + 1))


Values = dict[str, int]


def uniform(*names: str) -> Callable[[Draw], Values]:
    """Every placeholder drawn independently from the range."""
    return lambda draw: {name: draw.number() for name in names}


def increasing(draw: Draw) -> Values:
    """``a < b`` (a range from ``a`` up to ``b``)."""
    a, b = sorted((draw.number(), draw.number()))
    if a == b:
        raise Redraw
    return {"a": a, "b": b}


def product_below_a(draw: Draw) -> Values:
    """``b * c < a``, ``d`` free."""
    a = draw.number()
    b = draw.at_most((a - 1) // draw.low)
    return {"a": a, "b": b, "c": draw.at_most((a - 1) // b), "d": draw.number()}


def product_divisible_by_c(draw: Draw) -> Values:
    """``a * b`` is a multiple of ``c``."""
    a, c = draw.number(), draw.number()
    return {"a": a, "b": draw.multiple_of(c // gcd(a, c)), "c": c}


def product_minus_c_divisible_by_d(draw: Draw) -> Values:
    """``a * b - c`` is a multiple of ``d``."""
    a, b, d = draw.number(), draw.number(), draw.number()
    return {"a": a, "b": b, "c": draw.congruent(a * b % d, d), "d": d}


@dataclass(frozen=True)
class Template:
    """A problem shape: its phrasing, its solution and how its numbers are drawn.

    Drawn values are kept only if every step of the solution is a positive whole number
    (so divisions are exact, ranges run upwards and stock never goes negative).
    """

    name: str
    split: str
    difficulty: str
    text: str
    solution: str
    draw: Callable[[Draw], Values] = field(compare=False)


RANGE_SUM = "sum_1_to_n({b}) - sum_1_to_n({a}) + {a}"

TEMPLATES: tuple[Template, ...] = (
    # ------------------------------------------------------------------ train
    Template("train-expr-add-mul", "train", "easy", "What is {expression}?", "{a} + {b} * {c}", uniform("a", "b", "c")),
    Template("train-expr-sum-times", "train", "easy", "Calculate {expression}.", "({a} + {b}) * {c}", uniform("a", "b", "c")),
    Template("train-expr-mul-sub", "train", "easy", "Work out {expression}.", "{a} * {b} - {c}", uniform("a", "b", "c")),
    Template("train-expr-two-products", "train", "easy", "Compute {expression}.", "{a} * {b} + {c} * {d}",
             uniform("a", "b", "c", "d")),
    Template("train-range-sum", "train", "medium", "What is the sum of all integers from {a} to {b}?", RANGE_SUM,
             increasing),
    Template("train-range-add-up", "train", "medium",
             "Add up every whole number from {a} up to {b}, inclusive. What is the total?", RANGE_SUM, increasing),
    Template("train-first-n", "train", "medium", "What is the sum of the first {a} positive integers?", "sum_1_to_n({a})",
             uniform("a")),
    Template("train-log-stack", "train", "medium",
             "A stack of logs has {b} logs in the bottom row, one fewer in each row above it, and {a} logs in the "
             "top row. How many logs are in the stack?", RANGE_SUM, increasing),
    Template("train-cookies", "train", "hard",
             "A baker makes {a} batches of {b} cookies each and sells {c} cookies. How many cookies are left?",
             "{a} * {b} - {c}", uniform("a", "b", "c")),
    Template("train-wages", "train", "hard",
             "{name} has {a} dollars, earns {b} dollars a day for {c} days, and then spends {d} dollars. "
             "How many dollars does {name} have now?", "{a} + {b} * {c} - {d}", uniform("a", "b", "c", "d")),
    Template("train-pencils", "train", "hard",
             "A school buys {a} boxes of {b} pencils and shares them equally among {c} classes. "
             "How many pencils does each class get?", "{a} * {b} / {c}", product_divisible_by_c),
    Template("train-tank", "train", "hard",
             "A tank holds {a} liters of water. It leaks {b} liters an hour for {c} hours and is then topped up "
             "with {d} liters. How many liters does it hold now?", "{a} - {b} * {c} + {d}", product_below_a),
    # ------------------------------------------------------------------- test
    Template("test-expr-times-difference", "test", "easy", "Find the value of {expression}.", "{a} * ({b} - {c})",
             uniform("a", "b", "c")),
    Template("test-expr-sum-times-difference", "test", "easy", "Evaluate {expression} exactly.",
             "({a} + {b}) * ({c} - {d})", uniform("a", "b", "c", "d")),
    Template("test-expr-triple-product", "test", "easy", "Determine {expression}.", "{a} * {b} * {c} - {d}",
             uniform("a", "b", "c", "d")),
    Template("test-consecutive", "test", "medium", "Compute the total of the consecutive integers {a} through {b}.",
             RANGE_SUM, increasing),
    Template("test-auditorium", "test", "medium",
             "The rows of an auditorium are numbered {a} to {b}, and each row has as many seats as its number. "
             "How many seats are in those rows?", RANGE_SUM, increasing),
    Template("test-first-n-times", "test", "medium",
             "Take the sum of the first {a} positive integers and multiply it by {b}. What do you get?",
             "sum_1_to_n({a}) * {b}", uniform("a", "b")),
    Template("test-first-n-gap", "test", "medium",
             "How much larger is the sum of the first {b} positive integers than the sum of the first {a}?",
             "sum_1_to_n({b}) - sum_1_to_n({a})", increasing),
    Template("test-warehouse", "test", "hard",
             "A warehouse receives {a} pallets of {b} crates each, ships out {c} crates, and repacks the rest into "
             "stacks of {d} crates. How many stacks does it make?", "({a} * {b} - {c}) / {d}",
             product_minus_c_divisible_by_d),
    Template("test-road-trip", "test", "hard",
             "{name} drives at {a} km per hour for {b} hours, then at {c} km per hour for {d} hours. "
             "How many km does {name} drive in total?", "{a} * {b} + {c} * {d}", uniform("a", "b", "c", "d")),
    Template("test-club-fund", "test", "hard",
             "A club collects {a} dollars from each of its {b} members, pays a fee of {c} dollars, and splits what "
             "remains equally among {d} projects. How many dollars does each project get?", "({a} * {b} - {c}) / {d}",
             product_minus_c_divisible_by_d),
    Template("test-printing", "test", "hard",
             "A press prints {a} pages a minute for {b} minutes, and every book takes {c} pages. "
             "How many books does it print?", "{a} * {b} / {c}", product_divisible_by_c),
)

# One operation, shown as an expression: the problems of the ladder's lowest level
# (``agentgym_envs.levels``), kept apart from TEMPLATES so that -v0 draws as before.
ADDITION_TEMPLATES: tuple[Template, ...] = (
    Template("train-add", "train", "easy", "What is {expression}?", "{a} + {b}", uniform("a", "b")),
    Template("train-add-compute", "train", "easy", "Compute {expression}.", "{a} + {b}", uniform("a", "b")),
    Template("test-add", "test", "easy", "Find the value of {expression}.", "{a} + {b}", uniform("a", "b")),
    Template("test-add-total", "test", "easy", "Give the total {expression}.", "{a} + {b}", uniform("a", "b")),
)
