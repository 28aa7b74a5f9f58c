"""Reference teams on support_team_v0: expert and random team success on both splits and
both action modes, and the team env's speed against the single-agent env in the same run.

    python benchmarks/support_team_reference.py --episodes 200

writes ``benchmarks/results/support_team_reference.{csv,md}``.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import gymnasium as gym

import agentgym_envs  # noqa: F401  (registers the single-agent env for the speed reference)
from agentgym_envs.evaluation import RandomPolicy, run_episode
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import RandomTeam, evaluate_team, run_team_episode
from agentgym_envs.tables import format_table

COLUMNS = ["team", "split", "action_mode", "success", "tool_reliability", "handoffs", "tokens_used", "turns", "invalid_calls", "return"]


def steps_per_second(play, episodes: int) -> float:
    """Environment steps per second of ``play(seed) -> steps`` over ``episodes`` episodes."""
    start, steps = time.perf_counter(), 0
    for seed in range(episodes):
        steps += play(seed)
    return steps / (time.perf_counter() - start)


def speed(episodes: int) -> dict[str, float]:
    single = gym.make("AgentGym/CustomerSupport-v0")
    single_policy = RandomPolicy(single, seed=0)
    team = support_team_v0.parallel_env()
    team_policy = RandomTeam(team, seed=0)
    single_sps = steps_per_second(lambda s: int(run_episode(single, single_policy, seed=s)[1]["turns"]), episodes)
    team_sps = steps_per_second(
        lambda s: int(run_team_episode(team, team_policy, seed=s)[1]["triage"]["team_metrics"]["turns"]), episodes
    )
    return {"single_agent_steps_per_s": single_sps, "team_cycles_per_s": team_sps, "ratio": team_sps / single_sps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/support_team_reference")
    args = parser.parse_args()
    rows = []
    for split in ("train", "test"):
        for action_mode in ("structured", "text"):
            env = support_team_v0.parallel_env(split=split, action_mode=action_mode)
            for team in ("expert", "random"):
                metrics = evaluate_team(env, team, episodes=args.episodes, seed=args.seed)
                rows.append({"team": team, "split": split, "action_mode": action_mode, **metrics})
    timing = speed(args.episodes)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    command = f"python benchmarks/support_team_reference.py --episodes {args.episodes} --seed {args.seed}"
    report = (
        f"# support_team_v0: reference teams\n\n`{command}`\n\n"
        f"{args.episodes} episodes per row, seeds {args.seed}..{args.seed + args.episodes - 1}; team metrics "
        "(`return` is the sum of the four agents' returns).\n\n"
        f"{format_table(rows, COLUMNS)}\n\n"
        "Speed, random policies, same run (absolute numbers depend on the machine's load): "
        f"single-agent CustomerSupport-v0 {timing['single_agent_steps_per_s']:.0f} steps/s, "
        f"support_team_v0 {timing['team_cycles_per_s']:.0f} cycles/s (ratio {timing['ratio']:.2f}).\n"
    )
    out.with_suffix(".md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
