"""Environment steps per second, as ratios to CartPole-v1's raw rate measured in the same run.

Only ``env.step`` (and ``reset`` at episode ends) is timed; the acting policy is not. Each
measurement is taken right after one of CartPole-v1 (random actions, ``gym.make``), in
``--rounds`` rounds; steps/s are medians and the ratio is the median per-round ratio, so
both sides see the same machine load.

Environments whose tools do real work (Coding-v0 runs programs in a sandbox) also report the
milliseconds per call of each tool, with and without Coding-v0's result cache (cleared before
each row; the "warm cache" row plays its steps once before timing them), in one round.

Usage: python benchmarks/env_throughput.py [--steps 10000] [--rounds 3] [--envs ID ...]
       [--name env_throughput] [--out benchmarks/results] [--tau2-data-dir DIR] [--check [JSON]]
The ``features`` rows (the env's features observation) are also given against structured mode
of the same env and policy, timed right after them in each round (goal: features >= 0.8x).
The ``trainers`` rows time the env path the trainers act through (the features observation,
``FlatDiscreteAction``'s admissible layout at the scenario's capacity, repeated calls masked,
``action_masks()`` asked every step) under masked random play, and structured mode right after
on the same steps (the structured actions the flat ones stood for; goal: >= 0.8x).
``--check``: compare every ratio with the committed figures (``benchmarks/results/<name>.json``
or the file given) and exit 1 if one is more than 10 % below its committed value.
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
from agentgym_envs.core.features import hashed_words, row_line
from agentgym_envs.core.tokens import token_array
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy
from agentgym_envs.scenarios.coding import SHARED_CACHE
from agentgym_envs.wrappers import FlatDiscreteAction, TokenIdsObservation

# Minimum ratios to CartPole-v1, judged like for like: uniformly random actions
# (within the action masks) against CartPole's random actions. Expert rows are reported too.
TARGETS = {"structured": 0.2, "tokens": 0.1}
# Math's steps do more (a calculator result per call, an entity row per value): its structured goal is lower
ENV_TARGETS = {"AgentGym/Math-v0": {"structured": 0.12}}
# The features observation (``observation="features"``) against structured mode's text observation, same env, same policy
FEATURES_TARGET = 0.8
# The trainers' env path (features, flat admissible actions, joint mask) against structured mode on the same steps
TRAINERS_TARGET = 0.8
CHECK_TOLERANCE = 0.10  # --check fails on a ratio more than this far below its committed value
CHECKED = ("ratio", "vs_structured")  # the figures --check compares
CODING = "AgentGym/Coding-v0"
RESULTS = Path(__file__).resolve().parent / "results"
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


def trainers_env(env_id: str) -> FlatDiscreteAction:
    """The env as the trainers act on it (``trainers.torch_policy.network_env`` with the features observation)."""
    return FlatDiscreteAction(gym.make(env_id, observation="features", mask_repeats=True), layout="admissible")


def trainers_steps_per_second(env: FlatDiscreteAction, steps: int, seed: int = 0) -> tuple[float, list[np.ndarray]]:
    """Time ``steps`` of masked random play on the trainers' path: ``action_masks()`` then ``env.step`` (plus
    resets), the choice among the admitted actions excluded. Returns the rate and the structured action each
    flat one stood for, for structured mode to replay."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    elapsed, played = 0.0, []
    for _ in range(steps):
        start = time.perf_counter()
        mask = env.action_masks()
        elapsed += time.perf_counter() - start
        action = int(rng.choice(np.flatnonzero(mask)))
        played.append(env.action(action))
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
        elapsed += time.perf_counter() - start
    return steps / elapsed, played


def measure_trainers(env_id: str, steps: int, rounds: int, cartpole: gym.Env) -> dict[str, Any]:
    """The trainers' path against CartPole-v1 and against structured mode replaying the same steps, per round."""
    flat, structured = trainers_env(env_id), gym.make(env_id)
    _, played = trainers_steps_per_second(flat, min(steps, 500))  # warm imports and caches
    steps_per_second(structured, _replay(played), len(played))
    references, rates, quotients = [], [], []
    for _ in range(rounds):
        references.append(steps_per_second(cartpole, lambda o, i: cartpole.action_space.sample(), max(steps, 10_000))[0])
        forget_texts()
        rate, played = trainers_steps_per_second(flat, steps)
        rates.append(rate)
        forget_texts()
        quotients.append(rate / steps_per_second(structured, _replay(played), steps)[0])
    return {"env": env_id, "variant": "trainers", "policy": "random", "steps_per_s": statistics.median(rates),
            "cartpole_steps_per_s": statistics.median(references), "ratio": _median([r / c for r, c in zip(rates, references)]),
            "vs_structured": _median(quotients)}


def forget_texts() -> None:
    """Empty the caches of tokenized and hashed texts, so that each side of a comparison on the same
    steps pays for its own texts (the second would otherwise find the first's)."""
    for cached in (token_array, hashed_words, row_line):
        cached.cache_clear()


def _replay(actions: list[np.ndarray]) -> Callable[[Any, dict], Any]:
    steps = iter(actions)
    return lambda observation, info: next(steps)


