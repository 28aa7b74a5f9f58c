"""AgentGym/Math-v1 (and -v0): an agent solves math problems with a calculator and submits the answer.

Difficulties: arithmetic expressions (easy), sums of integer ranges (medium) and multi-step
word problems whose numbers must be combined in the right order (hard). The answer earns
1.0 when exact, 0.5..1.0 (linear in the relative error) within 10%, else 0.
"""

from __future__ import annotations

from .env import MathEnv
from .generator import generate_problem
from .problems import MathProblem
from .scenario import MathScenario, solution_plan

__all__ = ["MathEnv", "MathProblem", "MathScenario", "generate_problem", "solution_plan"]
