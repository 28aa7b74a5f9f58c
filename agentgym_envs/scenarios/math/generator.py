"""The seeded problem generator: task ``"<split>-<index>"`` is a pure function of both (and of
the version)."""

from __future__ import annotations

from functools import cache

import numpy as np

from . import catalogue
from .problems import DIFFICULTIES, MathProblem, solved
from .templates import ADDITION_TEMPLATES, NAMES, TEMPLATES, VALUE_RANGES, Draw, Redraw, Template

SPLIT_CODES = {"train": 1, "test": 2, "validation": 3}
MAX_DRAWS = 1_000
PROBLEM_KINDS = ("addition", *DIFFICULTIES)
"""The kinds of -v0; -v1's are :data:`.catalogue.KINDS`."""


def kinds_of(version: int) -> tuple[str, ...]:
    """The problem kinds a version generates."""
    return PROBLEM_KINDS if version == 0 else catalogue.KINDS


@cache
def templates_for(split: str, kind: str) -> tuple[Template, ...]:
    """-v0's templates of ``split`` of a difficulty, or of ``"addition"`` (one operation)."""
    if kind == "addition":
        return tuple(t for t in ADDITION_TEMPLATES if t.split == split)
    return tuple(t for t in TEMPLATES if t.split == split and t.difficulty == kind)


def generate_problem(split: str, index: int, kinds: tuple[str, ...] = DIFFICULTIES, version: int = 0) -> MathProblem:
    """The problem ``"<split>-<index>"``: a kind of ``kinds`` (:func:`kinds_of` the version),
    then one of its templates (-v1: one of its units, then one of the unit's templates), then
    numbers from the split's range such that every solution step is a positive whole number
    and the answer is not one of the question's numbers."""
    if version == 0:
        rng = np.random.default_rng([SPLIT_CODES[split], index])
        kind = kinds[int(rng.integers(len(kinds)))]
        options = templates_for(split, kind)
        template = options[int(rng.integers(len(options)))]
    else:
        rng = np.random.default_rng([SPLIT_CODES[split], index, version])
        kind = kinds[int(rng.integers(len(kinds)))]
        units = catalogue.units(split, kind)
        _, options = units[int(rng.integers(len(units)))]
        template = options[int(rng.integers(len(options)))]
    return instantiate(template, f"{split}-{index}", split, rng)


def instantiate(template: Template, task_id: str, split: str, rng: np.random.Generator) -> MathProblem:
    """``template`` with a name and numbers of ``split`` drawn from ``rng``."""
    name = NAMES[split][int(rng.integers(len(NAMES[split])))]
    draw = Draw(rng, *VALUE_RANGES[split])
    for _ in range(MAX_DRAWS):
        try:
            values = template.draw(draw)
        except Redraw:
            continue
        solution = template.solution.format(**values)
        answer, steps = solved(solution)
        if answer not in values.values() and all(isinstance(s.result, int) and s.result > 0 for s in steps):
            shows_expression = "{expression}" in template.text
            question = template.text.format(expression=solution, name=name, **values)
            return MathProblem(
                task_id, question, answer, solution, template.difficulty,
                expression=solution if shows_expression else None, template=template.name,
            )
    raise RuntimeError(f"template {template.name} found no valid numbers in {MAX_DRAWS} draws")  # pragma: no cover