def _median(values: list[float]) -> float:
    """The middle value (the upper one of an even count): a figure that was measured."""
    return sorted(values)[len(values) // 2]


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
            row = {
                "env": env_id, "variant": variant, "policy": policy,
                "steps_per_s": statistics.median(rates), "cartpole_steps_per_s": statistics.median(references),
                "ratio": _median([r / c for r, c in zip(rates, references)]),
            }
            if quotients:
                row["vs_structured"] = _median(quotients)
            if env_id in TOOL_LATENCY_ENVS:
                row["tool_ms"] = {tool: _summary(times) for tool, times in sorted(by_tool.items())}
                lookups = SHARED_CACHE.hits + SHARED_CACHE.misses
                row["cache_hit_rate"] = SHARED_CACHE.hits / lookups if lookups else None
            rows.append(row)
    if env_id not in STEP_CAPS:
        rows.append(measure_trainers(env_id, steps, rounds, cartpole))
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
        target = target_of(row)
        verdict = "" if target is None else f">= {target}: {'met' if row['ratio'] >= target else 'NOT met'}"
        lines.append(
            f"| {row['env']} | {row['variant']} | {row['policy']} | {row['steps_per_s']:.0f} | "
            f"{row['cartpole_steps_per_s']:.0f} | {row['ratio']:.3g} | {verdict} |"
        )
    return lines


def target_of(row: dict[str, Any]) -> float | None:
    """The CartPole ratio a row must reach (random-action rows only), or None."""
    if row["policy"] != "random":
        return None
    return ENV_TARGETS.get(row["env"], {}).get(row["variant"], TARGETS.get(row["variant"]))


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
        if row["variant"] == "features":
            quotient = row["vs_structured"]
            lines.append(f"| {row['env']} | {row['policy']} | {row['steps_per_s']:.0f} | {quotient:.2f} | "
                         f">= {FEATURES_TARGET}: {'met' if quotient >= FEATURES_TARGET else 'NOT met'} |")
    return lines if len(lines) > 4 else []


def trainers_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: the trainers' env path against structured mode on the same steps."""
    lines = [
        "\n## The trainers' path against structured\n",
        "`trainers`: the env as our PPO and the SB3 baselines act on it (`observation=\"features\"`, `mask_repeats=True`, "
        "`FlatDiscreteAction(layout=\"admissible\")` at the scenario's capacity), `action_masks()` asked before every step "
        "(timed with it), a uniformly random admitted action. In every round structured mode (`gym.make(env_id)`, text "
        "observation, per-dimension masks in `info`) is timed right after on the same steps: the structured actions the "
        "flat ones stood for, from the same reset seed. Before each side the caches of tokenized and hashed texts are "
        f"emptied (each pays for its own texts). Trainers / structured: the median per-round quotient (goal >= {TRAINERS_TARGET}).\n",
        "| env | trainers steps/s | ratio to CartPole-v1 | trainers / structured | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row["variant"] == "trainers":
            quotient = row["vs_structured"]
            lines.append(f"| {row['env']} | {row['steps_per_s']:.0f} | {row['ratio']:.3g} | {quotient:.2f} | "
                         f">= {TRAINERS_TARGET}: {'met' if quotient >= TRAINERS_TARGET else 'NOT met'} |")
    return lines if len(lines) > 4 else []


def check(rows: list[dict[str, Any]], committed_path: Path) -> tuple[list[str], bool]:
    """Markdown lines comparing every ratio with its committed value, and whether none is more than
    ``CHECK_TOLERANCE`` below it (rows or figures the committed file lacks are listed, not judged)."""
    committed = {(r["env"], r["variant"], r["policy"]): r for r in json.loads(committed_path.read_text())["rows"]}
    lines = [f"\n## Check against {committed_path}\n", "| env | variant | policy | figure | committed | now | now / committed | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    passed = True
    for row in rows:
        before = committed.get((row["env"], row["variant"], row["policy"]), {})
        for figure in CHECKED:
            if figure not in row:
                continue
            if figure not in before:
                lines.append(f"| {row['env']} | {row['variant']} | {row['policy']} | {figure} | - | {row[figure]:.3g} | - | not committed |")
                continue
            share = row[figure] / before[figure]
            ok = share >= 1 - CHECK_TOLERANCE
            passed &= ok
            lines.append(f"| {row['env']} | {row['variant']} | {row['policy']} | {figure} | {before[figure]:.3g} | "
                         f"{row[figure]:.3g} | {share:.2f} | {'ok' if ok else f'SLOWER (more than {CHECK_TOLERANCE:.0%} below)'} |")
    return lines, passed


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
    parser.add_argument("--check", nargs="?", const="", metavar="JSON",
                        help="fail if a ratio is more than 10%% below the committed figures (default benchmarks/results/<name>.json)")
    args = parser.parse_args(argv)
    if args.tau2_data_dir:
        os.environ["TAU2_DATA_DIR"] = args.tau2_data_dir
    command = "python benchmarks/env_throughput.py " + " ".join(sys.argv[1:] if argv is None else argv)
    load_at_start = os.getloadavg()[0]
    rows = [row for env_id in args.envs for row in measure(env_id, args.steps, args.rounds)]
    caps = ", ".join(f"{cap} steps in 1 round for {env}" for env, cap in STEP_CAPS.items() if env in args.envs)
    lines = [
        f"# Environment throughput\n\n`{command.strip()}` on {platform.machine()}, Python {platform.python_version()}: "
        f"{args.steps} timed `env.step` calls (resets included, policy excluded) per measurement"
        f"{' (' + caps + ')' if caps else ''}, {args.rounds} rounds, each right after CartPole-v1 "
        "(random actions, `gym.make`) in the same process; steps/s are medians, the ratio is the median of "
        f"the per-round ratios. Targets apply to the random-action rows. Machine: {os.cpu_count()} CPU cores shared with "
        f"other jobs, load average {load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n",
        *throughput_table(rows),
        *features_table(rows),
        *trainers_table(rows),
        *latency_table(rows),
    ]
    passed = True
    if args.check is not None:
        checked, passed = check(rows, Path(args.check or RESULTS / f"{args.name}.json"))
        lines += checked
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    (out / f"{args.name}.json").write_text(rows_json(command.strip(), rows))
    print("\n".join(lines))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
