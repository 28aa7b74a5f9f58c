"""Coding problems: the built-in sets (with solutions and wrong candidate programs, split
into train and test at version 0; hand-written and generated, split into train, validation
and test at version 1) and a loader for LiveCodeBench / DeepCoder JSONL files."""

from .builtin import SPLITS, TEST_FRACTION, Split, builtin_problems, generated_problems, get_problem
from .external import ProblemFileError, load_problems_jsonl, problem_from_row
from .model import Candidate, CandidateKind, Difficulty, Problem, call, misindent, mutate

__all__ = [
    "SPLITS",
    "TEST_FRACTION",
    "Candidate",
    "CandidateKind",
    "Difficulty",
    "Problem",
    "ProblemFileError",
    "Split",
    "builtin_problems",
    "call",
    "generated_problems",
    "get_problem",
    "load_problems_jsonl",
    "misindent",
    "mutate",
    "problem_from_row",
]
