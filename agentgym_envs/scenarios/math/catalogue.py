"""-v1's problems by kind and split: each kind's units (a phrasing frame or a problem template)
and the templates a unit draws from.

Kinds, easiest first: ``addition`` and ``easy`` (an expression shown in the question, one unit
per phrasing frame: :mod:`.frames`), ``first_n`` (the sum of the first n integers: one
``sum_1_to_n`` call), ``guided`` (a range sum whose question names its plan: the sum up to b,
minus the sum up to a, plus a), ``medium`` (-v0's range sums and first-n sums with their plans
unnamed, and new ones) and ``hard`` (-v0's word problems and new ones). Every split has its
own units of every kind; train and test keep -v0's templates.
"""

from __future__ import annotations

from collections.abc import Callable

from agentgym_envs.levels import family

from .frames import FRAMED_KINDS, framed_units
from .templates import RANGE_SUM, TEMPLATES, Draw, Template, Values, increasing, uniform

KINDS = ("addition", "easy", "first_n", "guided", "medium", "hard")
SPLITS = ("train", "validation", "test")
Unit = tuple[str, tuple[Template, ...]]


def divisible_total(addend: str, x: str, y: str) -> Callable[[Draw], Values]:
    """``addend + x * y`` is a multiple of ``d``."""
    def draw_values(draw: Draw) -> Values:
        values = {x: draw.number(), y: draw.number(), "d": draw.number()}
        return {**values, addend: draw.congruent(-values[x] * values[y] % values["d"], values["d"])}
    return draw_values


def _new(name: str, difficulty: str, text: str, solution: str, draw: Callable[[Draw], Values]) -> Template:
    """A -v1 template of the split its name starts with."""
    return Template(name, name.split("-", 1)[0], difficulty, text, solution, draw)


def _v0(*names: str) -> tuple[Template, ...]:
    by_name = {t.name: t for t in TEMPLATES}
    return tuple(by_name[name] for name in names)


PLAN = " Plan: sum the integers up to {b}, subtract the sum of those up to {a}, then add {a} back."
FIRST_N = "sum_1_to_n({a})"

_FIRST_N: dict[str, tuple[Template, ...]] = {
    "train": (*_v0("train-first-n"),
              _new("train-first-n-coins", "medium",
                   "On day one {name} gets one coin, on day two two coins, and one more each day for {a} days. "
                   "How many coins does {name} get?", FIRST_N, uniform("a")),
              _new("train-first-n-triangle", "medium",
                   "A triangle of dots has one dot in its top row and one more in each row below, with {a} rows. "
                   "How many dots are there?", FIRST_N, uniform("a"))),
    "validation": (_new("validation-first-n-up-to", "medium",
                        "Add together every whole number from one up to {a}. What is the total?", FIRST_N,
                        uniform("a")),
                   _new("validation-first-n-stairs", "medium",
                        "A staircase has steps one block high, two blocks high, and so on up to {a} blocks high. "
                        "How many blocks does it use?", FIRST_N, uniform("a"))),
    "test": (_new("test-first-n-total", "medium",
                  "Find the total of all positive integers up to and including {a}.", FIRST_N, uniform("a")),
             _new("test-first-n-cans", "medium",
                  "Cans are stacked with {a} in the bottom row and one fewer in each row above, down to a single "
                  "can. How many cans are stacked?", FIRST_N, uniform("a")),
             _new("test-first-n-savings", "medium",
                  "{name} saves one dollar in the first week, two in the second, and one more each week for {a} "
                  "weeks. How many dollars does {name} save?", FIRST_N, uniform("a"))),
}


def _guided(name: str, question: str) -> Template:
    return _new(name, "medium", question + PLAN, RANGE_SUM, increasing)


_GUIDED: dict[str, tuple[Template, ...]] = {
    "train": (_guided("train-guided-range-sum", "What is the sum of all integers from {a} to {b}?"),
              _guided("train-guided-add-up", "Add up every whole number from {a} up to {b}, inclusive."),
              _guided("train-guided-log-stack",
                      "A stack of logs has {a} logs in the top row and one more in each row below it, down to {b} "
                      "logs in the bottom row. How many logs are in the stack?"),
              _guided("train-guided-tickets",
                      "Tickets numbered {a} through {b} each show their number. What do those numbers add up to?")),
    "validation": (_guided("validation-guided-whole-numbers",
                           "What do the whole numbers from {a} to {b} add up to?"),
                   _guided("validation-guided-tower",
                           "A tower has {a} blocks in its top layer and one more in each layer below, down to {b} "
                           "in the bottom layer. How many blocks does it use?")),
    "test": (_guided("test-guided-consecutive", "Compute the total of the consecutive integers {a} through {b}."),
             _guided("test-guided-auditorium",
                     "The rows of an auditorium are numbered {a} to {b}, and each row has as many seats as its "
                     "number. How many seats are in those rows?"),
             _guided("test-guided-calendar",
                     "On each of the days {a} to {b} of a challenge, {name} does as many push-ups as the day's "
                     "number. How many push-ups is that?")),
}

