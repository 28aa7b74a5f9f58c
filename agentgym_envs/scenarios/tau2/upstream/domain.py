"""The two tau2 domains: their database, tools, tasks and policy, behind one interface."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentgym_envs.core.tools import Tool

from .airline.models import AirlineDB
from .airline.tools import TOOLS as AIRLINE_TOOLS
from .files import domain_dir, require_file
from .retail.models import RetailDB
from .retail.tools import TOOLS as RETAIL_TOOLS
from .store import Tau2DB
from .tasks import Tau2Task, load_tasks
from .toolkit import Tau2World, ToolOutcome, run_tool

DataDir = str | os.PathLike[str] | None


@dataclass(frozen=True)
class Tau2Domain:
    """A tau2 domain. Data comes from ``<data_dir>/<name>/`` (``data_dir`` defaults to
    ``$TAU2_DATA_DIR``)."""

    name: str
    toolkit: str  # upstream's toolkit class, as Python's errors name its methods
    db_class: type[Tau2DB]
    tools: tuple[Tool, ...]
    tools_by_name: Mapping[str, Tool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools_by_name", {tool.name: tool for tool in self.tools})

    def new_world(self, data_dir: DataDir = None, tool_arguments: str = "strict") -> Tau2World[Any]:
        """A world for one episode, with its own copy of the database (cheap: copy-on-write);
        ``tool_arguments``: ``"strict"`` or ``"upstream"`` (:mod:`.arguments`)."""
        return Tau2World(self.db_class.fresh(domain_dir(self.name, data_dir) / "db.json"), tool_arguments)

    def load_tasks(self, split: str | None = "base", data_dir: DataDir = None) -> list[Tau2Task]:
        """The tasks of ``split`` ("train", "test", "base" = all; ``None``: every task of the
        task file, without reading the split file)."""
        return load_tasks(self.name, domain_dir(self.name, data_dir), self.tools_by_name, split)

    def policy(self, data_dir: DataDir = None) -> str:
        """The agent policy text (``policy.md``)."""
        return require_file(domain_dir(self.name, data_dir) / "policy.md", "policy").read_text(
            encoding="utf-8"
        )

    def call(self, world: Tau2World[Any], name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run one tool call by name, with upstream's output for an unknown tool."""
        tool = self.tools_by_name.get(name)
        if tool is None:
            return ToolOutcome(f"Error: Tool '{name}' not found.", True)
        return run_tool(world, tool, arguments, self.toolkit)


RETAIL = Tau2Domain("retail", "RetailTools", RetailDB, RETAIL_TOOLS)
AIRLINE = Tau2Domain("airline", "AirlineTools", AirlineDB, AIRLINE_TOOLS)
DOMAINS: dict[str, Tau2Domain] = {d.name: d for d in (RETAIL, AIRLINE)}


def get_domain(name: str) -> Tau2Domain:
    """The domain called ``name`` ("retail" or "airline")."""
    try:
        return DOMAINS[name]
    except KeyError:
        raise ValueError(f"unknown tau2 domain {name!r}; known: {sorted(DOMAINS)}") from None
