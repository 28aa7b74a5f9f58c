"""The rollout store: one SQLite file (the standard library's ``sqlite3``, WAL mode) that keeps
every recorded run, its episodes (the full OpenAI-format message list, the tools, per-step
rewards, the trace and span ids) and the prompt or policy version it ran.

Several processes may write at once (parallel evaluations, training runs): each write is one short
``BEGIN IMMEDIATE`` transaction and a writer waits up to :data:`BUSY_TIMEOUT_S` for the lock. An
episode and its steps go in one transaction, so a writer killed at any point leaves either the
whole episode or none of it. ``PRAGMA user_version`` holds the schema version; opening a store
applies the :data:`MIGRATIONS` it lacks, in order, each in its own transaction.

By default the store is ``runs/agentgym.db`` (``agentgym train`` uses ``<run-dir>/agentgym.db``);
``AGENTGYM_RUN_STORE`` names another. ``agentgym runs`` reads it; ``store:RUN`` as
``llm-sft``'s ``data`` (or ``llm-grpo``'s ``train_tasks``) reads a run's episodes back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STORE_FILE = "agentgym.db"
STORE_VARIABLE = "AGENTGYM_RUN_STORE"
BUSY_TIMEOUT_S = 60.0

# MIGRATIONS[i] takes a store from schema version i to i + 1.
MIGRATIONS: list[Sequence[str]] = [
    (
        """CREATE TABLE versions (
            id TEXT PRIMARY KEY,            -- sha256 of kind and content
            kind TEXT NOT NULL,             -- 'prompt' | 'policy'
            content TEXT NOT NULL,          -- JSON
            created_at REAL NOT NULL)""",
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,             -- 'eval' | 'train' | ...
            name TEXT NOT NULL,             -- e.g. CustomerSupport-v0__expert__test__seed0
            env_id TEXT,
            status TEXT NOT NULL,           -- 'running' | 'finished' | 'failed' (read back: also 'interrupted')
            config TEXT NOT NULL,           -- JSON
            version_id TEXT REFERENCES versions(id),
            summary TEXT,                   -- JSON: the run's figures
            trace_id TEXT,
            span_id TEXT,
            started_at REAL NOT NULL,
            ended_at REAL)""",
        """CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id),
            split TEXT,
            task TEXT,                      -- the reset seed or task id the evaluation keyed it on
            trial INTEGER NOT NULL DEFAULT 0,
            seed INTEGER,
            task_id TEXT,
            return REAL,
            success REAL,
            outcome_reason TEXT,
            error TEXT,
            metrics TEXT NOT NULL,          -- JSON
            messages TEXT NOT NULL,         -- JSON, OpenAI chat format
            tools TEXT,                     -- JSON, OpenAI tool schemas
            trace_id TEXT,
            span_id TEXT,
            created_at REAL NOT NULL)""",
        "CREATE INDEX episodes_by_run ON episodes(run_id)",
        """CREATE TABLE steps (
            episode_id INTEGER NOT NULL REFERENCES episodes(id),
            step INTEGER NOT NULL,
            reward REAL NOT NULL,
            PRIMARY KEY (episode_id, step))""",
    ),
    (  # the process writing a run, so that a reader tells a run that died from one still going
        "ALTER TABLE runs ADD COLUMN pid INTEGER",
        "ALTER TABLE runs ADD COLUMN host TEXT",
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)


def default_store_path(run_root: str | os.PathLike | None = None) -> Path:
    """``AGENTGYM_RUN_STORE``, else ``<run_root>/agentgym.db`` (``run_root`` default ``runs``)."""
    return Path(os.environ.get(STORE_VARIABLE) or Path(run_root or "runs") / STORE_FILE)


def new_run_id(kind: str) -> str:
    """``<kind>-<UTC date and time>-<6 hex>``: sortable by start, unique across processes."""
    return f"{kind}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def _alive(pid: int | None) -> bool:
    """Whether process ``pid`` of this host still runs (None, unknown: taken as running)."""
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _number(value: Any) -> float | None:
    """A float SQLite can hold (NaN becomes NULL)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


@dataclass
class EpisodeRow:
    """One finished episode: what the run store keeps of it, and (:meth:`result`) the line an
    evaluation's results file (:mod:`agentgym_envs.evaluation.results`) keeps, both from this object."""

    task: int | str
    trial: int
    ret: float
    metrics: Mapping[str, float]
    messages: Sequence[Mapping[str, Any]]
    rewards: Sequence[float] = ()
    split: str | None = None
    seed: int | None = None
    task_id: str | None = None
    outcome_reason: str | None = None
    error: str | None = None
    tools: Sequence[Mapping[str, Any]] | None = None
    trace_id: str | None = None
    span_id: str | None = None
    outcome: Mapping[str, Any] | None = None  # the grader's success, score and reason (None: an error ended it)
    unit_id: str | None = None  # the unit the task is drawn from (template, problem, user): info["unit_id"], else the task id

    def result(self, keep_messages: bool = False) -> dict[str, Any]:
        """The episode's line of a results file: ``task``, ``trial``, ``task_id``, ``unit_id``,
        ``return``, ``metrics``, ``error``, ``outcome`` and, with ``keep_messages``, ``messages``."""
        line = {"task": self.task, "trial": self.trial, "task_id": self.task_id, "unit_id": self.unit_id,
                "return": self.ret, "metrics": self.metrics, "error": self.error, "outcome": self.outcome}
        if keep_messages:
            line["messages"] = list(self.messages)
        return line


