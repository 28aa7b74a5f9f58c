"""The suite's committed files, read and written atomically (an interrupted write leaves the old file):

- ``<name>.csv``: one row per run, :data:`FIELDS` (results, budget, provenance; ``model``: what a
  language model's row evaluated, empty for the rest);
- ``<name>_curves/<family>.csv``: learning curves, a row per run and split (``validation``,
  ``train``), the points ``env_steps:success`` separated by spaces;
- ``<name>_episodes/<family>.csv.gz``: every final evaluation's episodes, :data:`EPISODE_FIELDS`;

and the evaluations' JSONL results files they are read from (:func:`latest_episodes`). Imports neither torch nor SB3."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

KEY = ("env", "level", "algorithm", "seed")
FIELDS = (*KEY, "env_id", "budget", "env_steps", "train_success", "test_success", "test_return", "wall_train_s",
          "wall_eval_s", "sittings", "settings_hash", "commit", "command", "torch", "stable_baselines3", "gymnasium", "cpu", "model")
CURVE_FIELDS = (*KEY, "split", "points")
EPISODE_FIELDS = (*KEY, "split", "task_id", "unit_id", "success", "return", "turns", "invalid_calls")


def row_key(row: dict[str, str]) -> tuple[str, str, str, int]:
    return row["env"], row["level"], row["algorithm"], int(row["seed"])


def read_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_rows(path: Path, fields: Sequence[str], rows: Iterable[dict[str, object]]) -> None:
    """Write ``rows`` to ``path`` atomically; a ``.gz`` path is gzipped with no timestamp (same rows, same bytes)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    data = text.getvalue().encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    os.replace(temporary, path)


def read_family_files(folder: Path, pattern: str) -> list[dict[str, str]]:
    return [row for path in sorted(folder.glob(pattern)) for row in read_rows(path)]


def write_family_files(folder: Path, suffix: str, fields: Sequence[str], rows: list[dict[str, object]]) -> None:
    """``rows`` into one file per family (``<family><suffix>``) in ``folder``."""
    for env in dict.fromkeys(str(row["env"]) for row in rows):
        write_rows(folder / f"{env}{suffix}", fields, (row for row in rows if row["env"] == env))


def read_curves(folder: Path) -> list[dict[str, str]]:
    """The learning-curve points of every family's file, one dict a point (the run's key, ``split``,
    ``env_steps``, ``success``)."""
    points = []
    for row in read_family_files(folder, "*.csv"):
        run = {k: row[k] for k in CURVE_FIELDS[:-1]}
        for point in row["points"].split():
            step, success = point.split(":")
            points.append({**run, "env_steps": step, "success": success})
    return points


def write_curves(folder: Path, points: list[dict[str, object]]) -> None:
    """Write ``points`` (as :func:`read_curves` returns them) to one file per family in ``folder``."""
    runs: dict[tuple[str, ...], list[str]] = {}
    for point in points:
        runs.setdefault(tuple(str(point[k]) for k in CURVE_FIELDS[:-1]), []).append(f"{point['env_steps']}:{point['success']}")
    write_family_files(folder, ".csv", CURVE_FIELDS,
                       [{**dict(zip(CURVE_FIELDS, key)), "points": " ".join(run)} for key, run in runs.items()])


def replace_run(rows: list[dict[str, str]], key: tuple[str, str, str, int], new: list[dict[str, object]]) -> list[dict[str, str]]:
    """``rows`` without ``key``'s, then ``new`` (as strings)."""
    return [r for r in rows if row_key(r) != key] + [{k: str(v) for k, v in r.items()} for r in new]


def latest_episodes(path: Path) -> list[dict[str, Any]]:
    """The episode records of an evaluation's JSONL results file (its first line is the evaluation's
    config), the latest of each (task, trial): a resumed evaluation's file may hold an episode twice,
    replayed after an error."""
    records = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        record = json.loads(line)
        records[record["task"], record["trial"]] = record
    return list(records.values())
