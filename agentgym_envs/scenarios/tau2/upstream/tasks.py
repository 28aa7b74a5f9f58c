"""tau2 tasks (upstream ``tau2.data_model.tasks.Task``) and loading them from ``tasks.json`` +
``split_tasks.json``, with errors that name the file, the task and the problem."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_envs.core.tools import Tool

from .errors import Tau2FormatError, Tau2SplitError, Tau2TaskError
from .files import read_json

REWARD_TYPES = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")


@dataclass(frozen=True)
class Tau2Action:
    """One call of a task's reference trajectory."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"
    info: str | None = None
    compare_args: tuple[str, ...] | None = None


@dataclass(frozen=True)
class EnvCall:
    """A call of a task function on one side (``env_type``: ``"assistant"`` or ``"user"``):
    a set-up step of the initial state, or an env assertion (it holds when the function
    returns ``assert_value``)."""

    env_type: str
    func_name: str
    arguments: dict[str, Any]
    assert_value: bool = True
    message: str | None = None


@dataclass(frozen=True)
class EvaluationCriteria:
    """How a task is scored; ``None`` lists are absent in the file (upstream's defaults)."""

    actions: tuple[Tau2Action, ...] | None
    communicate_info: tuple[str, ...] | None
    nl_assertions: tuple[str, ...] | None
    env_assertions: tuple[EnvCall, ...] | None
    reward_basis: tuple[str, ...] = DEFAULT_REWARD_BASIS