class RunStore:
    """A connection to the store at ``path`` (created, and migrated, on first use)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")  # in WAL mode: consistent after a crash
        self._db.execute("PRAGMA foreign_keys = ON")
        self.migrate()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the store's write lock from its start."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -------------------------------------------------------------- schema
    @property
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION`; a store from a newer agentgym is an error."""
        while (version := self.schema_version) < len(MIGRATIONS):
            with self._write() as db:
                if db.execute("PRAGMA user_version").fetchone()[0] != version:
                    continue  # another process migrated it meanwhile
                for statement in MIGRATIONS[version]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")
        if self.schema_version > len(MIGRATIONS):
            raise ValueError(f"{self.path} has schema version {self.schema_version}, newer than this agentgym's "
                             f"({len(MIGRATIONS)}): upgrade agentgym to read it")

    # -------------------------------------------------------------- writing
    def add_version(self, kind: str, content: Any) -> str:
        """The id of a prompt or policy version (``content``: JSON-able), recorded once."""
        text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
        version_id = hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:16]
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO versions VALUES (?, ?, ?, ?)", (version_id, kind, text, time.time()))
        return version_id

    def start_run(self, kind: str, name: str, config: Mapping[str, Any], env_id: str | None = None,
                  version_id: str | None = None, run_id: str | None = None) -> str:
        """Record a run as running in this process; returns its id (``run_id``, or a new one)."""
        run_id = run_id or new_run_id(kind)
        with self._write() as db:
            db.execute("INSERT INTO runs (id, kind, name, env_id, status, config, version_id, started_at, pid, host) "
                       "VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
                       (run_id, kind, name, env_id, _json(config), version_id, time.time(), os.getpid(),
                        socket.gethostname()))
        return run_id

    def set_trace(self, run_id: str, trace_id: str | None, span_id: str | None) -> None:
        """The run's trace and span ids, unless it has some (a training run's final evaluation
        runs inside the training's span)."""
        if trace_id is not None:
            with self._write() as db:
                db.execute("UPDATE runs SET trace_id = ?, span_id = ? WHERE id = ? AND trace_id IS NULL",
                           (trace_id, span_id, run_id))

    def finish_run(self, run_id: str, summary: Mapping[str, Any] | None, status: str = "finished") -> None:
        """Record a run's end, its status and its figures."""
        with self._write() as db:
            db.execute("UPDATE runs SET status = ?, summary = ?, ended_at = ? WHERE id = ?",
                       (status, _json(summary) if summary is not None else None, time.time(), run_id))

    def add_episode(self, run_id: str, episode: EpisodeRow) -> int:
        """Record a finished episode and its per-step rewards (one transaction); returns its row id."""
        e = episode
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO episodes (run_id, split, task, trial, seed, task_id, return, success, outcome_reason, error, "
                "metrics, messages, tools, trace_id, span_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, e.split, str(e.task), e.trial, e.seed, e.task_id, _number(e.ret), _number(e.metrics.get("success")),
                 e.outcome_reason, e.error, _json(dict(e.metrics)), _json(list(e.messages)),
                 _json(list(e.tools)) if e.tools is not None else None, e.trace_id, e.span_id, time.time()))
            episode_id = cursor.lastrowid
            db.executemany("INSERT INTO steps VALUES (?, ?, ?)",
                           [(episode_id, step, float(reward)) for step, reward in enumerate(e.rewards, start=1)])
        return episode_id

    # -------------------------------------------------------------- reading
    def runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Runs, newest first, each with its episode count and figures."""
        rows = self._db.execute(
            "SELECT runs.*, (SELECT COUNT(*) FROM episodes WHERE run_id = runs.id) AS episode_count "
            "FROM runs ORDER BY started_at DESC, id DESC" + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        return [self._run(row) for row in rows]

    def run(self, reference: str) -> dict[str, Any]:
        """A run by id, by the start of its id, or by name (the newest run of that name)."""
        select = "SELECT runs.*, (SELECT COUNT(*) FROM episodes WHERE run_id = runs.id) AS episode_count FROM runs "
        rows = self._db.execute(select + "WHERE substr(id, 1, ?) = ?", (len(reference), reference)).fetchall()
        if len(rows) > 1 and not any(row["id"] == reference for row in rows):
            raise ValueError(f"{reference!r} starts {len(rows)} run ids in {self.path}: give more of it")
        rows = [row for row in rows if row["id"] == reference] or rows or self._db.execute(
            select + "WHERE name = ? ORDER BY started_at DESC LIMIT 1", (reference,)).fetchall()
        if not rows:
            raise ValueError(f"no run {reference!r} in {self.path} (agentgym runs lists them)")
        return self._run(rows[0])

    def _run(self, row: sqlite3.Row) -> dict[str, Any]:
        run = dict(row)
        if run["status"] == "running" and run["host"] == socket.gethostname() and not _alive(run["pid"]):
            run["status"] = "interrupted"  # its process ended without recording the run's end (killed)
        run["config"] = json.loads(run["config"])
        run["summary"] = json.loads(run["summary"]) if run["summary"] else {}
        if run["version_id"]:
            version = self._db.execute("SELECT kind, content FROM versions WHERE id = ?", (run["version_id"],)).fetchone()
            run["version"] = {"kind": version["kind"], **json.loads(version["content"])} if version else None
        return run

    def episodes(self, run_id: str, successful: bool = False) -> list[dict[str, Any]]:
        """A run's episodes in the order recorded (``successful``: only those that succeeded),
        with their messages, tools, metrics and per-step ``rewards``."""
        rows = self._db.execute("SELECT * FROM episodes WHERE run_id = ?" + (" AND success >= 1" if successful else "")
                                + " ORDER BY id", (run_id,)).fetchall()
        episodes = []
        for row in rows:
            episode = dict(row)
            for key in ("metrics", "messages", "tools"):
                episode[key] = json.loads(episode[key]) if episode[key] is not None else None
            episode["rewards"] = [r[0] for r in self._db.execute(
                "SELECT reward FROM steps WHERE episode_id = ? ORDER BY step", (row["id"],))]
            episodes.append(episode)
        return episodes

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` answer (``"ok"`` for a sound file)."""
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]


