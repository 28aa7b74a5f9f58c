"""How much of a split a local chat model can solve when it samples, per task family: greedy
success, the mean success of its sampled episodes (pass@1) and pass@k, the share of tasks that
at least one of k sampled episodes solves.

GRPO raises the likelihood of the model's own successful samples, so pass@k of the start is
the reach of that mechanism on the tasks played: a task no sampled episode solves gives its
group no advantage, and what GRPO on the train split adds to the test split has to come
from transfer alone. LLMs trained with RL on verifiable rewards beat their base models at
pass@1 but not at large k, where the base model's pass@k is as high or higher (Yue et al.,
2025, "Does Reinforcement Learning Really Incentivize Reasoning Capacity in LLMs Beyond the
Base Model?", arXiv:2504.13837). Tasks are those of ``agentgym eval`` and
``llm_failures.py``: seeded 0.. (``agentgym eval ENV --trials K --temperature T`` gives pass@K
over all tasks for any policy; this script splits it by task family for a local model).
Writes ``benchmarks/results/llm_coverage.md``.

    python benchmarks/llm_coverage.py --model models/agentgym-tiny --envs math customer_support --splits test train
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark scripts

from llm_failures import RESULTS, task_families  # noqa: E402
from llm_task_difficulty import sampled_success  # noqa: E402

from agentgym_envs import resolve_env_id  # noqa: E402
from trainers.checkpoints import seed_everything  # noqa: E402
from trainers.lifecycle import resolve_device  # noqa: E402


def coverage(model: str, env_id: str, split: str, tasks: int, samples: int, temperature: float,
             device: torch.device) -> tuple[np.ndarray, np.ndarray]:
    """Greedy success of each task seeded ``0 .. tasks - 1`` of ``split``, and the success of
    its ``samples`` episodes sampled at ``temperature`` (tasks x samples)."""
    greedy = sampled_success(model, env_id, [{"seed": seed} for seed in range(tasks)], 0.0, device, split=split)
    resets = [{"seed": seed} for seed in range(tasks) for _ in range(samples)]
    sampled = sampled_success(model, env_id, resets, temperature, device, split=split)
    return greedy, sampled.reshape(tasks, samples)


def family_rows(families: list[str], greedy: np.ndarray, sampled: np.ndarray) -> list[str]:
    """One Markdown row per task family, then one for all tasks: tasks, greedy, pass@1, pass@k."""
    members: dict[str, list[int]] = defaultdict(list)
    for index, family in enumerate(families):
        members[family].append(index)
    members["all"] = list(range(len(families)))
    rows = []
    for family in [*sorted(set(families)), "all"]:
        index = members[family]
        solved_once = int((sampled[index].max(1) > 0).sum())
        label = f"**{family}**" if family == "all" else family
        rows.append(f"| {label} | {len(index)} | {greedy[index].mean():.2f} | {sampled[index].mean():.2f} | "
                    f"{solved_once / len(index):.2f} ({solved_once}) |")
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--envs", nargs="+", default=["math", "customer_support"])
    parser.add_argument("--splits", nargs="+", default=["test"])
    parser.add_argument("--tasks", type=int, default=100, help="tasks per split, seeded 0..")
    parser.add_argument("--samples", type=int, default=16, help="k: sampled episodes per task")
    parser.add_argument("--temperature", type=float, default=1.0, help="GRPO's sampling temperature by default")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "llm_coverage.md")
    args = parser.parse_args(argv)
    seed_everything(args.seed, args.threads)
    device = torch.device(resolve_device(args.device))
    command = "python benchmarks/llm_coverage.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    k = args.samples
    lines = [f"# What `{args.model}` solves when it samples", "", f"Command: `{command}`", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, device {args.device}; tasks seeded 0.. "
             f"(those of `agentgym eval`), each played once greedily and {k} times at temperature "
             f"{args.temperature}. Greedy: success of the greedy episodes; pass@1: mean success of the sampled "
             f"ones; pass@{k}: share (count) of tasks that at least one sampled episode solves."]
    results = {}
    for env in args.envs:
        env_id = resolve_env_id(env)
        for split in args.splits:
            started = time.time()
            greedy, sampled = coverage(args.model, env_id, split, args.tasks, k, args.temperature, device)
            results[f"{env_id}, {split}"] = (greedy, sampled)
            section = ["", f"## {env_id}, {split} ({time.time() - started:.0f} s)", "",
                       f"| task family | tasks | greedy | pass@1 | pass@{k} |", "|-|-|-|-|-|",
                       *family_rows(task_families(env_id, split, args.tasks), greedy, sampled)]
            print("\n".join(section), flush=True)
            lines += section
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
