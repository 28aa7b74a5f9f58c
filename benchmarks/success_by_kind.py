"""A trained policy's success by task kind: a CustomerSupport ticket's kind (``password_reset``,
``api_integration (rate_limit)``: an API ticket's kind names the failure its logs show, which
decides its plan, ...), a Math problem's difficulty and template (``medium (test-consecutive)``)
or a tau2 task's reference write or transfer (``cancel_reservation``,
``transfer_to_human_agents``, ...). On a level with several kinds, a policy that solves some
kinds and never others shows it here; the episodes are those of the run's final evaluation
(seeded 0, 1, ...). Notes:
results/tau2_one_write_notes.md, results/tau2_telecom_notes.md,
results/customer_support_l2_notes.md, results/math_notes.md.

    python benchmarks/success_by_kind.py runs/suite/Tau2Airline-L1-v0__ppo__seed0
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from trainers.lifecycle import load_trained_policy
from trainers.run import EVAL_SEED


def task_kind(env) -> str:
    """The current task's kind: its ``kind`` and ``issue``, where it has one (CustomerSupport:
    ``"api_integration (auth)"``), its difficulty and template (Math), else the name of its first
    reference call that is not a read (tau2: a write, or ``transfer_to_human_agents``; ``"no
    write"`` for a task without one, such as a telecom task fixed on the user's device alone)."""
    episode = env.unwrapped.episode
    kind = getattr(episode.task, "kind", None)
    if isinstance(kind, str):
        issue = getattr(episode.task, "issue", None)
        return kind if issue is None else f"{kind} ({issue})"
    template = getattr(episode.task, "template", None)
    if isinstance(template, str):
        return f"{episode.task.difficulty} ({template or 'user task'})"
    actions = getattr(episode.world, "reference_actions", None)
    if actions is None:
        raise ValueError(f"{type(episode.task).__name__} tasks have no kinds (CustomerSupport, Math and tau2 tasks have)")
    tools = env.unwrapped.scenario.domain.all_tools
    calls = [a.name for a in actions if a.name in tools and tools[a.name].kind != "read"]
    return calls[0] if calls else "no write"


def success_by_kind(run: str, split: str, episodes: int) -> dict[str, tuple[int, int]]:
    """``{kind: (successes, episodes)}`` of the run's greedy policy on ``episodes`` tasks of ``split``."""
    policy = load_trained_policy(run, "cpu")
    env = policy.make_env(split)
    agent = policy.agent(env)
    solved, played = Counter(), Counter()
    try:
        for episode in range(episodes):
            obs, info = env.reset(seed=EVAL_SEED + episode)
            kind, done = task_kind(env), False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent(obs, info))
                done = terminated or truncated
            played[kind] += 1
            solved[kind] += bool(info["metrics"]["success"])
    finally:
        env.close()
    return {kind: (solved[kind], played[kind]) for kind in sorted(played)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory (or its checkpoint) of `agentgym train` on a CustomerSupport, Math or tau2 env")
    parser.add_argument("--split", default="test", choices=["train", "test"])
    parser.add_argument("--episodes", type=int, default=100, help="the final evaluation's count")
    args = parser.parse_args(argv)
    try:
        by_kind = success_by_kind(args.run, args.split, args.episodes)
    except ValueError as exc:
        print(f"success_by_kind: {exc}", file=sys.stderr)
        return 2
    print("| kind | solved |\n|---|---|")
    for kind, (solved, played) in by_kind.items():
        print(f"| {kind} | {solved} of {played} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
