"""The benchmark suite: every environment family x its levels x algorithms x seeds, in one command.

    python benchmarks/suite.py --preset smoke     # CustomerSupport-L0, ppo and MaskablePPO, 2 seeds, 3,072 steps (a minute)
    python benchmarks/suite.py --preset quick     # each family's easiest level, 1 seed
    python benchmarks/suite.py --preset full      # every level, every algorithm, 5 seeds (run it over sittings)
    python benchmarks/suite.py --preset full --ray --workers 2       # the runs as Ray tasks on a local Ray
    python benchmarks/suite.py --preset full --address auto          # ... on the Ray cluster this machine joined
    python benchmarks/suite.py --preset full --llm hf:models/agentgym-tiny --algos llm-agentgym-tiny  # a model's rows
    python benchmarks/suite.py --preset full --llm mine=openai:MODEL@http://127.0.0.1:8000/v1 --algos mine

Every trained run goes through ``trainers.lifecycle.train`` (the row's ``command`` is the same run as an
``agentgym train`` command line; a language model's row is evaluated only, :mod:`suite_lib.llm_rows`), its
run directory under ``runs/<preset>/`` (not committed). The driver writes the files as runs finish, so
the suite resumes where it stopped: a row is kept only while its settings hash is the cell's (changed
settings run the row again, from scratch); an interrupted run continues from its checkpoint, its seconds summed over sittings. Files
(:mod:`suite_lib.store`): ``<name>.csv``, ``<name>_curves/``, ``<name>_episodes/``; the page and
figures (:mod:`suite_report`, also alone: ``python benchmarks/suite_report.py --preset ...``):
``<name>.md`` and ``<name>_*.png``; ``<name>`` is ``suite`` for the full preset, else ``suite_<preset>``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]  # run from anywhere

from suite_lib.llm_rows import add_arguments as add_llm_arguments  # noqa: E402
from suite_lib.llm_rows import llm_cells  # noqa: E402
from suite_lib.plan import FAMILIES, PRESETS, cells  # noqa: E402
from suite_lib.runner import Job, Outcome, run_here, run_on_ray  # noqa: E402
from suite_lib.store import (  # noqa: E402
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
from suite_report import file_name, report  # noqa: E402


def commit() -> str:
    """The checked-out commit, ``-dirty`` when tracked files differ from it (the row is then not reproducible from it)."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                           text=True).stdout.strip()
    return (head or "unknown") + ("-dirty" if dirty else "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=list(PRESETS), default="quick")
    parser.add_argument("--envs", nargs="+", help="families (default: the preset's, else all)")
    parser.add_argument("--algos", nargs="+", help="only these algorithms of the preset")
    parser.add_argument("--max-runs", type=int, help="stop after this many new runs (a sitting's share)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--runs", default="runs", help="where run directories go (not committed)")
    parser.add_argument("--ray", action="store_true", help="each run a Ray task, on a local Ray of --workers CPUs")
    parser.add_argument("--workers", type=int, help="CPUs of the local Ray (default: all)")
    parser.add_argument("--address", help="each run a Ray task on this Ray cluster (auto: the one this machine joined; "
                        "ray://host:10001: through Ray Client)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replicates of the page's statistics")
    add_llm_arguments(parser)
    return parser


def outcomes(jobs: list[Job], args: argparse.Namespace) -> Iterator[tuple[Job, Outcome]]:
    if args.ray or args.address:
        return run_on_ray(jobs, args.address, args.workers)
    return run_here(jobs)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    preset, name = PRESETS[args.preset], file_name(args.preset)
    families = args.envs or list(preset.families or FAMILIES)
    try:
        plan = [*cells(preset, families), *llm_cells(args, preset, families)]
    except ValueError as exc:
        print(f"suite: {exc}", file=sys.stderr)
        return 2
    unknown = [a for a in args.algos or () if a not in {c.algorithm for c in plan}]
    if unknown:
        print(f"suite: algorithm(s) {unknown} are not in the {args.preset} preset", file=sys.stderr)
        return 2
    out = Path(args.out)
    table, curves_folder, episodes_folder = out / f"{name}.csv", out / f"{name}_curves", out / f"{name}_episodes"
    rows, curves = read_rows(table), read_curves(curves_folder)
    episodes = read_family_files(episodes_folder, "*.csv.gz")
    kept = {(r["env"], r["level"], r["algorithm"], int(r["seed"])): r["settings_hash"] for r in rows}
    planned = [c for c in plan if not args.algos or c.algorithm in args.algos]
    todo = [c for c in planned if kept.get(c.key) != c.settings_hash(args.device)]
    todo = todo[: args.max_runs] if args.max_runs is not None else todo
    run_root, revision = str((Path(args.runs) / name).resolve()), commit()
    for cell in todo:
        print(f"{cell.name} {cell.env_steps} env steps", flush=True)
    failures = 0
    for job, outcome in outcomes([Job(cell, run_root, args.device, revision) for cell in todo], args):
        try:
            done = outcome()
        except Exception as exc:  # one broken run must not lose the others
            failures += 1
            print(f"  {job.cell.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        rows = replace_run(rows, job.cell.key, [done["row"]])
        curves = replace_run(curves, job.cell.key, done["curves"])
        episodes = replace_run(episodes, job.cell.key, done["episodes"])
        write_rows(table, FIELDS, rows)
        write_curves(curves_folder, curves)
        write_family_files(episodes_folder, ".csv.gz", EPISODE_FIELDS, episodes)
        row = done["row"]
        print(f"  {job.cell.name} test success {row['test_success']}, {row['wall_train_s']} s training + "
              f"{row['wall_eval_s']} s evaluation", flush=True)
    if rows:
        print(f"page: {report(args.preset, out, args.reps)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
