"""Phrasing frames of the problems that show their expression (-v1's additions and easy ones).

A frame is an opener and a closing clause around the expression (``Evaluate 3 * (4 - 2)
exactly.``); its id is the unit of generalisation of those problems. Openers and closers are
split by fragment, so a test frame shares neither with a train or validation frame: the same
plan (evaluate the expression, submit) in a wording never seen. The expression's shape comes
from the split's own shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from string import Formatter

from .templates import Template, uniform


@dataclass(frozen=True)
class Fragment:
    """A piece of phrasing: a short ``key`` (part of the frame id) and its ``text``."""

    key: str
    text: str


OPENERS: dict[str, tuple[Fragment, ...]] = {
    "train": (Fragment("calculate", "Calculate"), Fragment("work-out", "Work out"), Fragment("compute", "Compute"),
              Fragment("value-of", "Give the value of"), Fragment("result-of", "Tell me the result of"),
              Fragment("solve", "Solve")),
    "validation": (Fragment("resolve", "Resolve"), Fragment("find-out", "Find out"),
                   Fragment("get-result", "Get the result of"), Fragment("reduce", "Reduce")),
    # The first three with the first two closers hold -v0's test phrasings.
    "test": (Fragment("find-value", "Find the value of"), Fragment("evaluate", "Evaluate"),
             Fragment("determine", "Determine"), Fragment("figure-out", "Figure out"),
             Fragment("establish", "Establish")),
}
CLOSERS: dict[str, tuple[Fragment, ...]] = {
    "train": (Fragment("please", ", please."), Fragment("answer", " and give the answer."),
              Fragment("for-me", " for me."), Fragment("right-now", " right now."),
              Fragment("carefully", " carefully.")),
    "validation": (Fragment("precisely", " precisely."), Fragment("whole", " as a whole number."),
                   Fragment("report", " and report it.")),
    "test": (Fragment("plain", "."), Fragment("exactly", " exactly."), Fragment("state", " and state the result."),
             Fragment("last-digit", " to the last digit.")),
}
# The expressions' shapes: train's and test's are -v0's easy ones; validation has its own.
SHAPES: dict[str, dict[str, tuple[str, ...]]] = {
    "addition": {split: ("{a} + {b}",) for split in OPENERS},
    "easy": {
        "train": ("{a} + {b} * {c}", "({a} + {b}) * {c}", "{a} * {b} - {c}", "{a} * {b} + {c} * {d}"),
        "validation": ("({a} - {b}) * ({c} + {d})", "{a} * {b} + {c} - {d}", "{a} + {b} + {c} * {d}"),
        "test": ("{a} * ({b} - {c})", "({a} + {b}) * ({c} - {d})", "{a} * {b} * {c} - {d}"),
    },
}
FRAMED_KINDS = tuple(SHAPES)


def frame_id(split: str, opener: Fragment, closer: Fragment) -> str:
    return f"{split}-frame-{opener.key}-{closer.key}"


def _placeholders(shape: str) -> tuple[str, ...]:
    return tuple(field for _, field, _, _ in Formatter().parse(shape) if field)


@cache
def framed_units(split: str, kind: str) -> tuple[tuple[str, tuple[Template, ...]], ...]:
    """``(frame id, its templates: one per shape of the split)`` for every frame of ``split``,
    for a kind of :data:`FRAMED_KINDS`."""
    units = []
    for opener in OPENERS[split]:
        for closer in CLOSERS[split]:
            name = frame_id(split, opener, closer)
            text = f"{opener.text} {{expression}}{closer.text}"
            units.append((name, tuple(Template(name, split, "easy", text, shape, uniform(*_placeholders(shape)))
                                      for shape in SHAPES[kind][split])))
    return tuple(units)
