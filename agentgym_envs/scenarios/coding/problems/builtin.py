"""The built-in problem sets and their fixed splits, per version.

Version 0: the 43 hand-written problems, split into train and test. Version 1: those same
problems in the same two splits, plus the generated problems (:mod:`.generated`), whose
families are split whole into train, validation and test.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Literal

from . import easy, hard, medium
from .generated import TEMPLATES, instantiate
from .model import Problem

Split = Literal["train", "validation", "test"]
TEST_FRACTION = 0.3
VALIDATION_FRACTION = 0.2  # of v1's problem families, after the test ones
SPLITS = {0: ("train", "test"), 1: ("train", "validation", "test")}


@functools.cache
def builtin_problems(split: Split | None = None, version: int = 0) -> tuple[Problem, ...]:
    """Every built-in problem of ``version`` (``split=None``), or those of one split, easy to hard."""
    if version not in SPLITS:
        raise ValueError(f"version must be one of {sorted(SPLITS)}, not {version!r}")
    if split is not None and split not in SPLITS[version]:
        raise ValueError(f"split must be one of {list(SPLITS[version])} or None at version {version}, not {split!r}")
    written = easy.PROBLEMS + medium.PROBLEMS + hard.PROBLEMS
    if version == 1:
        generated = generated_problems()
        if split is None:
            return written + generated
        families = _family_splits()
        ours = tuple(p for p in generated if families[p.family] == split)
        return (builtin_problems(split) if split != "validation" else ()) + ours
    if split is None:
        return written
    test_ids = _first_by_digest(written, TEST_FRACTION)
    return tuple(p for p in written if (p.id in test_ids) == (split == "test"))


@functools.cache
def generated_problems() -> tuple[Problem, ...]:
    """Every problem of every generated family, family by family (easy families first)."""
    return tuple(instantiate(template, p) for template in TEMPLATES for p in template.params)


@functools.cache
def _problem_index(version: int) -> dict[str, Problem]:
    return {p.id: p for p in builtin_problems(version=version)}


def get_problem(problem_id: str, version: int = 0) -> Problem:
    """The built-in problem of ``version`` (at 1: hand-written or generated) with this id."""
    try:
        return _problem_index(version)[problem_id]
    except KeyError:
        raise KeyError(f"no built-in coding problem {problem_id!r} at version {version}") from None


def _family_splits() -> dict[str, str]:
    """Each generated family's split: per difficulty, in sha256 order of the names, the first
    ``TEST_FRACTION`` test, the next ``VALIDATION_FRACTION`` validation, the rest train."""
    splits: dict[str, str] = {}
    for difficulty in {t.difficulty for t in TEMPLATES}:
        names = sorted((t.name for t in TEMPLATES if t.difficulty == difficulty), key=_digest)
        tests = round(len(names) * TEST_FRACTION)
        validations = round(len(names) * VALIDATION_FRACTION)
        for rank, name in enumerate(names):
            splits[name] = "test" if rank < tests else "validation" if rank < tests + validations else "train"
    return splits


def _first_by_digest(problems: tuple[Problem, ...], fraction: float) -> frozenset[str]:
    """Per difficulty, the ``fraction`` of ids that come first in sha256 order: a split that
    is stratified, deterministic, and independent of the order of the files."""
    test_ids: set[str] = set()
    for difficulty in {p.difficulty for p in problems}:
        ids = sorted((p.id for p in problems if p.difficulty == difficulty), key=_digest)
        test_ids.update(ids[: round(len(ids) * fraction)])
    return frozenset(test_ids)


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()
