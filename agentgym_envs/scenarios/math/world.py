"""The per-episode state of a math problem: what the tools produced and what was submitted."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentgym_envs.core import ToolCall

from .arithmetic import Number


@dataclass
class MathWorld:
    """Mutable state of one episode.

    ``plan`` holds the expert's calls, each with its normalized form (whose ``key`` the calls made are
    compared by); ``useful`` the values on the
    reference solution's path (its intermediate results and the answer); ``produced`` every
    value a tool computed so far; ``last_result`` / ``last_result_new`` the latest one and
    whether it was new; ``submitted`` the answer given (None until submit_answer runs).
    """

    plan: tuple[tuple[ToolCall, ToolCall], ...]
    useful: frozenset[Number]
    produced: set[Number] = field(default_factory=set)
    last_result: Number | None = None
    last_result_new: bool = False
    submitted: float | None = None
