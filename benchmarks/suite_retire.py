"""Move a family version's runs out of a suite table, once a later version re-cut its ladder.

A table keys its rows by family, level name, algorithm and seed; when a family's next version
changes what a level holds (``Tau2Retail-L1-v2`` is not ``Tau2Retail-L1-v1``), the old version's
rows must leave the page before the new ones take their keys. This moves every row, learning
curve and episode of the runs on the version's ids (its levels and its top) into the table
``<name>_retired`` beside it, where they stay readable (``python -m benchmarks.suite_breakdown
... --suite suite_retired``):

    python -m benchmarks.suite_retire tau2_retail 1                  # the full table's Tau2Retail-v1 rows
    python -m benchmarks.suite_retire tau2_retail 1 --preset quick   # ... of suite_quick

Then regenerate the page (``python -m benchmarks.suite_report --preset full``). Moving is idempotent:
a second call finds nothing to move.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentgym_envs.levels import check_version, family
from benchmarks.suite_lib.plan import PRESETS
from benchmarks.suite_lib.sitting import TableFiles
from benchmarks.suite_lib.store import EPISODE_FIELDS, FIELDS, row_key, write_curves, write_family_files, write_rows
from benchmarks.suite_report import file_name

RESULTS = Path(__file__).resolve().parent / "results"


def retire(files: TableFiles, retired: TableFiles, env_ids: set[str]) -> int:
    """Move the runs of ``files`` whose env id is in ``env_ids`` (row, curves, episodes) into ``retired``,
    under ``files``' lock (a sitting writing beside it keeps its rows); the number of runs moved."""
    with files.locked():
        rows = files.rows()
        moved = {row_key(r) for r in rows if r["env_id"] in env_ids}
        if not moved:
            return 0
        parts = [(files.rows, retired.rows), (files.curve_points, retired.curve_points),
                 (files.episode_rows, retired.episode_rows)]
        kept, gone = [], []
        for read, read_retired in parts:
            current = read()
            kept.append([r for r in current if row_key(r) not in moved])
            gone.append(read_retired() + [r for r in current if row_key(r) in moved])
        for table, (rows_kept, curves_kept, episodes_kept) in ((files, kept), (retired, gone)):
            write_rows(table.table, FIELDS, rows_kept)
            _rewrite_families(table.curves, ".csv", curves_kept, lambda rows, folder=table.curves: write_curves(folder, rows))
            _rewrite_families(table.episodes, ".csv.gz", episodes_kept,
                              lambda rows, folder=table.episodes: write_family_files(folder, ".csv.gz", EPISODE_FIELDS, rows))
    return len(moved)


def _rewrite_families(folder: Path, suffix: str, rows: list[dict[str, str]], write) -> None:
    """Write ``rows`` (one file per family) and remove the files of families left without any."""
    write(rows)
    present = {row["env"] for row in rows}
    for path in folder.glob(f"*{suffix}") if folder.is_dir() else ():
        if path.name[: -len(suffix)] not in present:
            path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family", help="the family's short name, e.g. tau2_retail")
    parser.add_argument("version", type=int, help="the version whose runs leave the table")
    parser.add_argument("--preset", choices=list(PRESETS), default="full")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the folder of the table's files")
    args = parser.parse_args(argv)
    ladder = family(args.family, check_version(args.family, args.version))
    name = file_name(args.preset)
    moved = retire(TableFiles(args.out, name), TableFiles(args.out, f"{name}_retired"), set(ladder.ids()))
    print(f"{moved} runs of {ladder.stem}-v{ladder.version}'s ladder moved to {args.out / (name + '_retired.csv')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
