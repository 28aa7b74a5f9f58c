"""Expert and random reward on the tau2 environments: every real task of a split (one
episode per task, by id) and seeded generated tasks, in both action modes.

A structured-mode expert episode whose next call the entity table cannot express (a real
reference trajectory may need free text, e.g. a message stating a total) is counted as a
failure and listed under ``inexpressible``.
Usage: python benchmarks/tau2_reference_policies.py [--tau2-data-dir DIR] [--episodes 200]
       [--real-split train] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy, run_episode

ENVS = ("AgentGym/Tau2Retail-v0", "AgentGym/Tau2Airline-v0")


def play(env: gym.Env, policy: str, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean reward and success over ``episodes`` (reset keyword arguments)."""
    agent = ExpertPolicy(env) if policy == "expert" else RandomPolicy(env, seed=0)
    rewards, successes, inexpressible = [], [], []
    for reset in episodes:
        try:
            _, metrics = run_episode(env, agent, **reset)
        except RuntimeError:  # the expert's call cannot be written as entity slots
            inexpressible.append(env.unwrapped.episode.task.task_id)
            rewards.append(0.0)
            successes.append(0.0)
            continue
        rewards.append(metrics["score"])
        successes.append(metrics["success"])
    return {"reward": float(np.mean(rewards)), "success": float(np.mean(successes)), "episodes": len(episodes),
            "inexpressible": inexpressible}


def rows_json(command: str, rows: list[dict]) -> str:
    """``{"command": ..., "rows": [...]}`` as JSON, one row a line."""
    body = ",\n".join("  " + json.dumps(row) for row in rows)
    return "{\"command\": " + json.dumps(command) + ",\n \"rows\": [\n" + body + "\n]}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2-data-dir", help="the tau2 data folder (default $TAU2_DATA_DIR)")
    parser.add_argument("--episodes", type=int, default=200, help="generated tasks per split")
    parser.add_argument("--real-split", default="train")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    if args.tau2_data_dir:
        os.environ["TAU2_DATA_DIR"] = args.tau2_data_dir
    rows = []
    for env_id in ENVS:
        for mode in ("text", "structured"):
            real = gym.make(env_id, source="real", split=args.real_split, action_mode=mode)
            real_resets = [{"options": {"task_id": t.task_id}} for t in real.unwrapped.tasks.tasks]
            setups = [(f"real {args.real_split}", real, real_resets)]
            for split in ("train", "test"):
                generated = gym.make(env_id, split=split, action_mode=mode)
                setups.append((f"generated {split}", generated, [{"seed": s} for s in range(args.episodes)]))
            for tasks, env, resets in setups:
                for policy in ("expert", "random"):
                    result = play(env, policy, resets)
                    rows.append({"env": env_id, "mode": mode, "tasks": tasks, "policy": policy, **result})
                    print(rows[-1]["env"], mode, tasks, policy, f"{result['reward']:.3f}", flush=True)
    command = "python benchmarks/tau2_reference_policies.py " + " ".join(sys.argv[1:])
    lines = [
        f"# tau2 reference policies\n\n`{command.strip()}`; reward = the tau2 score (DB x COMMUNICATE over the "
        "task's reward basis, NL assertions not evaluated offline); one episode per real task, "
        f"{args.episodes} seeded episodes per generated split.\n",
        "| env | action mode | tasks | policy | episodes | mean reward | inexpressible |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        missing = ", ".join(r["inexpressible"]) if r["inexpressible"] else "-"
        lines.append(f"| {r['env']} | {r['mode']} | {r['tasks']} | {r['policy']} | {r['episodes']} | {r['reward']:.3f} | {missing} |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tau2_reference_policies.md").write_text("\n".join(lines) + "\n")
    (out / "tau2_reference_policies.json").write_text(rows_json(command.strip(), rows))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
