"""Learning targets of our torch trainers on CustomerSupport-v0 (test split), algorithms x seeds.

Targets: PPO success >= 95% and tool reliability >= 95% on the test split within
200k environment steps, 3 seeds; GRPO the same (steps needed reported); BC alone and BC->PPO
reported (and BC->GRPO, ``--algos bc-grpo``). Each finished (algo, seed) run is stored as JSON under
``benchmarks/results/learning_targets/``; the CSV and markdown table are rebuilt from every
stored run, so several invocations (e.g. one per algorithm, in parallel) add up.

    nice -n 10 python benchmarks/learning_targets.py --algos ppo --seeds 1 2 3 --total-steps 200000
    python benchmarks/learning_targets.py --report-only
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from agentgym_envs.cli import parse_override
from trainers.lifecycle import DEFAULT_WARM_START_STEPS, train
from trainers.run import TrainRequest

RESULTS = Path(__file__).resolve().parent / "results"
STORE = RESULTS / "learning_targets"
TARGET = 0.95
COLUMNS = ("success", "tool_reliability", "tokens_used", "cost_reduction")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="customer_support")
    parser.add_argument("--algos", nargs="+", default=["ppo", "grpo", "bc", "bc-ppo"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--total-steps", type=int, default=200_000)
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--run-root", default="runs/benchmarks")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="config override, as agentgym train --set")
    parser.add_argument("--report-only", action="store_true", help="rebuild the table from the stored runs")
    args = parser.parse_args()
    command = "python benchmarks/learning_targets.py " + shlex.join(sys.argv[1:])
    overrides = dict(parse_override(item) for item in args.set)
    STORE.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        for algo in args.algos:
            for seed in args.seeds:
                budget = args.total_steps if algo != "bc" else overrides.get("bc_steps", DEFAULT_WARM_START_STEPS)
                request = TrainRequest(args.env, algo=algo, seed=seed, total_steps=budget, device=args.device,
                                       run_root=args.run_root, eval_episodes=args.eval_episodes, progress=False,
                                       overrides={k: v for k, v in overrides.items() if k != "bc_steps" or algo.startswith("bc-")})
                result = train(request)
                record = {"command": command, "finished_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                          "overrides": request.overrides, **asdict(result)}
                record["budget"] = request.total_steps
                (STORE / f"{algo}_{request.total_steps}_seed{seed}.json").write_text(json.dumps(record, indent=1))
    write_report()
    return 0


def write_report() -> None:
    records = [json.loads(p.read_text()) for p in sorted(STORE.glob("*.json"))]
    if not records:
        return
    by_algo: dict[str, list[dict]] = {}
    for record in records:
        by_algo.setdefault(f"{record['algo']} ({record['budget'] // 1000}k)", []).append(record)
    with (RESULTS / "learning_targets.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["algo", "budget", "seed", "total_steps", *(f"test_{c}" for c in COLUMNS), "train_success",
                         "steps_to_95pct", "wall_time_s", "sps", "command"])
        for record in records:
            writer.writerow([record["algo"], record["budget"], record["seed"], record["total_steps"],
                             *(round(record["test_metrics"][c], 4) for c in COLUMNS), round(record["train_metrics"]["success"], 4),
                             record["steps_to_target"], round(record["wall_time_s"], 1), round(record["sps"], 1), record["command"]])
    lines = ["# Learning targets on CustomerSupport-v0 (test split, greedy policy)", "",
             "Commands (one per stored run group):", ""]
    lines += [f"- `{c}`" for c in sorted({r["command"] for r in records})]
    lines += ["", "Target: test success >= 0.95 and tool reliability >= 0.95 within 200k env steps.", "",
              "| algo (budget) | seeds | env steps | test success | test tool reliability | train success | tokens used | cost reduction | "
              "steps to 95% success (per seed) | wall time (s) | SPS | targets met |", "|-|-|-|-|-|-|-|-|-|-|-|-|"]
    for algo, group in by_algo.items():
        cell = lambda key, split="test_metrics": f"{np.mean([r[split][key] for r in group]):.3f} +/- {np.std([r[split][key] for r in group]):.3f}"  # noqa: E731, B023
        met = all(r["test_metrics"]["success"] >= TARGET and r["test_metrics"]["tool_reliability"] >= TARGET for r in group)
        steps = ", ".join(str(r["steps_to_target"]) for r in group)
        lines.append(f"| {algo} | {', '.join(str(r['seed']) for r in group)} | {max(r['total_steps'] for r in group)} | "
                     f"{cell('success')} | {cell('tool_reliability')} | {cell('success', 'train_metrics')} | "
                     f"{cell('tokens_used')} | {cell('cost_reduction')} | "
                     f"{steps} | {np.mean([r['wall_time_s'] for r in group]):.0f} | {np.mean([r['sps'] for r in group]):.0f} | "
                     f"{'yes' if met else 'no'} |")
    lines += ["", "Steps to 95%: the first greedy evaluation (50 test episodes, every 10k steps) at or above 95% "
              "success; None: never within the budget."]
    (RESULTS / "learning_targets.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
