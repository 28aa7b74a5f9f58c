"""``AgentGym/Coding-v0``: the coding scenario run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolUseEnv

from .judge import CODING_LIMITS
from .sandbox import SandboxLimits
from .scenario import CodingScenario


class CodingEnv(ToolUseEnv):
    """``AgentGym/Coding-v0``.

    Keyword arguments as :class:`ToolUseEnv`, plus those of :class:`CodingScenario`:
    ``partial_credit``, ``candidates``, ``limits``, ``cache_results`` and ``sandbox``. The
    structured action mode chooses among candidate programs, so it needs the built-in
    problems with their candidates: with ``task_file=`` (problems without candidates) or
    ``candidates=False`` it is refused; use ``action_mode="text"``.
    """

    def __init__(
        self,
        partial_credit: bool = False,
        candidates: bool = True,
        limits: SandboxLimits = CODING_LIMITS,
        cache_results: bool = True,
        sandbox: str = "auto",
        **kwargs: Any,
    ) -> None:
        if kwargs.get("action_mode", "structured") == "structured":
            if kwargs.get("task_file") is not None:
                raise ValueError(
                    "AgentGym/Coding-v0: task_file problems have no candidate programs, and the structured "
                    "action mode can only choose among candidates; use action_mode='text'"
                )
            if not candidates:
                raise ValueError(
                    "AgentGym/Coding-v0: candidates=False leaves the structured action mode nothing to "
                    "choose; use action_mode='text'"
                )
        super().__init__(CodingScenario(partial_credit, candidates, limits, cache_results, sandbox), **kwargs)

    def close(self) -> None:
        self.scenario.close()
        super().close()
