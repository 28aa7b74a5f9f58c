"""The benchmark suite: every environment family x its levels x algorithms x seeds, in one command.

    python -m benchmarks.suite --preset smoke     # CustomerSupport-L0, ppo and MaskablePPO, 2 seeds, 3,072 steps (a minute)
    python -m benchmarks.suite --preset quick     # each family's easiest level, 1 seed
    python -m benchmarks.suite --preset full      # every level, every algorithm, 5 seeds (run it over sittings)
    python -m benchmarks.suite --preset full --ray --workers 2       # the runs as Ray tasks on a local Ray
    python -m benchmarks.suite --preset full --envs coding --levels L1 --algos sb3-maskable-ppo  # one cell's seeds
    python -m benchmarks.suite --preset full --address auto          # ... on the Ray cluster this machine joined
    python -m benchmarks.suite --preset full --llm hf:models/agentgym-tiny --algos llm-agentgym-tiny  # a model's rows
    python -m benchmarks.suite --preset full --llm mine=openai:MODEL@http://127.0.0.1:8000/v1 --algos mine

Every trained run goes through ``trainers.lifecycle.train`` (the row's ``command`` is the same run as an
``agentgym train`` command line; a language model's row is evaluated only, :mod:`suite_lib.llm_rows`), its
run directory under ``runs/<preset>/`` (not committed). The driver writes the files as runs finish, so
the suite resumes where it stopped: a row is kept only while its settings hash is the cell's (changed
settings run the row again, from scratch; a sitting at a commit runs again the rows of a tree with
uncommitted changes, ``...-dirty``); an interrupted run of our torch trainers continues from its
checkpoint, its seconds summed over sittings, where that continues bit-identically; an interrupted SB3
run, or one whose checkpoint holds no envs (subprocess envs), starts afresh
(``trainers.lifecycle.resumes_exactly``). Files
(:mod:`suite_lib.store`): ``<name>.csv``, ``<name>_curves/``, ``<name>_episodes/``; the page and
figures (:mod:`suite_report`, also alone: ``python -m benchmarks.suite_report --preset ...``):
``<name>.md`` and ``<name>_*.png``; ``<name>`` is ``suite`` for the full preset, else ``suite_<preset>``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.suite_lib.llm_rows import add_arguments as add_llm_arguments
from benchmarks.suite_lib.llm_rows import llm_cells
from benchmarks.suite_lib.plan import FAMILIES, PRESETS, cells, untuned
from benchmarks.suite_lib.sitting import TableFiles, add_sitting_arguments, launcher, sit
from benchmarks.suite_report import file_name, report


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=list(PRESETS), default="quick")
    parser.add_argument("--envs", nargs="+", help="families (default: the preset's, else all)")
    parser.add_argument("--algos", nargs="+", help="only these algorithms of the preset")
    parser.add_argument("--levels", nargs="+", help="only these levels of each family (L0, L1, ..., or v1 for a top)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--runs", default="runs", help="where run directories go (not committed)")
    add_sitting_arguments(parser)
    parser.add_argument("--address", help="each run a Ray task on this Ray cluster (auto: the one this machine joined; "
                        "ray://host:10001: through Ray Client)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replicates of the page's statistics")
    add_llm_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    preset, name = PRESETS[args.preset], file_name(args.preset)
    families = args.envs or list(preset.families or FAMILIES)
    try:
        plan = [*cells(preset, families), *llm_cells(args, preset, families)]
    except ValueError as exc:
        print(f"suite: {exc}", file=sys.stderr)
        return 2
    unknown = [a for a in args.algos or () if a not in {*preset.all_algorithms(), *(c.algorithm for c in plan)}]
    if unknown:
        print(f"suite: algorithm(s) {unknown} are not in the {args.preset} preset", file=sys.stderr)
        return 2
    absent = [level for level in args.levels or () if level not in {c.level for c in plan}]
    if absent:
        print(f"suite: level(s) {absent} are in none of the families {families}", file=sys.stderr)
        return 2
    waiting = [a for a in untuned(preset) if not args.algos or a in args.algos]
    if waiting:
        print(f"suite: {waiting} not tuned yet, left out (python benchmarks/tuning.py --algos {' '.join(waiting)})",
              file=sys.stderr)
    out = Path(args.out)
    planned = [c for c in plan if (not args.algos or c.algorithm in args.algos) and (not args.levels or c.level in args.levels)]
    failures = sit(planned, TableFiles(out, name), Path(args.runs), args.device,
                   launcher(args.ray, args.address, args.workers), args.max_runs, stop_file=args.stop_file)
    if TableFiles(out, name).rows():
        print(f"page: {report(args.preset, out, args.reps)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