@dataclass(frozen=True)
class Tau2Task:
    """A tau2 task of one domain. ``raw`` is the task object exactly as in the file."""

    id: str
    domain: str
    user_scenario: dict[str, Any]
    evaluation_criteria: EvaluationCriteria | None
    description: dict[str, Any] | None = None
    initial_actions: tuple[EnvCall, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def task_id(self) -> str:
        """The task id (the name agentgym's task sources use)."""
        return self.id


Functions = Mapping[str, Mapping[str, Any]]  # the domain's task functions, by side


def load_tasks(
    domain: str, folder: Path, tools: Mapping[str, Tool], split: str | None = "base", functions: Functions | None = None
) -> list[Tau2Task]:
    """The tasks of ``split`` (all tasks of ``tasks.json`` for ``split=None``), in file order.
    ``functions``: the domain's task functions, which initial states and env assertions may
    call (without them an initial state is not supported).

    Raises :class:`Tau2FormatError` (corrupt or malformed file), :class:`Tau2TaskError`
    (reference action with an unknown tool or argument) or :class:`Tau2SplitError`
    (unknown split, or split ids the task file lacks).
    """
    tasks_path = folder / "tasks.json"
    tasks = parse_tasks(read_json(tasks_path, "task"), domain, tools, str(tasks_path), functions)
    if split is None:
        return tasks
    split_path = folder / "split_tasks.json"
    wanted = _split_ids(read_json(split_path, "split"), split, split_path)
    known = {task.id for task in tasks}
    missing = [task_id for task_id in wanted if task_id not in known]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise Tau2SplitError(
            f"split '{split}' of {split_path} names {len(missing)} task id(s) that {tasks_path} lacks: "
            f"{shown} (the task file holds {len(tasks)} tasks; it may hold only some of the splits)"
        )
    chosen = set(wanted)
    return [task for task in tasks if task.id in chosen]


def _split_ids(data: Any, split: str, path: Path) -> list[str]:
    if not isinstance(data, dict):
        raise Tau2FormatError(f"split file {path} must be a JSON object mapping split names to task ids")
    if split not in data:
        raise Tau2SplitError(f"unknown split {split!r}: {path} has the splits {sorted(data)}")
    ids = data[split]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise Tau2FormatError(f"split file {path}: split '{split}' must be a list of task id strings")
    return ids


def parse_tasks(
    data: Any, domain: str, tools: Mapping[str, Tool], source: str = "<tasks>", functions: Functions | None = None
) -> list[Tau2Task]:
    """Parse and check a task list (the content of a ``tasks.json``)."""
    if not isinstance(data, list):
        raise Tau2FormatError(f"task file {source} must hold a JSON list of tasks")
    tasks, seen = [], set()
    for index, item in enumerate(data):
        where = f"task file {source}, task #{index}"
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            where += f" (id {item['id']!r})"
        task = _parse_task(item, domain, tools, where, functions)
        if task.id in seen:
            raise Tau2FormatError(f"{where}: duplicate task id")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def _parse_task(item: Any, domain: str, tools: Mapping[str, Tool], where: str, functions: Functions | None) -> Tau2Task:
    if not isinstance(item, dict):
        raise Tau2FormatError(f"{where}: a task must be a JSON object")
    task_id = _get(item, "id", str, where)
    scenario = _get(item, "user_scenario", dict, where)
    if not isinstance(scenario.get("instructions"), (dict, str)):
        raise Tau2FormatError(f"{where}: 'user_scenario.instructions' must be an object or a string")
    initial = _get(item, "initial_state", dict, where, optional=True) or {}
    unsupported = ("initialization_data", "message_history") + (() if functions else ("initialization_actions",))
    for key in unsupported:
        if initial.get(key):
            raise Tau2FormatError(f"{where}: 'initial_state.{key}' is not supported")
    setup = _get(initial, "initialization_actions", list, where + ", initial_state", optional=True) or []
    criteria = _get(item, "evaluation_criteria", dict, where, optional=True)
    return Tau2Task(
        id=task_id,
        domain=domain,
        user_scenario=scenario,
        evaluation_criteria=None if criteria is None else _parse_criteria(criteria, tools, where, functions),
        description=_get(item, "description", dict, where, optional=True),
        initial_actions=tuple(_parse_env_call(c, i, functions, f"{where}, initialization action") for i, c in enumerate(setup)),
        raw=item,
    )


def _parse_criteria(data: dict[str, Any], tools: Mapping[str, Tool], where: str, functions: Functions | None) -> EvaluationCriteria:
    where += ", evaluation_criteria"
    actions = _get(data, "actions", list, where, optional=True)
    basis = _get(data, "reward_basis", list, where, optional=True)
    if basis is not None:
        unknown = [b for b in basis if b not in REWARD_TYPES]
        if unknown:
            raise Tau2FormatError(
                f"{where}: unknown reward_basis value(s) {unknown}; known: {list(REWARD_TYPES)}"
            )
    env_assertions = _get(data, "env_assertions", list, where, optional=True)
    return EvaluationCriteria(
        actions=None
        if actions is None
        else tuple(_parse_action(a, i, tools, where) for i, a in enumerate(actions)),
        communicate_info=_strings(data, "communicate_info", where),
        nl_assertions=_strings(data, "nl_assertions", where),
        env_assertions=None if env_assertions is None else tuple(
            _parse_env_call(a, i, functions, f"{where}, env assertion") for i, a in enumerate(env_assertions)
        ),
        reward_basis=DEFAULT_REWARD_BASIS if basis is None else tuple(basis),
    )


def _parse_action(data: Any, index: int, tools: Mapping[str, Tool], where: str) -> Tau2Action:
    where += f", action #{index}"
    if not isinstance(data, dict):
        raise Tau2FormatError(f"{where}: an action must be a JSON object")
    name = _get(data, "name", str, where)
    arguments = _get(data, "arguments", dict, where)
    tool = tools.get(name)
    if tool is None:
        raise Tau2TaskError(f"{where}: unknown tool {name!r}; the domain's tools are {sorted(tools)}")
    allowed = {arg.name for arg in tool.args}
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise Tau2TaskError(
            f"{where}: tool {name!r} has no argument(s) {unknown}; it takes {sorted(allowed)}"
        )
    compare_args = _strings(data, "compare_args", where)
    return Tau2Action(
        action_id=_get(data, "action_id", str, where),
        name=name,
        arguments=arguments,
        requestor=_get(data, "requestor", str, where, optional=True) or "assistant",
        info=_get(data, "info", str, where, optional=True),
        compare_args=compare_args,
    )


def _parse_env_call(data: Any, index: int, functions: Functions | None, where: str) -> EnvCall:
    """An initialization action or env assertion; its function must exist on its side when the
    domain has task functions."""
    where += f" #{index}"
    if not isinstance(data, dict):
        raise Tau2FormatError(f"{where}: must be a JSON object")
    env_type = _get(data, "env_type", str, where)
    name = _get(data, "func_name", str, where)
    if functions and name not in functions.get(env_type, {}):
        raise Tau2TaskError(f"{where}: unknown {env_type!r} function {name!r}")
    assert_value = data.get("assert_value", True)
    if not isinstance(assert_value, bool):
        raise Tau2FormatError(f"{where}: 'assert_value' must be a JSON boolean")
    return EnvCall(env_type, name, _get(data, "arguments", dict, where, optional=True) or {}, assert_value,
                   data.get("message"))


def _strings(data: dict[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    values = _get(data, key, list, where, optional=True)
    if values is None:
        return None
    if not all(isinstance(v, str) for v in values):
        raise Tau2FormatError(f"{where}: '{key}' must be a list of strings")
    return tuple(values)


def _get(data: dict[str, Any], key: str, kind: type, where: str, optional: bool = False) -> Any:
    value = data.get(key)
    if value is None:
        if optional:
            return None
        raise Tau2FormatError(f"{where}: missing field '{key}'")
    if not isinstance(value, kind):
        raise Tau2FormatError(f"{where}: field '{key}' must be a JSON {_JSON_NAMES[kind]}")
    return value


_JSON_NAMES: dict[type, str] = {str: "string", dict: "object", list: "array"}
