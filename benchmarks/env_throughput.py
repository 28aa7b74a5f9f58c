"""Environment steps per second, as ratios to CartPole-v1's raw rate measured in the same run.

Only ``env.step`` (and ``reset`` at episode ends) is timed; the acting policy is not. A
measurement is ``--rounds`` short rounds that each play the same ``--steps`` steps; within a round
every ``CHUNK`` env steps are followed by a block of CartPole-v1 (random actions from a seeded
action space, ``gym.make``; ``REFERENCE_STEPS_PER_STEP`` CartPole steps per env step), so both
sides see the same moments of the machine, whose CPU rate moves by up to 2x within a run. Steps/s
are medians of the rounds and the ratio is the median per-round ratio. The clock is the measuring
thread's CPU time (``time.thread_time``): time spent waiting for a core while other jobs run does
not count. Envs whose steps wait on other processes (Coding-v0's sandboxed programs) are timed by
the wall clock instead, CartPole with them.

Environments whose tools do real work (Coding-v0 runs programs in a sandbox) also report the
milliseconds per call of each tool, with and without Coding-v0's result cache (cleared before
each row; the "warm cache" row plays its steps once before timing them), in one round.

Usage: python benchmarks/env_throughput.py [--steps 200] [--rounds 30] [--envs ID ...]
       [--name env_throughput] [--out benchmarks/results] [--tau2-data-dir DIR] [--check [JSON]]
The ``features`` rows (the env's features observation) are also given against structured mode
of the same env and policy, its chunks of the same steps interleaved with theirs (goal: features >= 0.8x).
The ``trainers`` rows time the env path the trainers act through (the features observation,
``FlatDiscreteAction``'s admissible layout at the scenario's capacity, repeated calls masked,
``action_masks()`` asked every step) under masked random play, and structured mode interleaved with it
on the same steps (the structured actions the flat ones stood for; goal: >= 0.8x).
``--check``: compare every ratio with the committed figures (``benchmarks/results/<name>.json``
or the file given, measured with the same ``--steps`` and clocks on the same processor) and exit 1
if an env's ratios are more than 10 % below in the median, one of them more than 35 % below, or
one features or trainers / structured quotient more than 10 % below. A ratio to CartPole moves
with the processor, so figures from another processor are refused, not compared: on another
machine, measure the commit before a change first (``--out runs/baseline``) and check against
that file (``--check runs/baseline/env_throughput.json``).
The tau2 environments need their data: ``--tau2-data-dir`` (or ``$TAU2_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_envs
from agentgym_envs.core import tokens
from agentgym_envs.core.features import bag_entries, hashed_words
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy
from agentgym_envs.scenarios.coding import SHARED_CACHE
from agentgym_envs.wrappers import FlatDiscreteAction, TokenIdsObservation

try:
    from benchmarks.processor import cpu_name  # imported from the repository root (tests, ``python -m``)
except ModuleNotFoundError as missing:  # run as ``python benchmarks/env_throughput.py``: this folder leads sys.path
    if missing.name != "benchmarks":
        raise
    from processor import cpu_name

# Minimum ratios to CartPole-v1, judged like for like: uniformly random actions
# (within the action masks) against CartPole's random actions. Expert rows are reported too.
TARGETS = {"structured": 0.2, "tokens": 0.1}
# Math's steps do more (a calculator result per call, an entity row per value): its structured goal is lower
ENV_TARGETS = {"AgentGym/Math-v0": {"structured": 0.12}}
# The features observation (``observation="features"``) against structured mode's text observation, same env, same policy
FEATURES_TARGET = 0.8
# The trainers' env path (features, flat admissible actions, joint mask) against structured mode on the same steps
TRAINERS_TARGET = 0.8
# --check fails when the median of an env's ratios to CartPole (now / committed) is more than CHECK_TOLERANCE below
# 1, when one ratio is more than RATIO_TOLERANCE below its committed value, or when one quotient of two paths of the
# same env (vs_structured, interleaved on the same steps: a few % apart between runs) is more than CHECK_TOLERANCE
# below. One ratio to CartPole moves by up to 25 % between runs on this shared machine (the envs' CPU cost against
# CartPole's changes with the other jobs' load); an env's median of 9 by a few %
CHECK_TOLERANCE = 0.10
RATIO_TOLERANCE = 0.35
REFERENCE_STEPS_PER_STEP = 10  # CartPole steps per timed env step in a round (a CartPole step takes microseconds)
CHUNK = 10  # env steps between CartPole's blocks (a block of 100 CartPole steps: a millisecond or two)
CODING = "AgentGym/Coding-v0"
RESULTS = Path(__file__).resolve().parent / "results"
TOOL_LATENCY_ENVS = (CODING,)
WALL_CLOCK_ENVS = (CODING,)  # steps that wait on programs in other processes: this thread's CPU time would miss them
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}
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


def clock_of(env_id: str) -> str:
    """The clock ``env_id``'s rows are timed by (a key of :data:`CLOCKS`)."""
    return "wall" if env_id in WALL_CLOCK_ENVS else "cpu"


