"""Greedy success of a chat model on the test and train splits of Math-v0 and
CustomerSupport-v0 in text mode (``trainers.llm.rollout.evaluate_model``), one row per env
and split, as a Markdown table (and JSON with ``--json``).

    agentgym llm-build-model --out models/agentgym-tiny --size tiny --device cpu
    python benchmarks/llm_model.py --model models/agentgym-tiny --episodes 100

Episodes are seeded ``--seed, --seed + 1, ...`` (default: the lifecycle's ``EVAL_SEED``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from trainers.llm import runtime
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load
from trainers.llm.rollout import evaluate_model
from trainers.run import EVAL_SEED, canonical_env_id, resolve_device

COLUMNS = ("success", "tool_reliability", "parse_error_rate", "turns", "context_overflow", "generated_tokens_per_s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--envs", nargs="+", default=["math", "customer_support"])
    parser.add_argument("--splits", nargs="+", default=["test", "train"])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=EVAL_SEED)
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(resolve_device(args.device))
    network, tokenizer = load(args.model, device)
    fmt = ChatFormat(tokenizer)
    window = runtime.window(network, tokenizer)
    rows = []
    for env in args.envs:
        for split in args.splits:
            start = time.time()
            summary = evaluate_model(network, fmt, canonical_env_id(env), split, args.episodes, device, window,
                                     seed=args.seed, batch=args.batch)
            rows.append({"env": canonical_env_id(env).split("/")[-1], "split": split, **summary,
                         "seconds": time.time() - start})
            print(f"{rows[-1]['env']} {split}: success {summary['success']:.2f} ({time.time() - start:.0f} s)",
                  file=sys.stderr, flush=True)
    print(f"| env | split | episodes | {' | '.join(COLUMNS)} |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for row in rows:
        print(f"| {row['env']} | {row['split']} | {int(row['episodes'])} | "
              + " | ".join(f"{row.get(c, 0.0):.3f}" if c != "generated_tokens_per_s" else f"{row.get(c, 0.0):.0f}"
                           for c in COLUMNS) + " |")
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
