"""Parameter-shared PPO on the support team (support_team_v0): one token-policy network with
an agent-id input acts for all four agents; test-split team success next to the scripted
expert team and random agents, measured in the same run on the same tickets.

Training goes through the ordinary entry point (``trainers.lifecycle.train`` on
``support_team``, as ``agentgym train support_team``); every finished seed is stored as JSON
under ``benchmarks/results/support_team_ppo/`` and the CSV and markdown table are rebuilt from
every stored seed, so seeds can be run by separate invocations.

    nice -n 10 python benchmarks/support_team_ppo.py --seeds 0 --total-steps 100000
    python benchmarks/support_team_ppo.py --report-only
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

from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import evaluate_team
from agentgym_envs.tables import format_table
from trainers.lifecycle import train
from trainers.run import TrainRequest

RESULTS = Path(__file__).resolve().parent / "results"
STORE = RESULTS / "support_team_ppo"
METRICS = ("success", "tool_reliability", "handoffs", "turns", "invalid_calls", "tokens_used")


def train_seed(seed: int, args: argparse.Namespace, command: str) -> None:
    """Train one seed and store its train/test metrics and learning curve as JSON."""
    result = train(TrainRequest("support_team", algo="ppo", seed=seed, total_steps=args.total_steps, device="cpu",
                                run_root=args.run_root, eval_episodes=args.eval_episodes, progress=False,
                                overrides={"threads": 1}))
    record = {"command": command, "finished_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **asdict(result)}
    (STORE / f"ppo_seed{seed}.json").write_text(json.dumps(record, indent=1))


def reference_rows(episodes: int) -> list[dict[str, object]]:
    """Expert and random teams on both splits, seeds 0..episodes-1 (the tickets PPO is evaluated on)."""
    rows = []
    for team in ("expert", "random"):
        for split in ("train", "test"):
            metrics = evaluate_team(support_team_v0.parallel_env(split=split), team, episodes=episodes, seed=0)
            rows.append({"team": team, "split": split, **{k: metrics[k] for k in METRICS}})
    return rows


def report() -> None:
    """Rebuild the CSV and markdown from the stored seeds plus the reference teams, measured
    now on the tickets the seeds were evaluated on."""
    records = [json.loads(path.read_text()) for path in sorted(STORE.glob("ppo_seed*.json"))]
    if not records:
        raise SystemExit(f"no stored runs under {STORE}")
    episodes = {int(r["test_metrics"]["episodes"]) for r in records}
    if len(episodes) != 1:
        raise SystemExit(f"stored seeds were evaluated on different numbers of episodes: {sorted(episodes)}")
    episodes = episodes.pop()
    rows = []
    for record in records:
        for split in ("train", "test"):
            metrics = record[f"{split}_metrics"]
            rows.append({"team": f"ppo seed {record['seed']}", "split": split, **{k: metrics[k] for k in METRICS}})
    for split in ("train", "test"):
        ppo_rows = [r for r in rows if r["split"] == split]
        rows.append({"team": f"ppo mean ({len(records)} seeds)", "split": split,
                     **{k: float(np.mean([r[k] for r in ppo_rows])) for k in METRICS}})
    rows += reference_rows(episodes)
    with (RESULTS / "support_team_ppo.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["team", "split", *METRICS])
        writer.writeheader()
        writer.writerows(rows)
    test_rows = [r for r in rows if r["split"] == "test"]
    runs = "\n".join(
        f"- seed {r['seed']}: {r['total_steps']} steps, {r['wall_time_s'] / 60:.1f} min, {r['sps']:.0f} steps/s, "
        f"finished {r['finished_at']}; test-success curve (steps, success over 50 episodes): "
        + ", ".join(f"({s}, {v:.2f})" for s, v in r["curve"])
        + f"\n  `{r['command']}`"
        for r in records
    )
    text = (
        "# support_team_v0: parameter-shared PPO vs the reference teams\n\n"
        f"Commands (one per stored seed; the table is rebuilt by `python benchmarks/support_team_ppo.py --report-only`):\n\n{runs}\n\n"
        "One TokenPolicy (agent-id embedding added to CLS) acts for all four agents; PPO with the "
        "default `trainers/ppo.py` Config (training reward `incorrect_call=-2, failure=-10`; "
        "evaluation with the env's default reward). Greedy policy; "
        f"{episodes} episodes per split, seeds 0..{episodes - 1}, the same tickets for every team. "
        "Machine: 2 shared CPU cores, 1 torch thread.\n\n"
        f"## Test split\n\n{format_table(test_rows, ['team', *METRICS])}\n\n"
        f"## Both splits\n\n{format_table(rows, ['team', 'split', *METRICS])}\n"
    )
    (RESULTS / "support_team_ppo.md").write_text(text)
    print(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--total-steps", type=int, default=100_000)
    parser.add_argument("--eval-episodes", type=int, default=200, help="final evaluation episodes per split")
    parser.add_argument("--run-root", default="runs/benchmarks")
    parser.add_argument("--report-only", action="store_true", help="rebuild the tables from the stored seeds")
    args = parser.parse_args()
    command = "python benchmarks/support_team_ppo.py " + shlex.join(sys.argv[1:])
    STORE.mkdir(parents=True, exist_ok=True)
    for seed in [] if args.report_only else args.seeds:
        train_seed(seed, args, command)
        report()
    if args.report_only:
        report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
