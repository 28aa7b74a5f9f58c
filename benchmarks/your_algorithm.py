"""Your algorithm on the suite's table: one command runs it under the suite's protocol and compares it
with the committed baseline rows, without running the baselines again.

    python -m benchmarks.your_algorithm benchmarks.examples.reinforce --preset smoke
    python -m benchmarks.your_algorithm my-algo --import mypackage.plugins --preset full

The algorithm is a module path (a module with ``train``, ``load_policy``, optionally ``Config`` and
``CHECKPOINT_NAME``: ``trainers.lifecycle.module_algorithm``) or a name that a module given to
``--import`` registers with ``register_algorithm``. Its module declares ``search_space()`` (Ray Tune
distributions over its settings). The protocol, in order:

1. **Tuning**: ``benchmarks/tuning.py``'s search (Optuna TPE on Ray Tune, the built-ins' budget:
   16 trials, each 50,000 env steps on every tuning level, scored on validation), frozen into
   ``--tuned``/<algo>.json; a frozen record there is used as it is (a finished search is not run
   again; an interrupted one resumes from ``--storage``).
2. **Rows**: the preset's levels, seeds, env-step budgets, evaluation episodes, curve grid and
   early stopping, the frozen settings on every level, written as the suite writes its own
   (resumable, a commit, command and settings hash per row, every final episode):
   ``<out>/suite_<preset>_<name>.csv``, ``..._curves/``, ``..._episodes/``.
3. **Comparison**: rliable's IQM and mean with 95 % intervals, probabilities of improvement and
   orderings against the preset's committed baseline rows (``--baselines``), on the levels both
   have rows on: ``<out>/suite_<preset>_<name>.md`` and its figures. Where no baseline rows of
   the preset are committed, the page and the output say so and the command exits with 1.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import tuning
from benchmarks.suite_lib.contender import (
    baseline_settings_text,
    budget_notes,
    contender_cells,
    merged,
    orderings_with,
    tuning_text,
)
from benchmarks.suite_lib.plan import FAMILIES, PRESETS, REFERENCES, TRAINED, Preset
from benchmarks.suite_lib.sitting import TableFiles, add_sitting_arguments, launcher, sit
from benchmarks.suite_lib.stats import Outcomes
from benchmarks.suite_report import comparisons, family_tables, file_name, grouped, iqm_table, plot_figures, widest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("algo", help="a module path (mypackage.my_algo) or a name an --import module registers")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="a module that registers the algorithm (imported here, in every trial and every run; "
                        "repeat the option for more)")
    parser.add_argument("--name", help="the files' name (default: the algorithm's last dotted part)")
    parser.add_argument("--preset", choices=list(PRESETS), default="quick")
    parser.add_argument("--envs", nargs="+", help="families (default: the preset's, else all)")
    parser.add_argument("--seeds", type=int, help="fewer seeds than the preset's (a first look; the page says so)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--baselines", type=Path, default=Path("benchmarks/results"), help="the committed baseline rows")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="where its rows and page go")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="run directories (not committed)")
    parser.add_argument("--tuned", type=Path, default=tuning.TUNED, help="frozen settings (<algo>.json)")
    parser.add_argument("--storage", type=Path, default=tuning.ROOT / "runs" / "tuning", help="Ray Tune's experiments")
    parser.add_argument("--trials", type=int, default=tuning.TRIALS, help="tuning trials (the built-ins': %(default)s)")
    parser.add_argument("--tuning-levels", nargs="+", default=list(tuning.TUNING_LEVELS), help="the tuning set")
    parser.add_argument("--tuning-steps", type=int, default=tuning.STEPS, help="env steps per level and trial")
    parser.add_argument("--tuning-episodes", type=int, default=tuning.EPISODES, help="validation episodes per level")
    parser.add_argument("--concurrent", type=int, default=2, help="tuning trials at once")
    add_sitting_arguments(parser)
    parser.add_argument("--address", help="the Ray cluster of the tuning trials and the runs (auto: this machine's)")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replicates of the page's statistics")
    return parser


def frozen_record(args: argparse.Namespace) -> dict[str, Any]:
    """The algorithm's frozen tuning record: the one in ``--tuned``, else the search's, run now."""
    path = args.tuned / f"{args.algo}.json"
    if not path.exists():
        print(f"tuning {args.algo}: {args.trials} trials on {', '.join(args.tuning_levels)}", flush=True)
        tuning.main(["--algos", args.algo, "--trials", str(args.trials), "--levels", *args.tuning_levels,
                     "--steps", str(args.tuning_steps), "--episodes", str(args.tuning_episodes), "--storage",
                     str(args.storage), "--out", str(args.tuned), "--concurrent", str(args.concurrent),
                     *(word for module in args.imports for word in ("--import", module)),
                     *(["--address", args.address] if args.address else [])])
    return json.loads(path.read_text())


def page(args: argparse.Namespace, preset: Preset, record: dict[str, Any], own: TableFiles, baseline: TableFiles,
         notes: list[str], command: str) -> tuple[Path, bool]:
    """Write ``<own.name>.md`` (and its figures): the protocol, the tuning, then the comparison with the
    baseline rows on the levels the contender has rows on; the page, and whether there was a comparison."""
    own_rows = own.rows()
    tasks = {(r["env"], r["level"]) for r in own_rows}
    rows, curves, episodes = merged(baseline, own, tasks)
    baselines = list(dict.fromkeys(r["algorithm"] for r in rows if r["algorithm"] != args.algo))
    seeds = args.seeds or preset.seeds
    lines = [f"# {args.algo} beside the suite's {args.preset} baselines", "", f"Command: `{command}`", "",
             f"Protocol ({args.preset} preset): each run {preset.budget_text()}, {seeds} seed(s)"
             + (f" (of the preset's {preset.seeds})" if seeds < preset.seeds else "")
             + f", a learning-curve point every {preset.curve_every:,} env steps ({preset.curve_episodes} validation "
             f"episodes), early stopping, the test split read once ({preset.eval_episodes} final episodes a split). "
             f"Rows: [{own.name}.csv]({own.name}.csv) (a commit, command and settings hash each), episodes: "
             f"[{own.name}_episodes/]({own.name}_episodes).", "",
             f"Tuning of {args.algo}: {tuning_text(record, tuning.TRIALS, tuning.TUNING_LEVELS, tuning.STEPS, tuning.EPISODES)}. "
             + baseline_settings_text([a for a in baselines if a not in REFERENCES], tuning.TUNED), ""]
    lines += [f"Budgets that differ from the baseline rows': {'; '.join(notes)}.", ""] if notes else []
    if not own_rows:
        lines += [f"**No comparison**: {args.algo} has no rows yet (its runs failed or have not run)."]
    elif not baselines:
        lines += [f"**No comparison**: no baseline rows of the {args.preset} preset on these levels in "
                  f"`{baseline.table}`. Run `python -m benchmarks.suite --preset {args.preset}` (or wait for its "
                  "committed rows), then this command again: it keeps these rows."]
    else:
        algorithms = [*baselines, args.algo]
        outcomes = Outcomes.from_episodes(episodes)
        stats = comparisons(outcomes, algorithms, list(dict.fromkeys(env for env, _ in sorted(tasks))), args.reps)
        lines += [*(plot_figures(outcomes, curves, widest(stats), own.folder, own.name, args.reps) if stats else []), "",
                  "## IQM of test success, 95 % intervals", "",
                  f"Baselines from [{baseline.name}.csv]({baseline.name}.csv), not run again; seeds and test units "
                  "resampled as on the suite's page.", "", *iqm_table(stats, algorithms, outcomes), "", "## Orderings", "",
                  f"{args.algo} against each baseline: an ordering only where the 95 % interval of the IQM difference "
                  "excludes 0.", "", *(f"- {family}: " + "; ".join(orderings_with(c, args.algo)) for family, c in stats.items())]
        groups = grouped(rows)
        for env in dict.fromkeys(r["env"] for r in own_rows):
            lines += ["", f"## {env}", "", *family_tables(env, groups, curves, seeds)]
    path = own.folder / f"{own.name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, bool(baselines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from trainers.lifecycle import algorithm

    tuning.import_modules(args.imports)
    if args.algo in (*TRAINED, *REFERENCES) or any(args.algo in p.algorithms for p in PRESETS.values()):
        print(f"your_algorithm: {args.algo} is one of the suite's own algorithms: python -m benchmarks.suite",
              file=sys.stderr)
        return 2
    try:
        algorithm(args.algo)
    except ValueError as exc:
        print(f"your_algorithm: {exc}", file=sys.stderr)
        return 2
    preset = PRESETS[args.preset]
    families = args.envs or list(preset.families or FAMILIES)
    own = TableFiles(args.out, f"{file_name(args.preset)}_{args.name or args.algo.rsplit('.', 1)[-1]}")
    baseline = TableFiles(args.baselines, file_name(args.preset))
    record = frozen_record(args)
    planned = contender_cells(preset, families, args.algo, record["settings"], args.seeds)
    failures = sit(planned, own, args.runs, args.device, launcher(args.ray, args.address, args.workers), args.max_runs,
                   tuple(args.imports), stop_file=args.stop_file)
    command = shlex.join(["python", "-m", "benchmarks.your_algorithm", *(argv if argv is not None else sys.argv[1:])])
    path, compared = page(args, preset, record, own, baseline, budget_notes(baseline.rows(), planned), command)
    print(f"page: {path}")
    if not compared:
        print(f"your_algorithm: no comparison: no baseline rows of the {args.preset} preset in {baseline.table} on "
              f"the levels of {args.algo}'s rows, or no rows of it (see {path})", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
