"""The per-episode world the tau2 tools run against, and running one tool call on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentgym_envs.core.tools import Tool, ToolError

from .arguments import call_as_upstream
from .store import Tau2DB

D = TypeVar("D", bound=Tau2DB)


@dataclass
class Tau2World(Generic[D]):
    """One episode's state: its own copy-on-write database, how tool arguments are
    handled (``"strict"`` or ``"upstream"``, see :mod:`.arguments`) and, in a dual-control
    domain, the customer's side (``user_db``)."""

    db: D
    tool_arguments: str = "strict"
    user_db: Any = None


@dataclass(frozen=True)
class ToolOutcome:
    """What one call gave: the output string upstream's environment shows, and whether it
    is an error (``"Error: <message>"``)."""

    output: str
    error: bool


def run_tool(world: Tau2World[Any], tool: Tool, arguments: Mapping[str, Any], toolkit: str = "") -> ToolOutcome:
    """Run one call of ``tool`` as upstream's ``Environment.get_response`` does: a domain
    error becomes ``"Error: <message>"``. In strict mode the arguments are first checked
    against the tool's signature; in upstream mode they are handled as the methods of
    upstream's ``toolkit`` class handle them (:mod:`.arguments`)."""
    if world.tool_arguments == "upstream":
        try:
            return ToolOutcome(call_as_upstream(toolkit, tool, world, arguments), False)
        except ToolError as exc:
            return ToolOutcome(f"Error: {exc}", True)
    problem = tool.check_arguments(dict(arguments))
    if problem is not None:
        return ToolOutcome(f"Error: {problem}", True)
    try:
        return ToolOutcome(tool.fn(world, **arguments), False)
    except ToolError as exc:
        return ToolOutcome(f"Error: {exc}", True)