def chat_records(episodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Episodes as the chat JSONL lines that ``llm-sft`` reads (the
    :class:`~agentgym_envs.wrappers.TrajectoryRecorder` format)."""
    return [{"task_id": e["task_id"] if e["task_id"] is not None else e["task"], "messages": e["messages"],
             "tools": e["tools"] or [], "return": e["return"], "metrics": e["metrics"]} for e in episodes]


STORE_PREFIX = "store:"


def read_reference(reference: str) -> tuple[RunStore, dict[str, Any]]:
    """``store:RUN`` (in the default store) or ``store:RUN@PATH``: the store and the run."""
    if not reference.startswith(STORE_PREFIX):
        raise ValueError(f"a store reference reads store:RUN or store:RUN@PATH, got {reference!r}")
    run, _, path = reference[len(STORE_PREFIX):].partition("@")
    path = Path(path) if path else default_store_path()
    if not path.is_file():
        raise ValueError(f"{reference}: no run store at {path}")
    store = RunStore(path)
    try:
        return store, store.run(run)
    except BaseException:
        store.close()
        raise


def trajectories(reference: str) -> list[dict[str, Any]]:
    """The chat records of the episodes of the run ``reference`` names (``store:RUN[@PATH]``)."""
    store, run = read_reference(reference)
    with store:
        records = chat_records(store.episodes(run["id"]))
    if not records:
        raise ValueError(f"{reference}: run {run['id']} has no episodes")
    return records


def task_ids(reference: str) -> list[str]:
    """The task ids the episodes of the run ``reference`` names played, each once, in order."""
    store, run = read_reference(reference)
    with store:
        ids = [e["task_id"] for e in store.episodes(run["id"]) if e["task_id"] is not None]
    if not ids:
        raise ValueError(f"{reference}: run {run['id']} has no episodes with task ids")
    return list(dict.fromkeys(ids))


@dataclass
class RunRecorder:
    """Records one run's episodes into the store at ``path``; picklable (each process that
    unpickles one opens its own connection)."""

    path: str
    run_id: str
    summary: Mapping[str, Any] | None = None  # the run's figures, recorded by finish() / recording()
    _store: RunStore | None = field(default=None, repr=False, compare=False)

    @property
    def store(self) -> RunStore:
        if self._store is None:
            self._store = RunStore(self.path)
        return self._store

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_store": None}

    def episode(self, row: EpisodeRow) -> int:
        return self.store.add_episode(self.run_id, row)

    def finish(self, status: str = "finished") -> None:
        self.store.finish_run(self.run_id, self.summary, status)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


@contextlib.contextmanager
def recording(path: str | os.PathLike, kind: str, name: str, config: Mapping[str, Any], env_id: str | None = None,
              version: tuple[str, Any] | None = None) -> Iterator[RunRecorder]:
    """A run recorded for the length of a ``with`` block: started as running, then finished with
    ``recorder.summary`` (set it in the block), or marked failed when the block raises."""
    with RunStore(path) as store:
        version_id = store.add_version(*version) if version is not None else None
        run_id = store.start_run(kind, name, config, env_id, version_id)
    recorder = RunRecorder(str(path), run_id)
    try:
        yield recorder
    except BaseException:
        recorder.finish("failed")
        raise
    else:
        recorder.finish()
    finally:
        recorder.close()
