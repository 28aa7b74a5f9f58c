"""What a suite run costs: the wall time of a 100k-step run of our PPO and of MaskablePPO on
CustomerSupport-L2-v0, with the untuned presets' settings of the customer-support family
(``benchmarks.suite_lib.plan.settings``: the smoke and quick presets', not the full preset's tuned
ones), for one or more source trees (say the code at an earlier commit, ``git archive <commit> | tar -x -C DIR``, and this one).

The runs of the trees take turns (tree A's PPO, tree B's PPO, A's MaskablePPO, B's MaskablePPO, in
each of ``--rounds`` rounds), so that all see the same machine load. Each run is the ``agentgym
train`` command printed on the page, run with the tree first on ``PYTHONPATH``; its time is the
command's wall time (start-up, training, the final evaluation of 100 episodes per split), beside
the run's own ``wall_time_s`` and its test success and return (the same seed gives the same result
where the trajectory is unchanged). Writes its section of ``benchmarks/results/ppo_speed.md`` (the
part from ``## What a suite run costs`` on; ``ppo_speed.py`` keeps it when it rewrites the page).

    python -m benchmarks.run_cost --tree before=/tmp/agentgym-6b81e5a --tree after=. --rounds 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.suite_lib.plan import settings
from benchmarks.tuning import commit

ENV = "CustomerSupport-L2-v0"
ALGORITHMS = ("ppo", "sb3-maskable-ppo")
RESULTS = Path(__file__).resolve().parent / "results"
PAGE = RESULTS / "ppo_speed.md"
SECTION = "## What a suite run costs"


def command(algo: str, steps: int, seed: int, eval_episodes: int) -> list[str]:
    """The ``agentgym train`` arguments of one run with the untuned presets' customer-support settings."""
    sets = [item for name, value in settings("customer_support", algo).items() for item in ("--set", f"{name}={json.dumps(value)}")]
    return ["train", ENV, "--algo", algo, "--seed", str(seed), "--total-steps", str(steps), "--eval-episodes", str(eval_episodes),
            *sets, "--no-progress", "--no-store"]


def children_cpu_s() -> float:
    """User and system CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(tree: Path, args: list[str]) -> dict[str, float]:
    """Run ``agentgym`` from ``tree`` in a fresh run directory: its wall and CPU time and result."""
    with tempfile.TemporaryDirectory() as root:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        start, cpu = time.perf_counter(), children_cpu_s()
        subprocess.run([sys.executable, "-m", "agentgym_envs.cli", *args, "--run-dir", root], env=env, cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
        wall, cpu = time.perf_counter() - start, children_cpu_s() - cpu
        result = json.loads(next(Path(root).glob("*/result.json")).read_text())
    return {"wall_s": wall, "cpu_s": cpu, "run_wall_time_s": result["wall_time_s"],
            "test_success": result["test_metrics"]["success"], "test_return": result["test_metrics"]["return"]}


def less(rows: list[dict], algo: str, first: str, last: str, field: str) -> tuple[float, float, str]:
    """The summed ``field`` of ``algo``'s runs of the two trees, and how much less the second took (goal 25 %)."""
    before = sum(r[field] for r in rows if r["algo"] == algo and r["tree"] == first)
    after = sum(r[field] for r in rows if r["algo"] == algo and r["tree"] == last)
    return before, after, f"{1 - after / before:.0%} (goal >= 25%: {'met' if after <= 0.75 * before else 'NOT met'})"


def revision(tree: Path) -> str:
    """The commit a tree is checked out at (``-dirty`` with changes), else its folder's name (an exported tree)."""
    at = commit(tree)
    return f"`{tree.name}`" if at == "unknown" else at


def section(rows: list[dict], trees: dict[str, Path], argv: list[str], load: tuple[float, float]) -> str:
    labels = list(trees)
    shown = [f"{a.partition('=')[0]}={a.partition('=')[0].upper()}" if a.partition("=")[0] in trees else a for a in argv]
    lines = [SECTION, "", f"Command: `python -m benchmarks.run_cost {shlex.join(shown)}` (each DIR a checkout, or a `git archive` "
             "export, of its tree's commit)", "",
             f"Load average {load[0]:.1f} at the start and {load[1]:.1f} at the end (2 cores shared with other jobs); measured "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Trees: "
             + ", ".join(f"{label} at {revision(path)}" for label, path in trees.items()) + ". Each run:", ""]
    lines += [f"- `agentgym {shlex.join(command(algo, *rows[0]['shape']))}`" for algo in ALGORITHMS]
    lines += ["", "| round | algorithm | tree | wall s (command) | CPU s (command) | wall s (run) | test success | test return |",
              "|-|-|-|-|-|-|-|-|"]
    for row in rows:
        lines.append(f"| {row['round']} | {row['algo']} | {row['tree']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | "
                     f"{row['run_wall_time_s']:.1f} | {row['test_success']:.2f} | {row['test_return']:.2f} |")
    if len(labels) == 2:
        first, last = labels
        lines += ["", "Wall time follows the other jobs' load on a shared machine; CPU time (user + system of the command's "
                  "processes) follows the code.", "",
                  f"| algorithm | {first} wall s | {last} wall s | less wall time | {first} CPU s | {last} CPU s | less CPU time |",
                  "|-|-|-|-|-|-|-|"]
        for algo in ALGORITHMS:
            wall, cpu = less(rows, algo, first, last, "wall_s"), less(rows, algo, first, last, "cpu_s")
            lines.append(f"| {algo} | {wall[0]:.1f} | {wall[1]:.1f} | {wall[2]} | {cpu[0]:.1f} | {cpu[1]:.1f} | {cpu[2]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=DIR", help="a source tree to run (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=100, help="the suite's full preset evaluates 100 episodes")
    args = parser.parse_args(argv)
    trees = {}
    for item in args.tree:
        label, sep, path = item.partition("=")
        if not sep or not (Path(path) / "agentgym_envs").is_dir():
            parser.error(f"--tree takes LABEL=DIR with the project's source in DIR, got {item!r}")
        trees[label] = Path(path).resolve()
    load = os.getloadavg()[0]
    rows = []
    for round_ in range(args.rounds):
        for algo in ALGORITHMS:
            for label, tree in trees.items():
                figures = timed_run(tree, command(algo, args.steps, args.seed, args.eval_episodes))
                rows.append({"round": round_, "algo": algo, "tree": label, "shape": (args.steps, args.seed, args.eval_episodes),
                             **figures})
                print(f"round {round_} {algo} {label}: {figures}", flush=True)
    text = section(rows, trees, sys.argv[1:] if argv is None else argv, (load, os.getloadavg()[0]))
    page = PAGE.read_text() if PAGE.exists() else ""
    kept = page.split(SECTION)[0].rstrip("\n")
    PAGE.write_text((kept + "\n\n" if kept else "") + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
