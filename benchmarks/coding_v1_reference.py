"""Coding-v1's floor and the strategy its levels are built for, on the validation split.

Per v1 level: random's success, and the success and mean turns of the "tester", which runs
the programs on the visible examples in row order and submits the first that passes every
example (it reads no code and does not know the solution). Prints Markdown rows.

Usage: python benchmarks/coding_v1_reference.py [--episodes 100]
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family

RUN_TESTS, SUBMIT = 0, 1


def tester(env_id: str, episodes: int, split: str = "validation") -> tuple[float, float]:
    """(success, mean turns) of testing the programs in row order and submitting the first that passes."""
    env = gym.make(env_id, split=split)
    programs = env.unwrapped.scenario.programs
    solved = turns = 0.0
    for seed in range(episodes):
        env.reset(seed=seed)
        for row in range(programs):
            _, _, terminated, truncated, info = env.step([RUN_TESTS, row])
            if env.unwrapped.episode.world.last_test_passed:
                _, _, terminated, truncated, info = env.step([SUBMIT, row])
            if terminated or truncated:
                break
        solved += info["metrics"]["success"]
        turns += info["turn"]
    env.close()
    return solved / episodes, turns / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    print("| level | random | tester | tester's turns |\n|---|---|---|---|")
    for env_id in family("coding", 1).ids():
        random = evaluate(env_id, "random", episodes=args.episodes, split="validation")["success"]
        success, turns = tester(env_id, args.episodes)
        print(f"| {env_id.split('/')[1]} | {random:.3f} | {success:.2f} | {turns:.1f} |", flush=True)


if __name__ == "__main__":
    main()
