"""The committed suite tables' episodes: the unit each names is the one every algorithm's episode of the same
task names (the bootstrap resamples units, so a row that named its tasks as units would narrow its intervals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.suite_lib.store import read_family_files

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
TABLES = sorted(path.name for path in RESULTS.glob("suite*_episodes"))


@pytest.mark.parametrize("table", TABLES)
def test_every_episode_of_a_task_names_the_same_unit(table):
    units: dict[tuple[str, ...], set[str]] = {}
    for episode in read_family_files(RESULTS / table, "*.csv.gz"):
        units.setdefault((episode["env"], episode["level"], episode["split"], episode["task_id"]), set()).add(
            episode["unit_id"])
    assert units and not {task: named for task, named in units.items() if len(named) > 1}
