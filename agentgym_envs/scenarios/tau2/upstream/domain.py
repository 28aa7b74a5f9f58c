"""The tau2 domains (retail, airline, telecom): their databases, tools, tasks and policy,
behind one interface."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_envs.core.tools import Tool, ToolError

from .airline.models import AirlineDB
from .airline.tools import TOOLS as AIRLINE_TOOLS
from .files import domain_dir, require_file
from .retail.models import RetailDB
from .retail.tools import TOOLS as RETAIL_TOOLS
from .tasks import Tau2Task, load_tasks
from .telecom.environment import policy as telecom_policy
from .telecom.environment import sync as telecom_sync
from .telecom.models import TelecomDB
from .telecom.tools import FUNCTIONS as TELECOM_FUNCTIONS
from .telecom.tools import TOOLS as TELECOM_TOOLS
from .telecom.user_models import TelecomUserDB
from .telecom.user_tools import FUNCTIONS as TELECOM_USER_FUNCTIONS
from .telecom.user_tools import TOOLS as TELECOM_USER_TOOLS
from .toolkit import Tau2World, ToolOutcome, run_tool

DataDir = str | os.PathLike[str] | None


def _policy_md(folder: Path, solo: bool) -> str:
    return require_file(folder / "policy.md", "policy").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Tau2Domain:
    """A tau2 domain. Data comes from ``<data_dir>/<name>/`` (``data_dir`` defaults to
    ``$TAU2_DATA_DIR``).

    A dual-control domain (telecom) also has the customer's side: ``user_db_class`` (loaded
    from ``user_db.toml``), the customer's ``user_tools``, the ``sync`` that runs after every
    successful call (upstream's ``sync_tools``), and the task ``functions`` (set-up and
    assertions, by side: ``"assistant"`` or ``"user"``) that tasks' initial state and env
    assertions call."""

    name: str
    toolkit: str  # upstream's toolkit class, as Python's errors name its methods
    db_class: type[Any]
    tools: tuple[Tool, ...]
    db_file: str = "db.json"
    policy_text: Callable[[Path, bool], str] = _policy_md  # (domain folder, solo) -> policy
    user_toolkit: str = ""
    user_db_class: type[Any] | None = None
    user_tools: tuple[Tool, ...] = ()
    functions: Mapping[str, Mapping[str, Callable[..., Any]]] = field(default_factory=dict)
    sync: Callable[[Tau2World[Any]], None] | None = None
    tools_by_name: Mapping[str, Tool] = field(init=False, repr=False, compare=False)
    user_tools_by_name: Mapping[str, Tool] = field(init=False, repr=False, compare=False)
    all_tools: Mapping[str, Tool] = field(init=False, repr=False, compare=False)  # both sides' (names are unique)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools_by_name", {tool.name: tool for tool in self.tools})
        object.__setattr__(self, "user_tools_by_name", {tool.name: tool for tool in self.user_tools})
        object.__setattr__(self, "all_tools", {**self.tools_by_name, **self.user_tools_by_name})

    def new_world(self, data_dir: DataDir = None, tool_arguments: str = "strict", task: Tau2Task | None = None) -> Tau2World[Any]:
        """A world for one episode, with its own copy of the database(s) (cheap), set up as
        ``task``'s initial state says (upstream's ``set_state``); ``tool_arguments``:
        ``"strict"`` or ``"upstream"`` (:mod:`.arguments`)."""
        folder = domain_dir(self.name, data_dir)
        user_db = None if self.user_db_class is None else self.user_db_class.fresh(folder / "user_db.toml")
        world = Tau2World(self.db_class.fresh(folder / self.db_file), tool_arguments, user_db)
        self._sync(world)
        if task is not None and task.initial_actions:
            for call in task.initial_actions:
                self.run_function(world, call.env_type, call.func_name, call.arguments)
            self._sync(world)
        return world

    def load_tasks(self, split: str | None = "base", data_dir: DataDir = None) -> list[Tau2Task]:
        """The tasks of ``split`` ("train", "test", "base" = all; ``None``: every task of the
        task file, without reading the split file)."""
        return load_tasks(self.name, domain_dir(self.name, data_dir), self.all_tools, split, self.functions)

    def policy(self, data_dir: DataDir = None, solo: bool = False) -> str:
        """The agent policy text (``policy.md``; telecom: its main policy and manual)."""
        return self.policy_text(domain_dir(self.name, data_dir), solo)

    def resolve(self, name: str, requestor: str = "assistant", solo: bool = False) -> tuple[Tool | None, str]:
        """The tool a call by ``requestor`` named ``name`` runs, and its upstream toolkit: the
        user's tools for the user, the agent's for the agent (and the user's too in solo mode)."""
        if requestor == "user" or (solo and name in self.user_tools_by_name):
            return self.user_tools_by_name.get(name), self.user_toolkit
        return self.tools_by_name.get(name), self.toolkit

    def call(self, world: Tau2World[Any], name: str, arguments: Mapping[str, Any], requestor: str = "assistant",
             solo: bool = False, sync: bool = True) -> ToolOutcome:
        """Run one tool call by name, as upstream's ``get_response`` does: upstream's output for
        an unknown tool, and after a call that did not fail the domain's ``sync`` (``sync=False``:
        upstream's ``make_tool_call``, which the evaluator's gold replay uses)."""
        tool, toolkit = self.resolve(name, requestor, solo)
        if tool is None:
            return ToolOutcome(f"Error: Tool '{name}' not found.", True)
        outcome = run_tool(world, tool, arguments, toolkit)
        if sync and not outcome.error:
            try:
                self._sync(world)
            except ToolError as exc:
                return ToolOutcome(f"Error: {exc}", True)
        return outcome

    def run_function(self, world: Tau2World[Any], env_type: str, func_name: str, arguments: Mapping[str, Any]) -> Any:
        """Run a task function (set-up or assertion) on ``env_type``'s side, then ``sync``
        (upstream's ``run_env_function_call``); its errors propagate."""
        function = self.functions.get(env_type, {}).get(func_name)
        if function is None:
            raise ValueError(f"Function {func_name} not found in {env_type} tools")
        result = function(world, **arguments)
        self._sync(world)
        return result

    def _sync(self, world: Tau2World[Any]) -> None:
        if self.sync is not None:
            self.sync(world)


RETAIL = Tau2Domain("retail", "RetailTools", RetailDB, RETAIL_TOOLS)
AIRLINE = Tau2Domain("airline", "AirlineTools", AirlineDB, AIRLINE_TOOLS)
TELECOM = Tau2Domain(
    "telecom", "TelecomTools", TelecomDB, TELECOM_TOOLS, db_file="db.toml", policy_text=telecom_policy,
    user_toolkit="TelecomUserTools", user_db_class=TelecomUserDB, user_tools=TELECOM_USER_TOOLS,
    functions={"assistant": TELECOM_FUNCTIONS, "user": TELECOM_USER_FUNCTIONS}, sync=telecom_sync,
)
DOMAINS: dict[str, Tau2Domain] = {d.name: d for d in (RETAIL, AIRLINE, TELECOM)}


def get_domain(name: str) -> Tau2Domain:
    """The domain called ``name`` ("retail", "airline" or "telecom")."""
    try:
        return DOMAINS[name]
    except KeyError:
        raise ValueError(f"unknown tau2 domain {name!r}; known: {sorted(DOMAINS)}") from None
