"""Compare training algorithms on the AgentGym environments: algorithms x environments x seeds.

    python benchmarks/compare_algorithms.py --envs customer_support --seeds 3
    python benchmarks/compare_algorithms.py --algos sb3-ppo random expert --total-steps 50000

Every run goes through ``trainers.lifecycle.train`` and keeps its TensorBoard logs, checkpoint
and ``result.json`` under ``<out>/runs/<Env>__<algo>__seed<k>``. The script writes
``<out>/<name>.csv`` (one row per run), ``<out>/<name>.md`` (mean +/- sample std over seeds,
the exact command in its header) and ``<out>/<name>_<env>.png`` (test success against
environment steps). Algorithms whose module is not in the tree yet are reported as skipped;
a run that fails is reported as failed with its error; neither stops the benchmark.
``--resume`` reuses finished runs that trained at least ``--total-steps`` and continues the
others (interrupted, or shorter) from their last checkpoint.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import os
import platform
import shlex
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentgym_envs import ENVIRONMENTS, resolve_env_id
from agentgym_envs.tables import mean_std
from trainers.lifecycle import ALGORITHMS, RESULT_FILE, TARGET_SUCCESS, TrainResult, load_result, train
from trainers.run import TrainRequest, run_dir_for

REFERENCE_ALGOS = ("random", "expert")  # evaluated, not trained: drawn as horizontal lines
CSV_FIELDS = (
    "env_id", "algo", "seed", "status", "total_steps", "wall_time_s", "sps", "steps_to_target",
    "test_success", "test_tool_reliability", "test_tokens_used", "test_cost_reduction", "test_return",
    "train_success", "train_tool_reliability", "train_tokens_used", "run_dir",
)


@dataclass
class Outcome:
    """One (env, algo, seed) cell: a result, or why there is none (``status``)."""

    env_id: str
    algo: str
    seed: int
    status: str  # "ok", "skipped: ...", "failed: ..."
    result: TrainResult | None = None


def unavailable_reason(algo: str) -> str | None:
    """Why ``algo`` cannot run in this tree (its module or function is missing), or None."""
    module, _, function = ALGORITHMS[algo].train.partition(":")
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        return f"module {module} is not available ({exc})"
    if not hasattr(loaded, function):
        return f"{module} has no function {function}"
    return None


def run_cell(algo: str, env_id: str, seed: int, args: argparse.Namespace) -> Outcome:
    run_dir = run_dir_for(Path(args.out) / "runs", env_id, algo, seed)
    if args.resume and (run_dir / RESULT_FILE).exists():
        finished = load_result(run_dir)
        if finished.total_steps >= args.total_steps or algo in REFERENCE_ALGOS:
            print(f"[{algo} {env_id} seed {seed}] reusing {run_dir / RESULT_FILE}")
            return Outcome(env_id, algo, seed, "ok", finished)
    request = TrainRequest(env_id, algo=algo, seed=seed, total_steps=args.total_steps, device=args.device,
                           run_root=str(Path(args.out) / "runs"), eval_episodes=args.eval_episodes, resume=args.resume,
                           progress=False)
    doing = "evaluating" if algo in REFERENCE_ALGOS else f"training {args.total_steps} steps"
    print(f"[{algo} {env_id} seed {seed}] {doing} -> {run_dir}", flush=True)
    try:
        return Outcome(env_id, algo, seed, "ok", train(request))
    except Exception as exc:  # one broken run must not lose the others
        traceback.print_exc()
        return Outcome(env_id, algo, seed, f"failed: {type(exc).__name__}: {exc}")


def csv_row(outcome: Outcome) -> dict[str, object]:
    row: dict[str, object] = {"env_id": outcome.env_id, "algo": outcome.algo, "seed": outcome.seed, "status": outcome.status}
    r = outcome.result
    if r is not None:
        row.update(total_steps=r.total_steps, wall_time_s=round(r.wall_time_s, 2), sps=round(r.sps, 1),
                   steps_to_target="" if r.steps_to_target is None else r.steps_to_target, run_dir=r.run_dir)
        for split, metrics in (("test", r.test_metrics), ("train", r.train_metrics)):
            for key in ("success", "tool_reliability", "tokens_used", "cost_reduction", "return"):
                if f"{split}_{key}" in CSV_FIELDS:
                    row[f"{split}_{key}"] = round(metrics[key], 4)
    return row


def steps_to_target_cell(results: Sequence[TrainResult]) -> str:
    reached = [r.steps_to_target for r in results if r.steps_to_target is not None]
    if not reached:
        return f"not reached (0/{len(results)})"
    return f"{mean_std([float(s) for s in reached], 0)} ({len(reached)}/{len(results)})"


def markdown(outcomes: Sequence[Outcome], args: argparse.Namespace, command: str, started: str) -> str:
    lines = [
        "# Algorithm comparison",
        "",
        f"Command: `{command}`",
        "",
        f"Started {started}; machine: {platform.platform()}, {os.cpu_count()} CPU cores, device {args.device}; "
        f"{args.total_steps} env steps per trained run, seeds 0..{args.seeds - 1}; final metrics over "
        f"{args.eval_episodes} episodes per split (seeds 0..{args.eval_episodes - 1}). Values are mean ± sample std over seeds. "
        f"Steps to {TARGET_SUCCESS:.0%}: first periodic test evaluation at which test success reached it "
        f"(mean over the seeds that reached it, and how many did). SPS: env steps per second of training "
        f"(evaluation excluded); random and expert are evaluated only.",
    ]
    if args.note:
        lines += ["", args.note]
    columns = ["algorithm", "seeds", "test success", "tool reliability", "tokens used", f"steps to {TARGET_SUCCESS:.0%}", "wall time (s)", "SPS"]
    for env_id in dict.fromkeys(o.env_id for o in outcomes):
        lines += ["", f"## {env_id}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        notes = []
        for algo in dict.fromkeys(o.algo for o in outcomes if o.env_id == env_id):
            cell = [o for o in outcomes if o.env_id == env_id and o.algo == algo]
            results = [o.result for o in cell if o.result is not None]
            notes += [f"- {algo} seed {o.seed}: {o.status}" for o in cell if o.status != "ok"]
            if not results:
                lines.append(f"| {algo} | 0 | " + " | ".join(["-"] * (len(columns) - 2)) + " |")
                continue
            test = lambda key: [r.test_metrics[key] for r in results]  # noqa: E731, B023 (called in this iteration)
            lines.append("| " + " | ".join([
                algo, str(len(results)), mean_std(test("success"), 3), mean_std(test("tool_reliability"), 3),
                mean_std(test("tokens_used"), 1), steps_to_target_cell(results),
                mean_std([r.wall_time_s for r in results], 1), mean_std([r.sps for r in results], 0),
            ]) + " |")
        if notes:
            lines += ["", "Not run:", *dict.fromkeys(notes)]
    return "\n".join(lines) + "\n"


def plot_curves(outcomes: Sequence[Outcome], env_id: str, path: Path) -> None:
    """Test success against env steps: mean over seeds (min-max band); references as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for algo in dict.fromkeys(o.algo for o in outcomes if o.env_id == env_id):
        results = [o.result for o in outcomes if o.env_id == env_id and o.algo == algo and o.result is not None]
        if not results:
            continue
        if algo in REFERENCE_ALGOS:
            axes.axhline(np.mean([r.test_metrics["success"] for r in results]), linestyle="--", label=algo, color="gray" if algo == "random" else "black")
            continue
        steps = sorted(set.intersection(*(set(s for s, _ in r.curve) for r in results)))
        values = np.array([[dict(r.curve)[s] for s in steps] for r in results])
        line, = axes.plot(steps, values.mean(0), marker=".", label=f"{algo} ({len(results)} seeds)")
        axes.fill_between(steps, values.min(0), values.max(0), alpha=0.2, color=line.get_color())
    axes.set(title=f"{env_id}: test success", xlabel="environment steps", ylabel="test success", ylim=(-0.02, 1.02))
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", nargs="+", default=list(ALGORITHMS), help=f"from {list(ALGORITHMS)} (default: all)")
    parser.add_argument("--envs", nargs="+", default=[e.name for e in ENVIRONMENTS], help="env names or ids (default: all registered)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1")
    parser.add_argument("--total-steps", type=int, default=200_000)
    parser.add_argument("--eval-episodes", type=int, default=100, help="final evaluation episodes per split")
    parser.add_argument("--device", default="cpu", help="cpu | cuda | auto")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--name", default="compare", help="file name prefix of the CSV, table and plots")
    parser.add_argument("--note", default="", help="a paragraph for the table's header (how the runs were produced)")
    parser.add_argument("--resume", action="store_true", help="reuse runs that trained at least --total-steps; continue the others from their checkpoints")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    unknown = [a for a in args.algos if a not in ALGORITHMS]
    if unknown:
        print(f"compare_algorithms: unknown algorithm(s) {unknown}; choose from {list(ALGORITHMS)}", file=sys.stderr)
        return 2
    try:
        env_ids = [resolve_env_id(name) for name in args.envs]
    except ValueError as exc:
        print(f"compare_algorithms: {exc}", file=sys.stderr)
        return 2
    command = "python benchmarks/compare_algorithms.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    for env_id in env_ids:
        for algo in args.algos:
            reason = unavailable_reason(algo)
            if reason is not None:
                print(f"[{algo}] skipped: {reason}")
                outcomes += [Outcome(env_id, algo, seed, f"skipped: {reason}") for seed in range(args.seeds)]
                continue
            outcomes += [run_cell(algo, env_id, seed, args) for seed in range(args.seeds)]
    with (out / f"{args.name}.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(csv_row(o) for o in outcomes)
    table = markdown(outcomes, args, command, started)
    (out / f"{args.name}.md").write_text(table, encoding="utf-8")
    for env_id in env_ids:
        plot_curves(outcomes, env_id, out / f"{args.name}_{env_id.split('/')[-1]}.png")
    print(table)
    return 1 if any(o.status.startswith("failed") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