def step_times(
    env: gym.Env, act: Callable[[Any, dict], Any], steps: int, seed: int = 0,
    clock: Callable[[], float] = time.perf_counter, by_tool: dict[str, list[float]] | None = None,
) -> Iterator[float]:
    """The ``clock`` seconds of each of ``steps`` calls of ``env.step`` (plus the reset at an
    episode's end) under policy ``act``, one at a time as they are played. The env is seeded
    once, as in training; later resets draw the next tasks. ``by_tool`` collects the seconds of
    each step by the tool it called (``invalid`` for no valid call)."""
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        action = act(obs, info)
        start = clock()
        obs, _, terminated, truncated, info = env.step(action)
        end = clock()  # two clock reads a step (the CPU clock is a system call, about a microsecond)
        if by_tool is not None:
            call = info.get("tool_call")
            by_tool[call.name if info.get("valid") and call is not None else "invalid"].append(end - start)
        if terminated or truncated:
            obs, info = env.reset()
            end = clock()
        yield end - start


def steps_per_second(
    env: gym.Env, act: Callable[[Any, dict], Any], steps: int, seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, dict[str, list[float]]]:
    """Steps/s of :func:`step_times` (by the wall clock unless ``clock`` is given) and the
    seconds of each step by the tool it called."""
    by_tool: dict[str, list[float]] = defaultdict(list)
    return steps / sum(step_times(env, act, steps, seed, clock, by_tool)), dict(by_tool)


def cartpole_blocks(cartpole: gym.Env, block: int, clock: Callable[[], float]) -> Iterator[float]:
    """The ``clock`` seconds of CartPole-v1's blocks of ``block`` steps, without end: random actions
    drawn beforehand from a seeded action space, each block timed as a whole (a CartPole step takes
    microseconds: clock reads around each would weigh on it)."""
    cartpole.action_space.seed(0)
    actions = [cartpole.action_space.sample() for _ in range(block)]
    cartpole.reset(seed=0)
    while True:
        start = clock()
        for action in actions:
            _, _, terminated, truncated, _ = cartpole.step(action)
            if terminated or truncated:
                cartpole.reset()
        yield clock() - start


def chunk_sums(times: Iterator[float], size: int, before: Callable[[], None] | None = None) -> Iterator[float]:
    """The sums of ``times`` ``size`` at a time (the last sum may hold fewer); ``before`` is
    called before each chunk, untimed."""
    while True:
        if before is not None:
            before()
        chunk = list(itertools.islice(times, size))
        if not chunk:
            return
        yield sum(chunk)


def interleaved(env_times: Iterator[float], cartpole: gym.Env, clock: Callable[[], float], *paired: Iterator[float],
                before: Callable[[], None] | None = None) -> tuple[float, float, list[float]]:
    """Play ``env_times`` (a generator of step times) :data:`CHUNK` steps at a time, then as many
    steps of each ``paired`` env, in turn until the env's steps run out, with a block of CartPole-v1
    (:data:`REFERENCE_STEPS_PER_STEP` steps per env step) after every chunk: every side sees the same
    moments of the machine (its CPU rate moves within a second), and every env chunk follows a
    CartPole block. ``before`` is called before each env chunk, untimed. Returns the env's seconds,
    CartPole's steps/s and each paired env's seconds."""
    block = REFERENCE_STEPS_PER_STEP * CHUNK
    blocks = cartpole_blocks(cartpole, block, clock)
    sides = [chunk_sums(times, CHUNK, before) for times in (env_times, *paired)]
    totals, reference, count = [0.0] * len(sides), next(blocks), 1  # a block before the first chunk too
    while True:
        for side, chunks in enumerate(sides):
            seconds = next(chunks, None)
            if seconds is None:
                return totals[0], count * block / reference, totals[1:]
            totals[side] += seconds
            reference += next(blocks)
            count += 1


