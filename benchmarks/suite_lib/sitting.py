"""One sitting of a table: run the planned cells that have no row with their settings hash, here or
on Ray, and write each run's row, curve and episodes as it finishes (so that the next sitting
resumes where this one stopped), merged under a lock into what the files hold then: sittings of one table
side by side on this machine (say, a language model's rows beside trained rows) keep each other's rows. The
suite's own table and a user's algorithm's share it."""

from __future__ import annotations

import argparse
import fcntl
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.tuning import commit, is_dirty

from .plan import Cell
from .runner import Job, Outcome, run_here, run_on_ray
from .store import (
    EPISODE_FIELDS,
    FIELDS,
    read_curves,
    read_family_files,
    read_rows,
    replace_run,
    write_curves,
    write_family_files,
    write_rows,
)


@dataclass(frozen=True)
class TableFiles:
    """A table's files in ``folder``: ``<name>.csv``, ``<name>_curves/``, ``<name>_episodes/``."""

    folder: Path
    name: str

    @property
    def table(self) -> Path:
        return self.folder / f"{self.name}.csv"

    @property
    def curves(self) -> Path:
        return self.folder / f"{self.name}_curves"

    @property
    def episodes(self) -> Path:
        return self.folder / f"{self.name}_episodes"

    def rows(self) -> list[dict[str, str]]:
        return read_rows(self.table)

    def curve_points(self) -> list[dict[str, str]]:
        return read_curves(self.curves)

    def episode_rows(self) -> list[dict[str, str]]:
        return read_family_files(self.episodes, "*.csv.gz")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the table's lock (``.<name>.lock`` beside it): one writer at a time among the sittings of this
        machine."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / f".{self.name}.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def record(self, key: tuple[str, str, str, int], done: dict[str, Any]) -> None:
        """Write one finished run's row, curve points and episodes in place of the key's, into what the files hold
        now (under the lock): sittings of the same table side by side keep each other's rows."""
        with self.locked():
            write_rows(self.table, FIELDS, replace_run(self.rows(), key, [done["row"]]))
            write_curves(self.curves, replace_run(self.curve_points(), key, done["curves"]))
            write_family_files(self.episodes, ".csv.gz", EPISODE_FIELDS, replace_run(self.episode_rows(), key,
                                                                                     done["episodes"]))


Launch = Callable[[Iterable[Job]], Iterator[tuple[Job, Outcome]]]


def launcher(ray: bool, address: str | None, workers: int | None) -> Launch:
    """How the jobs run: one after the other here, or each a Ray task (``ray``: a local Ray of
    ``workers`` CPUs; ``address``: that cluster)."""
    if ray or address:
        return lambda jobs: run_on_ray(jobs, address, workers)
    return run_here


def add_sitting_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a sitting that the suite and a user's algorithm share: its share of runs, its stop
    file and the local Ray its runs fan out on."""
    parser.add_argument("--max-runs", type=int, help="stop after this many new runs (a sitting's share)")
    parser.add_argument("--stop-file", type=Path, help="once this file exists, submit no further run: the runs under way "
                        "finish and are written, then the sitting ends (no run is cut short; remove the file to sit "
                        "again)")
    parser.add_argument("--ray", action="store_true", help="each run a Ray task, on a local Ray of --workers CPUs")
    parser.add_argument("--workers", type=int, help="CPUs of the local Ray (default: all)")


def sit(planned: Sequence[Cell], files: TableFiles, runs: Path, device: str, launch: Launch,
        max_runs: int | None = None, imports: tuple[str, ...] = (), stop_file: Path | None = None) -> int:
    """Run the cells of ``planned`` whose row in ``files`` is missing or has another settings hash
    (at most ``max_runs``), run directories under ``runs/<name>``; ``imports``: modules every run
    imports first (they register its algorithm). A sitting at a commit also runs again the rows run
    from a tree with uncommitted changes (commit ``...-dirty``): their recorded commit does not
    reproduce them. Each finished run is written at once (:meth:`TableFiles.record`). Once
    ``stop_file`` exists no further run is submitted: those under way finish and are written, and the
    sitting ends (a run that would not resume exactly is not lost). The number of runs that failed."""
    rows = files.rows()
    run_root, revision = str((runs / files.name).resolve()), commit()
    kept = {(r["env"], r["level"], r["algorithm"], int(r["seed"])): r["settings_hash"] for r in rows
            if is_dirty(revision) or not is_dirty(r["commit"])}
    todo = [c for c in planned if kept.get(c.key) != c.settings_hash(device)]
    todo = todo[:max_runs] if max_runs is not None else todo
    for cell in todo:
        print(f"{cell.name} {cell.env_steps} env steps", flush=True)

    def jobs() -> Iterator[Job]:  # drawn as runs start: none once the stop file exists
        for cell in todo:
            if stop_file is not None and stop_file.exists():
                print(f"{stop_file} exists: no further run starts (remove it to sit again)", flush=True)
                return
            yield Job(cell, run_root, device, revision, imports)

    failures = 0
    for job, outcome in launch(jobs()):
        try:
            done = outcome()
        except Exception as exc:  # one broken run must not lose the others
            failures += 1
            print(f"  {job.cell.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        files.record(job.cell.key, done)
        row = done["row"]
        print(f"  {job.cell.name} test success {row['test_success']}, {row['wall_train_s']} s training + "
              f"{row['wall_eval_s']} s evaluation", flush=True)
    return failures
