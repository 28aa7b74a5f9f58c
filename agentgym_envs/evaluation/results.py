"""Per-episode evaluation results: a JSONL file written as episodes finish (so an interrupted
evaluation resumes and loses nothing), and their summary: mean metrics, pass^k and pass@k.

The file's first line is ``{"config": {...}}`` (what was evaluated, and how); each further line
is one finished episode: ``{"task": <reset seed, or task id>, "trial": t, "return": ..., "metrics": {...},
"error": null | "<why the episode ended early>", "outcome": {"success", "score", "reason"} | null}``
(and ``"messages"``, the conversation, when the evaluation keeps them). A line for a ``(task, trial)`` already in
the file replaces it (a retried episode that had failed on an endpoint error).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from math import comb
from pathlib import Path
from typing import Any

from agentgym_envs.core.runners import Key


def _per_task_mean(successes: Mapping[Any, Sequence[bool]], k: int, name: str,
                   chance: Callable[[int, int], float]) -> float:
    """``chance(n, c)`` for each task with ``n`` trials of which ``c`` succeeded, averaged over tasks."""
    if not successes:
        raise ValueError(f"{name} needs at least one task")
    values = []
    for task, outcomes in successes.items():
        if len(outcomes) < k:
            raise ValueError(f"task {task!r} has {len(outcomes)} trials, fewer than k={k}")
        values.append(chance(len(outcomes), sum(map(bool, outcomes))))
    return sum(values) / len(values)


def pass_hat_k(successes: Mapping[Any, Sequence[bool]], k: int) -> float:
    """tau2's pass^k: for each task with ``n`` trials of which ``c`` succeeded, C(c, k) / C(n, k),
    averaged over tasks (the chance that ``k`` trials drawn without replacement all succeed)."""
    return _per_task_mean(successes, k, "pass^k", lambda n, c: comb(c, k) / comb(n, k))


def pass_at_k(successes: Mapping[Any, Sequence[bool]], k: int) -> float:
    """pass@k (the unbiased estimator of Chen et al., 2021): for each task with ``n`` trials of
    which ``c`` succeeded, 1 - C(n - c, k) / C(n, k), averaged over tasks (the chance that at
    least one of ``k`` trials drawn without replacement succeeds). Where pass@k is far above
    pass@1, sampling solves tasks that one try misses: what reinforcement learning can sharpen."""
    return _per_task_mean(successes, k, "pass@k", lambda n, c: 1 - comb(n - c, k) / comb(n, k))


def summarize(records: Iterable[Mapping[str, Any]], trials: int) -> dict[str, float]:
    """Mean metrics of ``records``, ``return``, ``episodes``, ``errors``, and ``pass^1 .. pass^trials``
    and ``pass@2 .. pass@trials`` when ``trials`` > 1. An episode ended by an error counts as a
    failure in ``success``, pass^k and pass@k; the other metrics average the episodes that
    finished (and every episode that has them)."""
    records = list(records)
    if not records:
        raise ValueError("no episodes to summarize")
    keys = dict.fromkeys(key for record in records for key in record["metrics"])
    summary = {}
    for key in keys:
        values = [record["metrics"][key] for record in records if key in record["metrics"]]
        summary[key] = float(sum(values) / len(values))
    finished = [record["return"] for record in records if record["error"] is None]
    summary["return"] = float(sum(finished) / len(finished)) if finished else float("nan")
    summary["episodes"] = float(len(records))
    summary["errors"] = float(sum(record["error"] is not None for record in records))
    if trials > 1:
        by_task: dict[Any, list[bool]] = {}
        for record in records:
            by_task.setdefault(record["task"], []).append(record["metrics"]["success"] >= 1.0)
        for k in range(1, trials + 1):
            summary[f"pass^{k}"] = pass_hat_k(by_task, k)
        for k in range(2, trials + 1):  # pass@1 is pass^1
            summary[f"pass@{k}"] = pass_at_k(by_task, k)
    return summary


def default_results_path(env_id: str, policy: str, model: str | None, split: str, seed: int) -> str:
    """``evals/<Env>__<policy>__<model>__<split>__seed<N>.jsonl`` (the model's last path part)."""
    model_name = re.sub(r"[^A-Za-z0-9._-]+", "-", (model or "default").rstrip("/").split("/")[-1])
    policy_name = re.sub(r"[^A-Za-z0-9._-]+", "-", policy)  # a module:factory spec
    return f"evals/{env_id.split('/')[-1]}__{policy_name}__{model_name}__{split}__seed{seed}.jsonl"


class ResultsFile:
    """The per-episode results of one evaluation, kept in memory and, given a ``path``, in JSONL.

    A file that already holds results is continued only with ``resume`` and only for the same
    ``config``; otherwise it is a clear error and the file is left as it is. A line cut short by a
    kill is dropped.
    """

    def __init__(self, path: str | os.PathLike | None, config: Mapping[str, Any], resume: bool = False,
                 keep_messages: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.keep_messages = keep_messages  # records carry each episode's conversation
        self.config = json.loads(json.dumps(config))
        self.records: dict[Key, dict[str, Any]] = {}
        if self.path is None:
            return
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise ValueError(f"{self.path} already holds results: pass --resume to continue it, or choose another --output")
            self._load()
        if not self.path.exists() or self.path.stat().st_size == 0:  # new, or only a header cut short by a kill
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write({"config": self.config})

    def done(self, key: Key) -> bool:
        """Whether ``key`` has a result that needs no rerun (it finished without an error)."""
        record = self.records.get(key)
        return record is not None and record["error"] is None

    def add(self, record: dict[str, Any]) -> None:
        self.records[(record["task"], record["trial"])] = record
        if self.path is not None:
            self._write(record)

    def _write(self, line: Mapping[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _load(self) -> None:
        raw = self.path.read_bytes()
        if not raw.endswith(b"\n"):  # the last line was being written when the run was killed
            raw = raw[: raw.rfind(b"\n") + 1]
            with self.path.open("r+b") as handle:
                handle.truncate(len(raw))
        for number, line in enumerate(raw.splitlines(), start=1):
            try:
                entry = json.loads(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise ValueError(f"{self.path}, line {number}: not UTF-8 text ({exc.reason})") from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"{self.path}, line {number}: not JSON ({exc.msg})") from None
            except RecursionError:
                raise ValueError(f"{self.path}, line {number}: not JSON this evaluation wrote (nested too deeply)") from None
            if number == 1:
                self._check_config(entry)
            elif not isinstance(entry, dict) or not {"task", "trial", "metrics", "error"} <= entry.keys():
                raise ValueError(f"{self.path}, line {number}: an episode needs task, trial, metrics and error")
            else:
                self.records[(entry["task"], entry["trial"])] = entry

    def _check_config(self, entry: Any) -> None:
        saved = entry.get("config") if isinstance(entry, dict) else None
        if not isinstance(saved, dict):
            raise ValueError(f"{self.path}, line 1: expected the evaluation's {{\"config\": ...}} header")
        if saved != self.config:
            differ = sorted(key for key in saved.keys() | self.config.keys() if saved.get(key) != self.config.get(key))
            raise ValueError(f"{self.path} holds results of another evaluation (differs in {', '.join(differ)}): "
                             "resume it with the same settings, or choose another --output")
