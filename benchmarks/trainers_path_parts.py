"""Where the trainers' env path spends a step, against structured mode on the same steps.

Plays ``--steps`` masked random steps on the trainers' path once (``env_throughput.trainers_env``:
the features observation, flat admissible actions, the joint mask asked every step) and times
three paths on those same steps, in turn, ``--rounds`` times: structured mode (``gym.make``, the
text observation, per-dimension masks in ``info``), the features observation alone (the same
structured actions, repeated calls masked, no masks in ``info``) and the trainers' path. Each path
runs as the envs are (the caches of tokenized and hashed texts emptied every 10 steps, as
``env_throughput.py`` does) and under two ablations, to show what each costs each side: ``no token
count``, every turn's count stubbed to 0 (the envs count every turn's text with tiktoken, for
``tokens_used``, ``cost_reduction`` and CustomerSupport's shaped reward), and ``text bags cached``,
the features' hashed bags of words kept in their cache (every text's bag is there from a warm-up
pass; only the tokenized texts are forgotten). Microseconds per step of the thread's CPU time,
medians of the rounds.

Usage: python benchmarks/trainers_path_parts.py [--envs ID ...] [--steps 3000] [--rounds 9]
       [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np

import agentgym_envs.core.episode as episode_module
from agentgym_envs.core import tokens
from agentgym_envs.wrappers import FlatDiscreteAction

try:  # imported from the repository root (tests, ``python -m``)
    from benchmarks.env_throughput import (
        CHUNK,
        chunk_sums,
        forget_texts,
        replay,
        step_times,
        trainers_env,
        trainers_step_times,
    )
    from benchmarks.processor import cpu_name
except ModuleNotFoundError as missing:  # run as ``python benchmarks/trainers_path_parts.py``: this folder leads sys.path
    if missing.name != "benchmarks":
        raise
    from env_throughput import CHUNK, chunk_sums, forget_texts, replay, step_times, trainers_env, trainers_step_times
    from processor import cpu_name

PATHS = ("structured", "features", "trainers")
ABLATIONS = ("as made", "no token count", "text bags cached")


@contextlib.contextmanager
def tokens_counted(counted: bool) -> Iterator[None]:
    """Episodes count their turns' tokens as they do (``counted``), or count 0 (an ablation)."""
    original = episode_module.count_tokens
    if not counted:
        episode_module.count_tokens = lambda text: 0
    try:
        yield
    finally:
        episode_module.count_tokens = original


@contextlib.contextmanager
def ablated(ablation: str) -> Iterator[Callable[[], None]]:
    """The envs as made, or under ``ablation`` (:data:`ABLATIONS`); yields what empties the text caches
    between chunks: every cache, or with ``text bags cached`` the tokenized texts only."""
    with tokens_counted(ablation != "no token count"):
        yield tokens.clear_caches if ablation == "text bags cached" else forget_texts


def path_env(path: str, env_id: str) -> gym.Env:
    """The env ``path`` steps: structured mode as made, the features observation with repeated calls
    masked and no masks in ``info``, or the trainers' path."""
    if path == "trainers":
        return trainers_env(env_id)
    if path == "structured":
        return gym.make(env_id)
    env = gym.make(env_id, observation="features", mask_repeats=True)
    env.unwrapped.info_masks = False
    return env


def path_times(env: gym.Env, steps: int, played: list[np.ndarray]) -> Iterator[float]:
    """``env`` playing the recorded steps: ``played`` (structured actions) on the structured and features
    paths, the same seeded masked random play on the trainers' path (a :class:`FlatDiscreteAction`)."""
    if isinstance(env, FlatDiscreteAction):
        return trainers_step_times(env, steps, [], clock=time.thread_time)
    return step_times(env, replay(played), steps, clock=time.thread_time)


def measure(env_id: str, steps: int, rounds: int) -> dict[tuple[str, str], float]:
    """Microseconds per step of every path as made and under each ablation: medians of ``rounds``."""
    envs = {path: path_env(path, env_id) for path in PATHS}
    played: list[np.ndarray] = []
    sum(trainers_step_times(envs["trainers"], steps, played))  # the steps every path plays
    for env in envs.values():  # a warm-up: imports, the shared call numberings
        sum(path_times(env, steps, played))
    seconds: dict[tuple[str, str], list[float]] = {(path, ablation): [] for path in PATHS for ablation in ABLATIONS}
    for _ in range(rounds):
        for path, ablation in seconds:
            with ablated(ablation) as forget:
                if ablation == "text bags cached":
                    sum(path_times(envs[path], steps, played))  # every text's bag into the cache
                times = path_times(envs[path], steps, played)
                seconds[path, ablation].append(sum(chunk_sums(times, CHUNK, forget)))
    for env in envs.values():
        env.close()
    return {key: 1e6 * statistics.median(values) / steps for key, values in seconds.items()}


def table(results: dict[str, dict[tuple[str, str], float]]) -> list[str]:
    """Markdown lines: per env and ablation, microseconds per step of each path, and structured mode as
    made against the trainers' path under the ablation."""
    lines = ["| env | ablation | structured | features | trainers' path | structured as made / trainers' path |",
             "| --- | --- | --- | --- | --- | --- |"]
    for env_id, us in results.items():
        for ablation in ABLATIONS:
            cells = " | ".join(f"{us[path, ablation]:.1f}" for path in PATHS)
            lines.append(f"| {env_id} | {ablation} | {cells} | {us['structured', 'as made'] / us['trainers', ablation]:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+",
                        default=["AgentGym/CustomerSupport-v0", "AgentGym/Math-v0", "AgentGym/Tau2Retail-v0"])
    parser.add_argument("--steps", type=int, default=3000, help="steps every path plays per round")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    command = "python benchmarks/trainers_path_parts.py " + " ".join(sys.argv[1:] if argv is None else argv)
    load = os.getloadavg()[0]
    results = {env_id: measure(env_id, args.steps, args.rounds) for env_id in args.envs}
    lines = [
        "# The trainers' env path, part by part\n",
        f"`{command.strip()}` on {cpu_name()} ({platform.machine()}), Python {platform.python_version()}; load average "
        f"{load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Microseconds per step of the thread's CPU time (medians "
        f"of {args.rounds} rounds of the same {args.steps} masked random steps; the text caches emptied every "
        f"{CHUNK} steps). `features`: the features observation with structured actions, no masks in `info`. "
        "Ablations: `no token count`, every turn's token count stubbed to 0 (the envs count them for "
        "`tokens_used`, `cost_reduction` and CustomerSupport's shaped reward); `text bags cached`, the features' "
        "hashed bags of words kept in their cache from a warm-up pass over the same steps (only the tokenized "
        "texts forgotten). The last column is a speed quotient: structured mode's microseconds as made over "
        "the trainers' path's under the ablation. What it means: "
        "[NOTES.md](NOTES.md#environments).\n",
        *table(results),
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "trainers_path_parts.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
