"""Coding-v0's reference policies (scripted expert, random) on both splits and both action
modes, with the tool-usage metrics: how often a program was submitted without testing, after
testing or never, and the verdicts of the example runs.

Usage: python benchmarks/coding_reference.py [--episodes 100] [--out benchmarks/results]
Writes coding_reference.md and coding_reference.csv (episodes seeded 0..episodes-1, as
``agentgym eval``).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from agentgym_envs.evaluation import evaluate

ENV_ID = "AgentGym/Coding-v0"
COLUMNS = (
    "success", "tool_reliability", "turns", "return",
    "submitted_without_testing", "submitted_after_testing", "never_submitted", "run_tests_calls",
    "run_tests_passed", "run_tests_wrong_output", "run_tests_runtime_error", "run_tests_timeout",
    "hidden_pass_fraction",
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    command = "python benchmarks/coding_reference.py " + " ".join(sys.argv[1:])
    rows = []
    for split in ("train", "test"):
        for action_mode in ("structured", "text"):
            for policy in ("expert", "random"):
                started = time.perf_counter()
                metrics = evaluate(ENV_ID, policy, episodes=args.episodes, split=split, action_mode=action_mode)
                seconds = time.perf_counter() - started
                rows.append({"split": split, "mode": action_mode, "policy": policy, **{k: metrics[k] for k in COLUMNS}, "seconds": seconds})
                print(rows[-1], flush=True)
    header = ["split", "mode", "policy", *COLUMNS]
    lines = [
        f"# Coding-v0 reference policies\n\n`{command.strip()}`: means over {args.episodes} episodes "
        "(seeds 0..), default options (candidates offered, result cache on).\n",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(str(row[k]) if k in ("split", "mode", "policy") else f"{row[k]:.3f}" for k in header) + " |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "coding_reference.md").write_text("\n".join(lines) + "\n")
    with open(out / "coding_reference.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=[*header, "seconds"])
        writer.writeheader()
        writer.writerows(rows)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