_MEDIUM: dict[str, tuple[Template, ...]] = {
    "train": _v0("train-range-sum", "train-range-add-up", "train-first-n", "train-log-stack"),
    "validation": (_new("validation-range-total", "medium",
                        "Find the total of the whole numbers {a} to {b}, both included.", RANGE_SUM, increasing),
                   _new("validation-pyramid-extra", "medium",
                        "A pyramid of cans has one can on top and one more in each row below, with {a} rows, and "
                        "{b} more cans stand beside it. How many cans are there?", "sum_1_to_n({a}) + {b}",
                        uniform("a", "b")),
                   _new("validation-two-sums", "medium",
                        "Add the sum of the first {a} positive integers to the sum of the first {b} positive "
                        "integers.", "sum_1_to_n({a}) + sum_1_to_n({b})", increasing)),
    "test": (*_v0("test-consecutive", "test-auditorium", "test-first-n-times", "test-first-n-gap"),
             _new("test-sweet-stack", "medium",
                  "{name} stacks boxes with {a} in the bottom row and one fewer in each row above, down to a "
                  "single box. Each box holds {b} sweets, and {c} loose sweets lie beside the stack. How many "
                  "sweets are there?", "sum_1_to_n({a}) * {b} + {c}", uniform("a", "b", "c")),
             _new("test-first-n-less", "medium",
                  "Subtract {b} from the sum of the first {a} positive integers. What remains?",
                  "sum_1_to_n({a}) - {b}", uniform("a", "b"))),
}

_HARD: dict[str, tuple[Template, ...]] = {
    "train": _v0("train-cookies", "train-wages", "train-pencils", "train-tank"),
    "validation": (_new("validation-orchard", "hard",
                        "An orchard has {a} rows of {b} trees, {c} trees are cut down, and each remaining tree "
                        "gives {d} apples. How many apples does the orchard give?", "({a} * {b} - {c}) * {d}",
                        uniform("a", "b", "c", "d")),
                   _new("validation-shelves", "hard",
                        "A library has {a} books and buys {b} boxes of {c} books. It puts {d} books on each "
                        "shelf. How many shelves does it fill?", "({a} + {b} * {c}) / {d}",
                        divisible_total("a", "b", "c")),
                   _new("validation-relay", "hard",
                        "{name} runs {a} meters, then {b} laps of {c} meters each, then {d} meters more. How many "
                        "meters does {name} run?", "{a} + {b} * {c} + {d}", uniform("a", "b", "c", "d"))),
    "test": (*_v0("test-warehouse", "test-road-trip", "test-club-fund", "test-printing"),
             _new("test-bakery-bags", "hard",
                  "A bakery bakes {a} trays of {b} rolls, adds {c} rolls left from yesterday, and packs them all "
                  "in bags of {d}. How many bags does it fill?", "({a} * {b} + {c}) / {d}",
                  divisible_total("c", "a", "b")),
             _new("test-garden", "hard",
                  "A garden has {a} beds of {b} plants. Then {c} plants die and {d} new ones are planted. How "
                  "many plants does the garden have?", "{a} * {b} - {c} + {d}", uniform("a", "b", "c", "d"))),
}
_TEMPLATED = {"first_n": _FIRST_N, "guided": _GUIDED, "medium": _MEDIUM, "hard": _HARD}


def units(split: str, kind: str) -> tuple[Unit, ...]:
    """The units of ``kind`` in ``split``: ``(unit id, the templates it draws from)``."""
    if split not in SPLITS or kind not in KINDS:
        raise ValueError(f"no -v1 units for split {split!r} and kind {kind!r}; splits {SPLITS}, kinds {KINDS}")
    if kind in FRAMED_KINDS:
        return framed_units(split, kind)
    return tuple((template.name, (template,)) for template in _TEMPLATED[kind][split])


def unit_ids(split: str, kinds: tuple[str, ...]) -> frozenset[str]:
    """Every unit a problem of ``kinds`` in ``split`` can be drawn from."""
    return frozenset(name for kind in kinds for name, _ in units(split, kind))


def splits_table() -> str:
    """Per -v1 level: the split unit and how many units each split holds (the ``Splits``
    section of the env's docstring)."""
    fam = family("math", 1)
    rows = ["| level | unit | train | validation | test |", "| --- | --- | --- | --- | --- |"]
    for label, kinds in [*((f"{lv.index} ({lv.name})", lv.kwargs["problems"]) for lv in fam.levels),
                         (f"v{fam.version}", ("easy", "medium", "hard"))]:
        unit = "phrasing frame" if set(kinds) <= set(FRAMED_KINDS) else "phrasing frame (expressions), template (others)"
        counts = " | ".join(str(len(unit_ids(split, kinds))) for split in SPLITS)
        rows.append(f"| {label} | {unit} | {counts} |")
    return "\n".join(rows)
