"""Test success of one suite cell by test unit, by the unit's stem, or by task kind.

Reads the committed episodes (``results/<suite>_episodes/<family>.csv.gz``); ``--by kind`` also
makes the level's env, to read each task's kind as ``benchmarks/success_by_kind.py`` does for a
run it replays (a ticket's kind, a math template, a tau2 task's reference write):

    python -m benchmarks.suite_breakdown tau2_retail L1 ppo --by kind
    python -m benchmarks.suite_breakdown coding L1 ppo --by stem

One line per group: its test episodes over all seeds, and the share of them that succeeded.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from benchmarks.suite_lib.store import read_rows

RESULTS = Path(__file__).resolve().parent / "results"


def test_episodes(family: str, level: str, algorithm: str, suite: str = "suite") -> list[dict[str, str]]:
    """The cell's final test episodes, over all its seeds."""
    path = RESULTS / f"{suite}_episodes" / f"{family}.csv.gz"
    if not path.is_file():
        raise SystemExit(f"no episodes of {family} in {path.parent}")
    episodes = [row for row in read_rows(path)
                if (row["level"], row["algorithm"], row["split"]) == (level, algorithm, "test")]
    if not episodes:
        raise SystemExit(f"no test episodes of {algorithm} on {family} {level} in {path}")
    return episodes


def env_id_of(family: str, level: str, algorithm: str, suite: str = "suite") -> str:
    """The env id the cell's rows ran on (a retired table's level is its own version's)."""
    ids = {row["env_id"] for row in read_rows(RESULTS / f"{suite}.csv")
           if (row["env"], row["level"], row["algorithm"]) == (family, level, algorithm)}
    if len(ids) != 1:
        raise SystemExit(f"{algorithm} on {family} {level} in {suite}.csv ran on {sorted(ids) or 'no env'}: one env id expected")
    return ids.pop()


def kinds_of(env_id: str) -> Callable[[dict[str, str]], str]:
    """An episode's group under ``--by kind``: its task's kind (:func:`benchmarks.success_by_kind.task_kind`),
    read from the env ``env_id`` reset on the episode's task."""
    import gymnasium as gym

    import agentgym_envs  # noqa: F401  (registers the envs)
    from benchmarks.success_by_kind import task_kind

    env = gym.make(env_id, split="test")
    kinds: dict[str, str] = {}

    def group(episode: dict[str, str]) -> str:
        if episode["task_id"] not in kinds:
            env.reset(options={"task_id": episode["task_id"]})
            kinds[episode["task_id"]] = task_kind(env)
        return kinds[episode["task_id"]]

    return group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family")
    parser.add_argument("level", help="L0, L1, ... or v1 (the top)")
    parser.add_argument("algorithm")
    parser.add_argument("--by", choices=("unit", "stem", "kind"), default="unit",
                        help="the test unit; its stem (before '#': a coding problem's name); the task's kind "
                             "(CustomerSupport, Math, tau2: benchmarks/success_by_kind.py)")
    parser.add_argument("--suite", default="suite", help="the result files' name (suite_smoke, ...)")
    args = parser.parse_args(argv)
    episodes = test_episodes(args.family, args.level, args.algorithm, args.suite)
    groups: dict[str, Callable[[dict[str, str]], str]] = {
        "unit": lambda episode: episode["unit_id"], "stem": lambda episode: episode["unit_id"].split("#", 1)[0]}
    group = kinds_of(env_id_of(args.family, args.level, args.algorithm, args.suite)) if args.by == "kind" else groups[args.by]
    outcomes: dict[str, list[float]] = defaultdict(list)
    for episode in episodes:
        outcomes[group(episode)].append(float(episode["success"]))
    seeds = len({episode["seed"] for episode in episodes})
    print(f"{args.algorithm} on {args.family} {args.level}: {len(episodes)} test episodes over {seeds} seeds, "
          f"success {sum(map(float, (e['success'] for e in episodes))) / len(episodes):.2f}")
    for name, values in sorted(outcomes.items()):
        print(f"  {name}: {len(values)} episodes, success {sum(values) / len(values):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
