"""What a Coding-v0 ``run_tests`` call costs, as a ratio to one bare interpreter start
measured in the same run, and Coding-v0's env steps per second without the result cache.

Each round times, back to back: one bare ``python -I -S -c pass`` (the sandbox's
interpreter, started with ``subprocess.run``), then one ``run_tests`` call (the env's
judge, cache off) of an easy problem's reference solution on its visible examples, cycling
through the easy problems. The ratio is the median over rounds of run_tests / bare start,
so both sides see the same machine load. The first call (which starts the sandbox) is timed
separately. Then the scripted expert plays ``--episodes`` episodes (one run_tests and one
submit each, cache off) and only ``env.step`` is timed.

Usage: python benchmarks/coding_sandbox_speed.py --label after [--rounds 40] [--episodes 40]
       [--out benchmarks/results] [--user UID]
Writes (merging the rows of other labels) coding_sandbox_speed.csv and .md. Run it on an
older checkout with ``PYTHONPATH=<checkout>`` and ``--label before`` to compare: it uses
only what both versions have (``gym.make``, ``scenario.judge``, ``default_python``).
``--user UID`` (as root) measures as that ordinary user: the measuring process drops to it
after importing everything (so the sandbox isolates in a user namespace), and writes the
results back as root. The ``isolation`` column says how programs ran.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym

import agentgym_envs  # noqa: F401  (registers the envs)
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.scenarios.coding.judge import digest_tests
from agentgym_envs.scenarios.coding.problems import builtin_problems
from agentgym_envs.scenarios.coding.sandbox import default_python

ENV_ID = "AgentGym/Coding-v0"
FIELDS = (
    "label", "rounds", "bare_start_ms", "run_tests_ms", "ratio", "first_run_tests_ms",
    "episodes", "steps_per_s", "isolation", "uid", "interpreter",
)  # fmt: skip


def measure_calls(rounds: int) -> dict:
    """Median bare start, median run_tests call and the median of their per-round ratio."""
    env = gym.make(ENV_ID, cache_results=False)
    judge = env.unwrapped.scenario.judge
    python = default_python()
    easy = [p for p in builtin_problems() if p.difficulty == "easy"]
    first = time.perf_counter()
    _judge_examples(judge, easy[0])
    first_ms = (time.perf_counter() - first) * 1000
    bare, calls = [], []
    for round_number in range(rounds):
        started = time.perf_counter()
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        outcomes = _judge_examples(judge, easy[round_number % len(easy)])
        calls.append(time.perf_counter() - started)
        assert all(outcome.passed for outcome in outcomes), "a reference solution failed its examples"
    sandbox = getattr(judge, "sandbox", None)
    env.close()
    return {
        "rounds": rounds,
        "bare_start_ms": statistics.median(bare) * 1000,
        "run_tests_ms": statistics.median(calls) * 1000,
        "ratio": statistics.median(c / b for c, b in zip(calls, bare)),
        "first_run_tests_ms": first_ms,
        "isolation": "n/a" if sandbox is None else str(getattr(sandbox, "isolation", sandbox.isolated)),
        "uid": os.getuid(),
        "interpreter": python,
    }


def _judge_examples(judge, problem):
    return judge.run(problem.solution, problem.examples, digest_tests(problem.examples))


def measure_steps(episodes: int) -> dict:
    """Env steps per second of the scripted expert, result cache off (only ``step`` timed)."""
    env = gym.make(ENV_ID, cache_results=False)
    policy = ExpertPolicy(env)
    steps, seconds = 0, 0.0
    for seed in range(episodes):
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            action = policy(observation, info)
            started = time.perf_counter()
            observation, _, terminated, truncated, info = env.step(action)
            seconds += time.perf_counter() - started
            steps += 1
            done = terminated or truncated
    env.close()
    return {"episodes": episodes, "steps_per_s": steps / seconds}


def measure(label: str, rounds: int, episodes: int) -> dict:
    """One row of results, measured as this process's user."""
    return {"label": label, **measure_calls(rounds), **measure_steps(episodes)}


def _measure_as(uid: int, label: str, rounds: int, episodes: int) -> dict:
    """:func:`measure` in a forked child that becomes ``uid`` (no groups, HOME /)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        os.environ["HOME"] = "/"
        with os.fdopen(write_end, "w") as pipe:
            json.dump(measure(label, rounds, episodes), pipe)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not text:
        raise SystemExit(f"the measurement as uid {uid} failed")
    return json.loads(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="the row's name, e.g. before / after")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--user", type=int, help="measure as this uid (run as root)")
    args = parser.parse_args(argv)
    if args.user is None:
        row = measure(args.label, args.rounds, args.episodes)
    else:
        row = _measure_as(args.user, args.label, args.rounds, args.episodes)
    print(row, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "coding_sandbox_speed.csv"
    rows = []
    if csv_path.exists():
        with open(csv_path, newline="") as file:
            rows = [r for r in csv.DictReader(file) if r["label"] != args.label]
    rows.append(row)
    with open(csv_path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    (out / "coding_sandbox_speed.md").write_text(_markdown(rows))
    return 0


def _markdown(rows: list[dict]) -> str:
    def cell(value: object) -> str:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return str(value)
        return f"{number:.3g}" if not number.is_integer() else str(int(number))

    lines = [
        "# Coding-v0 sandbox speed\n",
        (
            f"`python benchmarks/coding_sandbox_speed.py --label <label> [--user UID]` on {platform.machine()} "
            f"(Python {platform.python_version()}); each row is one run, as user `uid`, with the sandbox's "
            "`isolation` (`root`: namespaces made as root; `user`: in a user namespace). `ratio`: median over rounds of "
            "(one run_tests call on an easy problem's examples) / (one bare `python -I -S -c pass` start) "
            "measured back to back; goal: ratio <= 1. `steps_per_s`: the scripted expert, result cache off.\n"
        ),
        "| " + " | ".join(FIELDS) + " |",
        "| " + " | ".join("---" for _ in FIELDS) + " |",
    ]
    lines += ["| " + " | ".join(cell(row[name]) for name in FIELDS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