def trainers_env(env_id: str) -> FlatDiscreteAction:
    """The env as the trainers act on it (``trainers.torch_policy.network_env`` with the features observation)."""
    return FlatDiscreteAction(gym.make(env_id, observation="features", mask_repeats=True), layout="admissible")


def trainers_step_times(env: FlatDiscreteAction, steps: int, played: list[np.ndarray], seed: int = 0,
                        clock: Callable[[], float] = time.perf_counter) -> Iterator[float]:
    """The ``clock`` seconds of each of ``steps`` of masked random play on the trainers' path:
    ``action_masks()`` then ``env.step`` (plus resets), the choice among the admitted actions
    excluded. ``played`` collects the structured action each flat one stood for, for structured
    mode to replay."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        start = clock()
        mask = env.action_masks()
        took = clock() - start
        action = int(rng.choice(np.flatnonzero(mask)))
        played.append(env.action(action))
        start = clock()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
        yield took + clock() - start


def measure_trainers(env_id: str, steps: int, rounds: int, cartpole: gym.Env) -> dict[str, Any]:
    """The trainers' path against CartPole-v1 and against structured mode replaying the same steps,
    interleaved, per round; the caches of texts emptied before each chunk of either side."""
    flat, structured = trainers_env(env_id), gym.make(env_id)
    clock = CLOCKS[clock_of(env_id)]
    played: list[np.ndarray] = []
    sum(trainers_step_times(flat, min(steps, 500), played))  # warm imports and caches
    steps_per_second(structured, replay(played), len(played))
    references, rates, quotients = [], [], []
    for _ in range(rounds):
        played = []  # the structured side replays the flat side's steps a chunk behind it
        seconds, reference, (replayed,) = interleaved(
            trainers_step_times(flat, steps, played, clock=clock), cartpole, clock,
            step_times(structured, replay(played), steps, clock=clock), before=forget_texts)
        rates.append(steps / seconds)
        references.append(reference)
        quotients.append(replayed / seconds)
    return {"env": env_id, "variant": "trainers", "policy": "random", "clock": clock_of(env_id),
            "steps_per_s": statistics.median(rates),
            "cartpole_steps_per_s": statistics.median(references), "ratio": _median([r / c for r, c in zip(rates, references)]),
            "vs_structured": _median(quotients)}


def forget_texts() -> None:
    """Empty the caches of tokenized and hashed texts, so that each side of a comparison on the same
    steps pays for its own texts (the second would otherwise find the first's)."""
    tokens.clear_caches()
    for cached in (hashed_words, bag_entries):
        cached.cache_clear()


def replay(actions: list[np.ndarray]) -> Callable[[Any, dict], Any]:
    """A policy that plays ``actions`` in order, whatever it observes."""
    steps = iter(actions)
    return lambda observation, info: next(steps)


def _median(values: list[float]) -> float:
    """The middle value (the upper one of an even count): a figure that was measured."""
    return sorted(values)[len(values) // 2]


def measure(env_id: str, steps: int, rounds: int) -> list[dict[str, Any]]:
    """Every variant x policy of ``env_id`` against CartPole-v1 interleaved with it."""
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
    clock = CLOCKS[clock_of(env_id)]
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
            # the features rows also time structured mode on the same steps, interleaved (their quotient, load and all)
            paired = variants["structured"]() if variant == "features" else None
            references, rates, quotients = [], [], []
            for _ in range(rounds):
                by_tool: dict[str, list[float]] = defaultdict(list)
                timed = step_times(env, _agent(env, policy), steps, clock=clock, by_tool=by_tool)
                others = [] if paired is None else [step_times(paired, _agent(paired, policy), steps, clock=clock)]
                seconds, reference, paired_seconds = interleaved(timed, cartpole, clock, *others)
                rates.append(steps / seconds)
                references.append(reference)
                quotients += [other / seconds for other in paired_seconds]  # features / structured steps/s
            row = {
                "env": env_id, "variant": variant, "policy": policy, "clock": clock_of(env_id),
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
    on the same steps interleaved with it in every round (the median of the per-round quotients of steps/s)."""
    lines = [
        "\n## Features against structured\n",
        "`features`: the env made with `observation=\"features\"` (a float vector kept up to date step by step) in "
        "place of structured mode's text observation, same structured actions and policy. In every round structured "
        f"mode is timed on the same steps, {CHUNK} at a time after the features row's; features / structured: the median of the "
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
        f"observation, per-dimension masks in `info`) is timed on the same steps, {CHUNK} at a time after the trainers' "
        "path's: the structured actions the flat ones stood for, from the same reset seed. Before each chunk of either "
        "side the caches of tokenized and hashed texts are emptied (each pays for its own texts). Trainers / structured: "
        f"the median per-round quotient (goal >= {TRAINERS_TARGET}).\n",
        "| env | trainers steps/s | ratio to CartPole-v1 | trainers / structured | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row["variant"] == "trainers":
            quotient = row["vs_structured"]
            lines.append(f"| {row['env']} | {row['steps_per_s']:.0f} | {row['ratio']:.3g} | {quotient:.2f} | "
                         f">= {TRAINERS_TARGET}: {'met' if quotient >= TRAINERS_TARGET else 'NOT met'} |")
    return lines if len(lines) > 4 else []


class NotComparable(ValueError):
    """The committed figures were measured otherwise (other steps per round, another clock, another processor)."""


def check(rows: list[dict[str, Any]], committed: dict[str, Any], steps: int, source: str,
          processor: str) -> tuple[list[str], bool]:
    """Markdown lines comparing every figure with its value in ``committed`` (a results file's
    contents, named ``source``), and whether the check passes: for every env the median of its
    ratios' quotients (now / committed) at least ``1 - CHECK_TOLERANCE``, no ratio's quotient
    below ``1 - RATIO_TOLERANCE`` and no ``vs_structured`` quotient below ``1 - CHECK_TOLERANCE``
    (rows or figures the committed file lacks are listed, not judged). :class:`NotComparable` if
    the committed figures were measured with other steps per round, by another clock or on another
    processor than ``processor`` (this run's: a ratio to CartPole moves with the processor)."""
    if committed.get("steps") != steps:
        raise NotComparable(f"{source} was measured with {committed.get('steps', 'unrecorded')} steps per round, this "
                            f"run with {steps}: every round plays other steps. Check with the same --steps, or "
                            f"re-measure the committed figures with this command")
    if committed.get("processor") != processor:
        measured_on = committed.get("processor", "an unrecorded processor")
        raise NotComparable(f"{source} was measured on {measured_on}, this run on {processor}: a ratio to CartPole moves "
                            f"with the processor. On this machine, measure the commit before the change first "
                            f"(--out runs/baseline) and check against that file (--check runs/baseline/<name>.json)")
    by_key = {(r["env"], r["variant"], r["policy"]): r for r in committed["rows"]}
    tolerances = {"ratio": RATIO_TOLERANCE, "vs_structured": CHECK_TOLERANCE}
    lines = [f"\n## Check against {source}\n",
             f"Fails when an env's ratios to CartPole are more than {CHECK_TOLERANCE:.0%} below their committed values in "
             f"the median, one of them more than {RATIO_TOLERANCE:.0%} below, or one quotient of two paths "
             f"(vs_structured) more than {CHECK_TOLERANCE:.0%} below.\n",
             "| env | variant | policy | figure | committed | now | now / committed | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    passed, ratios = True, defaultdict(list)
    for row in rows:
        before = by_key.get((row["env"], row["variant"], row["policy"]), {})
        if before and before.get("clock", "wall") != row["clock"]:
            raise NotComparable(f"{source} timed {row['env']} by the {before.get('clock', 'wall')} clock, this run by "
                                f"the {row['clock']} clock: re-measure the committed figures with this script")
        for figure, tolerance in tolerances.items():
            if figure not in row:
                continue
            if figure not in before:
                lines.append(f"| {row['env']} | {row['variant']} | {row['policy']} | {figure} | - | {row[figure]:.3g} | - | not committed |")
                continue
            share = row[figure] / before[figure]
            if figure == "ratio":
                ratios[row["env"]].append(share)
            ok = share >= 1 - tolerance
            passed &= ok
            lines.append(f"| {row['env']} | {row['variant']} | {row['policy']} | {figure} | {before[figure]:.3g} | "
                         f"{row[figure]:.3g} | {share:.2f} | {'ok' if ok else f'SLOWER (more than {tolerance:.0%} below)'} |")
    for env_id, shares in ratios.items():
        median = statistics.median(shares)
        ok = median >= 1 - CHECK_TOLERANCE
        passed &= ok
        lines.append(f"| {env_id} | all | all | median ratio of {len(shares)} | | | {median:.2f} | "
                     f"{'ok' if ok else f'SLOWER (more than {CHECK_TOLERANCE:.0%} below)'} |")
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


def rows_json(command: str, steps: int, processor: str, rows: list[dict]) -> str:
    """``{"command": ..., "steps": ..., "processor": ..., "rows": [...]}`` as JSON, one row a line."""
    body = ",\n".join("  " + json.dumps(row) for row in rows)
    return ("{\"command\": " + json.dumps(command) + ", \"steps\": " + json.dumps(steps) + ", \"processor\": "
            + json.dumps(processor) + ",\n \"rows\": [\n" + body + "\n]}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="timed env steps per round (each round plays the same ones)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--envs", nargs="+", default=[e.env_id for e in agentgym_envs.ENVIRONMENTS])
    parser.add_argument("--name", default="env_throughput", help="base name of the .md and .json results")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--tau2-data-dir", help="the tau2 data folder (sets TAU2_DATA_DIR)")
    parser.add_argument("--check", nargs="?", const="", metavar="JSON",
                        help="fail if an env's ratios are more than 10%% below the committed figures in the median, one "
                             "more than 35%% below, or one vs_structured more than 10%% below (default "
                             "benchmarks/results/<name>.json; refused when measured on another processor)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    if args.tau2_data_dir:
        os.environ["TAU2_DATA_DIR"] = args.tau2_data_dir
    command = "python benchmarks/env_throughput.py " + " ".join(sys.argv[1:] if argv is None else argv)
    load_at_start, processor = os.getloadavg()[0], cpu_name()
    rows = [row for env_id in args.envs for row in measure(env_id, args.steps, args.rounds)]
    caps = ", ".join(f"{cap} steps in 1 round for {env}" for env, cap in STEP_CAPS.items() if env in args.envs)
    walled = ", ".join(env for env in args.envs if clock_of(env) == "wall")
    walled = f", wall-clock seconds for {walled} (its steps wait on programs in other processes)" if walled else ""
    lines = [
        f"# Environment throughput\n\n`{command.strip()}` on {processor} ({platform.machine()}), Python "
        f"{platform.python_version()}: "
        f"{args.steps} timed `env.step` calls (resets included, policy excluded) per round, every round the same "
        f"steps{' (' + caps + ')' if caps else ''}, {args.rounds} rounds; every {CHUNK} env steps are followed by "
        f"{REFERENCE_STEPS_PER_STEP * CHUNK} steps of CartPole-v1 (random actions from a seeded action space, "
        "`gym.make`) in the same process; steps/s are medians, the ratio is the median of the per-round ratios. "
        "Clock: steps/s are per second of the measuring thread's CPU time (`time.thread_time`; time spent waiting for "
        f"a core does not count){walled}. "
        f"Targets apply to the random-action rows. Machine: {os.cpu_count()} CPU cores shared with "
        f"other jobs, load average {load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n",
        *throughput_table(rows),
        *features_table(rows),
        *trainers_table(rows),
        *latency_table(rows),
    ]
    passed = True
    if args.check is not None:
        committed = Path(args.check or RESULTS / f"{args.name}.json")
        try:
            checked, passed = check(rows, json.loads(committed.read_text()), args.steps, str(committed),
                                    processor)
        except NotComparable as exc:
            checked, passed = [f"\n## Check against {committed}\n", f"Not comparable: {exc}."], False
        lines += checked
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    (out / f"{args.name}.json").write_text(rows_json(command.strip(), args.steps, processor, rows))
    print("\n".join(lines))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
