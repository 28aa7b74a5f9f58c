"""Environment steps per second, as ratios to CartPole-v1's raw rate measured in the same run.

Only ``env.step`` (and ``reset`` at episode ends) is timed; the acting policy is not. Each
measurement is taken right after one of CartPole-v1 (random actions, ``gym.make``), in
``--rounds`` rounds; steps/s are medians and the ratio is the median per-round ratio, so
both sides see the same machine load.

Environments whose tools do real work (Coding-v0 runs programs in a sandbox) also report the
milliseconds per call of each tool, with and without Coding-v0's result cache (cleared before
each row; the "warm cache" row plays its steps once before timing them), in one round.

Usage: python benchmarks/env_throughput.py [--steps 10000] [--rounds 3] [--envs ID ...]
       [--name env_throughput] [--out benchmarks/results] [--tau2-data-dir DIR]
The ``features`` rows (the env's features observation) are also given against structured mode
of the same env and policy, timed right after them in each round (goal: features >= 0.8x).
The tau2 environments need their data: ``--tau2-data-dir`` (or ``$TAU2_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_envs
from agentgym_envs.policies import ExpertPolicy, RandomPolicy
from agentgym_envs.scenarios.coding import SHARED_CACHE
from agentgym_envs.wrappers import TokenIdsObservation

# Minimum ratios to CartPole-v1, judged like for like: uniformly random actions
# (within the action masks) against CartPole's random actions. Expert rows are reported too.
TARGETS = {"structured": 0.2, "tokens": 0.1}
# The features observation (``observation="features"``) against structured mode's text observation, same env, same policy
FEATURES_TARGET = 0.8
CODING = "AgentGym/Coding-v0"
TOOL_LATENCY_ENVS = (CODING,)
STEP_CAPS = {CODING: 300}  # its steps run programs (0.1-3 s uncached): more would take hours


@dataclass(frozen=True)
class Variant:
    """An extra row: ``gym.make`` keyword arguments; ``warm``: play the same steps once,
    untimed, before timing them (Coding-v0's result cache then answers every run)."""

    make_kwargs: dict[str, Any] = field(default_factory=dict)
    warm: bool = False


EXTRA_VARIANTS: dict[str, dict[str, Variant]] = {
    CODING: {
        "structured, warm cache": Variant(warm=True),
        "structured, no cache": Variant({"cache_results": False}),
        "text, no cache": Variant({"action_mode": "text", "cache_results": False}),
    },
}


def steps_per_second(
    env: gym.Env, act: Callable[[Any, dict], Any], steps: int, seed: int = 0
) -> tuple[float, dict[str, list[float]]]:
    """Time ``steps`` calls of ``env.step`` (plus resets at episode ends) under policy ``act``.

    The env is seeded once, as in training; later resets draw the next tasks. Returns the
    rate and the seconds each step took, by the tool it called (``invalid`` for no valid call).
    """
    obs, info = env.reset(seed=seed)
    elapsed = 0.0
    by_tool: dict[str, list[float]] = defaultdict(list)
    for _ in range(steps):
        action = act(obs, info)
        start = time.perf_counter()
        obs, _, terminated, truncated, info = env.step(action)
        took = time.perf_counter() - start
        call = info.get("tool_call")
        by_tool[call.name if info.get("valid") and call is not None else "invalid"].append(took)
        if terminated or truncated:
            obs, info = env.reset()
        elapsed += time.perf_counter() - start
    return steps / elapsed, dict(by_tool)


def measure(env_id: str, steps: int, rounds: int) -> list[dict[str, Any]]:
    """Every variant x policy of ``env_id`` against CartPole-v1 measured just before."""
    if env_id in STEP_CAPS:  # cached results make repeated rounds of the same steps unequal
        steps, rounds = min(steps, STEP_CAPS[env_id]), 1
    variants: dict[str, Callable[[], gym.Env]] = {
        "structured": lambda: gym.make(env_id),
        "text": lambda: gym.make(env_id, action_mode="text"),
        "tokens": lambda: TokenIdsObservation(gym.make(env_id)),
        "features": lambda: gym.make(env_id, observation="features"),
    }
    extra = EXTRA_VARIANTS.get(env_id, {})
    for name, spec in extra.items():
        variants[name] = lambda spec=spec: gym.make(env_id, **spec.make_kwargs)
    cartpole = gym.make("CartPole-v1")
    reference_steps = max(steps, 10_000)  # CartPole steps take microseconds: time enough of them
    rows = []
    for variant, make in variants.items():
        for policy in ("random", "expert"):
            env = make()
            SHARED_CACHE.clear()
            if variant in extra and extra[variant].warm:
                steps_per_second(env, _agent(env, policy), steps)
                SHARED_CACHE.reset_counters()
            elif env_id not in STEP_CAPS:
                steps_per_second(env, _agent(env, policy), min(steps, 500))  # warm imports and caches
            # the features rows also time structured mode right after, in the same round (their quotient, load and all)
            paired = variants["structured"]() if variant == "features" else None
            references, rates, by_tool, quotients = [], [], {}, []
            for _ in range(rounds):
                references.append(steps_per_second(cartpole, lambda o, i: cartpole.action_space.sample(), reference_steps)[0])
                rate, by_tool = steps_per_second(env, _agent(env, policy), steps)
                rates.append(rate)
                if paired is not None:
                    quotients.append(rate / steps_per_second(paired, _agent(paired, policy), steps)[0])
            ratios = sorted(r / c for r, c in zip(rates, references))
            row = {
                "env": env_id, "variant": variant, "policy": policy,
                "steps_per_s": statistics.median(rates), "cartpole_steps_per_s": statistics.median(references),
                "ratio": ratios[len(ratios) // 2],
            }
            if quotients:
                row["vs_structured"] = sorted(quotients)[len(quotients) // 2]
            if env_id in TOOL_LATENCY_ENVS:
                row["tool_ms"] = {tool: _summary(times) for tool, times in sorted(by_tool.items())}
                lookups = SHARED_CACHE.hits + SHARED_CACHE.misses
                row["cache_hit_rate"] = SHARED_CACHE.hits / lookups if lookups else None
            rows.append(row)
    return rows


def _agent(env: gym.Env, policy: str) -> Callable[[Any, dict], Any]:
    return ExpertPolicy(env) if policy == "expert" else RandomPolicy(env, seed=0)


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {"calls": len(ms), "mean": float(ms.mean()), "p50": float(np.median(ms)), "p95": float(np.percentile(ms, 95)), "max": float(ms.max())}


def throughput_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| env | variant | policy | steps/s | CartPole-v1 steps/s | ratio | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        target = TARGETS.get(row["variant"]) if row["policy"] == "random" else None
        verdict = "" if target is None else f">= {target}: {'met' if row['ratio'] >= target else 'NOT met'}"
        lines.append(
            f"| {row['env']} | {row['variant']} | {row['policy']} | {row['steps_per_s']:.0f} | "
            f"{row['cartpole_steps_per_s']:.0f} | {row['ratio']:.3g} | {verdict} |"
        )
    return lines


def features_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: each features row against structured mode of the same env and policy, timed
    right after it in every round (the median of the per-round quotients of steps/s)."""
    lines = [
        "\n## Features against structured\n",
        "`features`: the env made with `observation=\"features\"` (a float vector kept up to date step by step) in "
        "place of structured mode's text observation, same structured actions and policy. In every round structured "
        "mode is timed again right after the features row (same steps); features / structured: the median of the "
        f"per-round quotients of steps/s (goal >= {FEATURES_TARGET}).\n",
        "| env | policy | features steps/s | features / structured | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if "vs_structured" in row:
            quotient = row["vs_structured"]
            lines.append(f"| {row['env']} | {row['policy']} | {row['steps_per_s']:.0f} | {quotient:.2f} | "
                         f">= {FEATURES_TARGET}: {'met' if quotient >= FEATURES_TARGET else 'NOT met'} |")
    return lines if len(lines) > 4 else []


def latency_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: milliseconds per step by tool, for the rows that measured them."""
    lines = [
        "\n## Tool-call latency\n",
        "Milliseconds per `env.step`, by the tool it called (a step is one call; `invalid`: no valid call). "
        "Cache hit rate: the share of sandbox runs answered by the result cache (none in `no cache` rows).\n",
        "| env | variant | policy | tool | calls | mean ms | p50 ms | p95 ms | max ms | cache hit rate |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        hit_rate = "-" if row.get("cache_hit_rate") is None else f"{row['cache_hit_rate']:.2f}"
        for tool, s in row.get("tool_ms", {}).items():
            lines.append(
                f"| {row['env']} | {row['variant']} | {row['policy']} | {tool} | {s['calls']} | {s['mean']:.1f} | "
                f"{s['p50']:.1f} | {s['p95']:.1f} | {s['max']:.1f} | {hit_rate} |"
            )
    return lines if len(lines) > 4 else []


def rows_json(command: str, rows: list[dict]) -> str:
    """``{"command": ..., "rows": [...]}`` as JSON, one row a line."""
    body = ",\n".join("  " + json.dumps(row) for row in rows)
    return "{\"command\": " + json.dumps(command) + ",\n \"rows\": [\n" + body + "\n]}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--envs", nargs="+", default=[e.env_id for e in agentgym_envs.ENVIRONMENTS])
    parser.add_argument("--name", default="env_throughput", help="base name of the .md and .json results")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--tau2-data-dir", help="the tau2 data folder (sets TAU2_DATA_DIR)")
    args = parser.parse_args(argv)
    if args.tau2_data_dir:
        os.environ["TAU2_DATA_DIR"] = args.tau2_data_dir
    command = "python benchmarks/env_throughput.py " + " ".join(sys.argv[1:] if argv is None else argv)
    rows = [row for env_id in args.envs for row in measure(env_id, args.steps, args.rounds)]
    caps = ", ".join(f"{cap} steps in 1 round for {env}" for env, cap in STEP_CAPS.items() if env in args.envs)
    lines = [
        f"# Environment throughput\n\n`{command.strip()}` on {platform.machine()}, Python {platform.python_version()}: "
        f"{args.steps} timed `env.step` calls (resets included, policy excluded) per measurement"
        f"{' (' + caps + ')' if caps else ''}, {args.rounds} rounds, each right after CartPole-v1 "
        "(random actions, `gym.make`) in the same process; steps/s are medians, the ratio is the median of "
        "the per-round ratios. Targets apply to the random-action rows.\n",
        *throughput_table(rows),
        *features_table(rows),
        *latency_table(rows),
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    (out / f"{args.name}.json").write_text(rows_json(command.strip(), rows))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
