"""The verdict of every built-in program (each problem's reference solution and wrong
candidates) on every test of its problem, under Coding-v0's limits: to check that a change
of the sandbox changes no result.

Usage: python benchmarks/coding_verdicts.py --out verdicts.json [--compare other.json]
Writes {problem id: {"solution" | "candidate <i> <kind>": [verdict per test]}}; with
``--compare``, lists every verdict that differs from the other file and exits 1 if any does.
Run it on an older checkout with ``PYTHONPATH=<checkout>`` to get the other file: it uses
only what both versions have (``builtin_problems``, ``run_tests``, ``CODING_LIMITS``).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentgym_envs.scenarios.coding.judge import CODING_LIMITS
from agentgym_envs.scenarios.coding.problems import builtin_problems
from agentgym_envs.scenarios.coding.runner import run_tests


def verdicts() -> dict[str, dict[str, list[str]]]:
    runs = []
    for problem in builtin_problems():
        runs.append((problem, "solution", problem.solution))
        runs += [(problem, f"candidate {i} {c.kind}", c.source) for i, c in enumerate(problem.candidates)]
    with ThreadPoolExecutor(4) as pool:
        outcomes = pool.map(lambda run: run_tests(run[2], run[0].tests, CODING_LIMITS), runs)
        table: dict[str, dict[str, list[str]]] = {}
        for (problem, name, _), results in zip(runs, outcomes):
            table.setdefault(problem.id, {})[name] = [outcome.status.value for outcome in results]
    return table


def render(table: dict[str, dict[str, list[str]]]) -> str:
    """The table as JSON, one problem a line (a diff then names the problem that changed)."""
    lines = [f"{json.dumps(problem)}: {json.dumps(table[problem], sort_keys=True)}" for problem in sorted(table)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def differences(mine: dict, other: dict) -> list[str]:
    found = []
    for problem in sorted(mine.keys() | other.keys()):
        programs = mine.get(problem, {}), other.get(problem, {})
        for name in sorted(programs[0].keys() | programs[1].keys()):
            if programs[0].get(name) != programs[1].get(name):
                found.append(f"{problem} / {name}: {programs[0].get(name)} != {programs[1].get(name)}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--compare")
    args = parser.parse_args(argv)
    table = verdicts()
    Path(args.out).write_text(render(table))
    runs = sum(len(programs) for programs in table.values())
    tests = sum(len(v) for programs in table.values() for v in programs.values())
    print(f"{len(table)} problems, {runs} programs, {tests} verdicts written to {args.out}")
    if args.compare:
        found = differences(table, json.loads(Path(args.compare).read_text()))
        print("\n".join(found) or f"every verdict equals {args.compare}'s")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
