"""Loading a user's own tasks from a JSONL file, with errors that name the line and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class TaskFormatError(ValueError):
    """A task (or a task file line) does not follow the scenario's schema."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def require(data: dict[str, Any], field: str, kind: type | tuple[type, ...]) -> Any:
    """``data[field]`` if present and of type ``kind``, else a :class:`TaskFormatError`."""
    if field not in data:
        raise TaskFormatError(f"missing field '{field}'", field)
    value = data[field]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        names = " or ".join(k.__name__ for k in _as_tuple(kind))
        raise TaskFormatError(f"field '{field}' must be {names}, got {type(value).__name__}", field)
    return value


def load_task_file(path: str | Path, parse: Callable[[dict[str, Any]], T]) -> list[T]:
    """Parse every non-blank line of a JSONL file with ``parse``.

    Raises :class:`TaskFormatError` naming the file, the line number and the field for a
    line that is not a JSON object or that ``parse`` rejects, and for duplicate task ids.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"cannot read task file {path}: {exc}") from None
    tasks: list[T] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"{where}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise TaskFormatError(f"{where}: not a task (JSON nested too deeply)") from None
        if not isinstance(data, dict):
            raise TaskFormatError(f"{where}: a task must be a JSON object")
        try:
            task = parse(data)
        except TaskFormatError as exc:
            raise TaskFormatError(f"{where}: {exc}", exc.field) from None
        task_id = task.task_id
        if task_id in seen:
            raise TaskFormatError(f"{where}: duplicate task_id {task_id!r}", "task_id")
        seen.add(task_id)
        tasks.append(task)
    if not tasks:
        raise TaskFormatError(f"{path}: the task file holds no tasks")
    return tasks


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


class TaskSource:
    """Where an environment's tasks come from: ``sample(rng)`` draws one, ``get(id)`` picks one."""

    def sample(self, rng: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def get(self, task_id: str) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


class GeneratedTasks(TaskSource):
    """An unbounded split of procedurally generated tasks with ids ``"<split>-<index>"``.

    ``generate(split, index)`` must be a pure function of its arguments.
    """

    INDEX_RANGE = 1_000_000_000

    def __init__(self, split: str, generate: Callable[[str, int], Any], splits: tuple[str, ...]) -> None:
        if split not in splits:
            raise ValueError(f"split must be one of {list(splits)}, got {split!r}")
        self.split, self.splits, self._generate = split, splits, generate

    def sample(self, rng: Any) -> Any:
        return self._generate(self.split, int(rng.integers(self.INDEX_RANGE)))

    def get(self, task_id: str) -> Any:
        split, _, index = str(task_id).rpartition("-")
        if split not in self.splits or not index.isdigit() or int(index) >= self.INDEX_RANGE:
            raise ValueError(
                f"unknown task_id {task_id!r}: generated task ids look like '<split>-<index>' "
                f"with split in {list(self.splits)} and 0 <= index < {self.INDEX_RANGE}"
            )
        return self._generate(split, int(index))


class TaskList(TaskSource):
    """A fixed list of tasks (a user's task file, a benchmark's real tasks)."""

    def __init__(self, tasks: list[Any]) -> None:
        if not tasks:
            raise ValueError("a task list needs at least one task")
        self.tasks = tasks
        self._by_id = {t.task_id: t for t in tasks}

    def sample(self, rng: Any) -> Any:
        return self.tasks[int(rng.integers(len(self.tasks)))]

    def get(self, task_id: str) -> Any:
        if not isinstance(task_id, str) or task_id not in self._by_id:
            some = ", ".join(repr(t) for t in list(self._by_id)[:5])
            raise ValueError(f"unknown task_id {task_id!r}; known ids include {some}")
        return self._by_id[task_id]
