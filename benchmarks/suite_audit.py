"""Re-run committed rows of a suite table, each at the commit it records, and compare them.

A reviewer's check that the table reproduces::

    python -m benchmarks.suite_audit --each --max-seconds 300   # the quickest row of every family and algorithm
    python -m benchmarks.suite_audit --sample 10 --max-seconds 120

picks rows (with ``--each`` the quickest trained or reference row of every family and algorithm
among those that took at most ``--max-seconds``, else a seeded sample of them, or the rows
``--rows`` names), checks each row's commit out into a temporary git worktree, runs the row's
recorded ``agentgym train`` command against that tree (the installed dependencies: their versions
are compared with the row's), and compares the re-run with the committed row: its test success and
return, and its test episodes one by one (task, success, return, turns, invalid calls) against
``<table>_episodes/``; it records the re-run's processor, shown beside the row's (float kernels differ
by processor, so a run may part from a row made on another). Writes ``<table>_audit.csv`` and
``<table>_audit.md``; exits 1 when a row differs. The files are written after every row; ``--resume``
keeps the rows they hold (same row, same commit) and re-runs the rest. ``--here`` runs the rows against
the working tree instead. Language-model rows are left out (their weights are not in the repository),
and so are rows made from uncommitted changes (commit ``...-dirty``) unless ``--here``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.suite_lib.runner import VERSIONS, machine, versions
from benchmarks.suite_lib.store import KEY, latest_episodes, read_family_files, read_rows, row_key, write_rows

ROOT = Path(__file__).resolve().parent.parent
AUDIT_FIELDS = (*KEY, "commit", "test_success", "rerun_test_success", "test_return", "rerun_test_return",
                "episodes", "episodes_equal", "equal", "rerun_s", "error", "rerun_cpu")


def auditable(rows: Sequence[dict[str, str]], max_seconds: float, here: bool = False) -> list[dict[str, str]]:
    """The rows an audit can re-run within ``max_seconds`` of recorded time: an ``agentgym train`` command
    and (unless they run against the working tree, ``here``) a commit, not uncommitted changes."""
    return [row for row in rows if row["command"].startswith("agentgym train ")
            and (here or not row["commit"].endswith("-dirty"))
            and recorded_seconds(row) <= max_seconds]


def chosen(rows: Sequence[dict[str, str]], names: Sequence[str], sample: int, seed: int,
           each: bool = False) -> list[dict[str, str]]:
    """The rows ``names`` gives (``env:level:algorithm:seed``); else with ``each`` the quickest row of
    every family and algorithm (the least recorded seconds); else a seeded sample of ``sample``."""
    if names:
        by_name = {":".join(map(str, row_key(row))): row for row in rows}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise SystemExit(f"no auditable row {', '.join(unknown)} (env:level:algorithm:seed)")
        return [by_name[name] for name in names]
    if each:
        quickest: dict[tuple[str, str], dict[str, str]] = {}
        for row in sorted(rows, key=recorded_seconds):
            quickest.setdefault((row["env"], row["algorithm"]), row)
        return list(quickest.values())
    return random.Random(seed).sample(list(rows), min(sample, len(rows)))


def recorded_seconds(row: dict[str, str]) -> float:
    return float(row["wall_train_s"] or 0) + float(row["wall_eval_s"] or 0)


@contextlib.contextmanager
def checkout(commit: str, parent: Path) -> Iterator[Path]:
    """The repository at ``commit`` in a temporary git worktree under ``parent``, removed afterwards."""
    tree = parent / f"tree-{commit}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), commit], check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)


def rerun(row: dict[str, str], tree: Path, cwd: Path) -> tuple[dict, list[dict], float]:
    """Run ``row``'s command with ``tree``'s code from ``cwd``: the result's test metrics, its test
    episodes and the seconds it took."""
    words = shlex.split(row["command"])
    command = [sys.executable, "-m", "agentgym_envs.cli", *words[1:]]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {' '.join(done.stderr.split()[-40:])}")
    result = cwd / run_directory(words) / "result.json"
    metrics = json.loads(result.read_text(encoding="utf-8"))["test_metrics"]
    return metrics, latest_episodes(result.with_name("episodes_test.jsonl")), seconds


def run_directory(words: Sequence[str]) -> Path:
    """The run directory an ``agentgym train`` command (split into words) writes, relative to its working
    directory: ``<--run-dir>/<EnvName>__<algo>__seed<seed>``."""
    option = {word: words[i + 1] for i, word in enumerate(words[:-1]) if word.startswith("--")}
    return Path(option.get("--run-dir", "runs")) / f"{words[2].split('/')[-1]}__{option['--algo']}__seed{option.get('--seed', '0')}"


Outcome = tuple[str, int, float, int, int]  # an episode's task id, success, return, turns and invalid calls


def rerun_outcomes(records: list[dict]) -> list[Outcome]:
    """The outcomes of a results file's episode records, as the suite commits them."""
    return sorted((str(r.get("task_id") or r["task"]), int(bool(r["metrics"].get("success", 0))),
                   round(float(r["return"]), 4), int(r["metrics"].get("turns", 0)),
                   int(r["metrics"].get("invalid_calls", 0))) for r in records)


def committed_outcomes(episodes: list[dict[str, str]], row: dict[str, str]) -> list[Outcome]:
    """The outcomes of ``row``'s committed test episodes."""
    return sorted((e["task_id"], int(e["success"]), float(e["return"]), int(e["turns"]), int(e["invalid_calls"]))
                  for e in episodes if e["split"] == "test" and row_key(e) == row_key(row))


def audit_row(row: dict[str, str], episodes: list[dict[str, str]], tree: Path, scratch: Path) -> dict[str, object]:
    """Re-run one row in ``tree`` and compare it with its committed row and episodes (a command that
    fails is a row that differs, with the error's last words)."""
    theirs = committed_outcomes(episodes, row)
    audit: dict[str, object] = {**{k: row[k] for k in KEY}, "commit": row["commit"], "test_success": row["test_success"],
                                "test_return": row["test_return"], "episodes": len(theirs), "episodes_equal": False,
                                "equal": False, "rerun_cpu": machine()}
    with tempfile.TemporaryDirectory(dir=scratch) as cwd:
        try:
            metrics, records, seconds = rerun(row, tree, Path(cwd))
        except (RuntimeError, OSError, KeyError, ValueError) as error:
            return {**audit, "error": str(error)[:300]}
    success, ret = round(float(metrics["success"]), 4), round(float(metrics["return"]), 4)
    same_episodes = rerun_outcomes(records) == theirs
    equal = success == float(row["test_success"]) and ret == float(row["test_return"]) and same_episodes
    return {**audit, "rerun_test_success": success, "rerun_test_return": ret, "episodes_equal": same_episodes,
            "equal": equal, "rerun_s": round(seconds, 1), "error": ""}


def held(flag: object) -> bool:
    """A yes/no of an audit row, as re-run (a bool) or read back from its CSV (text)."""
    return str(flag) == "True"


def same_cpu(audit: dict[str, object], row_cpu: str) -> str:
    """Whether a row (made on ``row_cpu``) and its re-run ran on the same processor (model and torch's
    kernels): yes, no, or ``-`` where either is not recorded (rows made, or audits run, before it was)."""
    rerun = str(audit.get("rerun_cpu") or "")
    return "-" if not (row_cpu and rerun) else "yes" if row_cpu == rerun else "no"


def cpu_text(audited: list[dict[str, object]], cpus: dict[tuple, str]) -> str:
    """The page's sentence on the processors: the re-runs', and how the rows made on another one fared."""
    reruns = sorted({str(a["rerun_cpu"]) for a in audited if a.get("rerun_cpu")})
    if not reruns:
        return ""
    other = [a for a in audited if same_cpu(a, cpus.get(row_key(a), "")) == "no"]
    return (f" Re-run on {', '.join(reruns)}; of the rows made on another processor (`same CPU`: no; float kernels "
            f"differ by processor, so a run may part from its row there), {sum(held(a['equal']) for a in other)} of "
            f"{len(other)} equal.")


def markdown(audited: list[dict[str, object]], rows: list[dict[str, str]], command: str, table: str,
             here: bool = False) -> str:
    now = versions()
    recorded = {name: sorted({r[name] for r in rows}) for name in VERSIONS}
    cpus = {row_key(r): r.get("cpu", "") for r in rows}
    lines = [f"# Reproducing {table}.csv", "",
             f"Command: `{command}`. Each row's recorded command was run against "
             + ("this working tree" if here else "a git worktree of the commit it records") + ", with this machine's installed dependencies "
             + ", ".join(f"{name} {now[name]} (the rows': {', '.join(recorded[name])})" for name in VERSIONS)
             + f"; its test success, test return and test episodes (task, success, return, turns, invalid calls) "
             f"were compared with the committed row and [{table}_episodes/]({table}_episodes). Equal: "
             f"{sum(held(a['equal']) for a in audited)} of {len(audited)} rows.{cpu_text(audited, cpus)}", "",
             "| env | level | algorithm | seed | commit | test success (row / re-run) | test return (row / re-run) "
             "| test episodes equal | equal | same CPU | re-run s |", "|-|-|-|-|-|-|-|-|-|-|-|"]
    for a in audited:
        lines.append(f"| {a['env']} | {a['level']} | {a['algorithm']} | {a['seed']} | {a['commit']} | "
                     f"{a['test_success']} / {a.get('rerun_test_success', '')} | "
                     f"{a['test_return']} / {a.get('rerun_test_return', '')} | "
                     f"{'yes' if held(a['episodes_equal']) else 'NO'} ({a['episodes']}) | {'yes' if held(a['equal']) else 'NO'}"
                     f"{' (' + str(a['error']) + ')' if a.get('error') else ''} | {same_cpu(a, cpus.get(row_key(a), ''))} | {a.get('rerun_s', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="suite", help="the table's name (suite, suite_retired, suite_smoke, ...)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="the folder of the table")
    parser.add_argument("--rows", nargs="*", default=[], metavar="ENV:LEVEL:ALGORITHM:SEED",
                        help="the rows to re-run (default: a seeded sample)")
    parser.add_argument("--sample", type=int, default=6, help="how many rows to sample")
    parser.add_argument("--each", action="store_true",
                        help="the quickest row of every family and algorithm instead of a sample")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="sample only rows whose recorded training and evaluation took at most this long")
    parser.add_argument("--here", action="store_true",
                        help="run every row against this working tree, not a checkout of the commit it records")
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows the table's audit file already holds (same row, same commit) and re-run the rest")
    args = parser.parse_args(argv)
    rows = read_rows(args.out / f"{args.table}.csv")
    candidates = auditable(rows, math.inf if args.rows else args.max_seconds, args.here)
    picked = chosen(candidates, args.rows, args.sample, args.seed, args.each)
    episodes = read_family_files(args.out / f"{args.table}_episodes", "*.csv.gz")
    audit_file = args.out / f"{args.table}_audit.csv"
    command = "python -m benchmarks.suite_audit " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    current = {(row_key(r), r["commit"]) for r in picked}
    audited = [a for a in read_rows(audit_file) if (row_key(a), a["commit"]) in current] if args.resume else []
    done = {(row_key(a), a["commit"]) for a in audited}

    def write() -> None:  # after every row: a killed audit keeps what it re-ran (--resume)
        write_rows(audit_file, AUDIT_FIELDS, audited)
        (args.out / f"{args.table}_audit.md").write_text(
            markdown(audited, rows, command.strip(), args.table, args.here), encoding="utf-8")

    todo = [r for r in picked if (row_key(r), r["commit"]) not in done]
    with tempfile.TemporaryDirectory(prefix="suite_audit_") as scratch:
        for commit in dict.fromkeys(row["commit"] for row in todo):
            with contextlib.nullcontext(ROOT) if args.here else checkout(commit, Path(scratch)) as tree:
                for row in (r for r in todo if r["commit"] == commit):
                    audited.append(audit_row(row, episodes, tree, Path(scratch)))
                    write()
                    print(f"  [{':'.join(map(str, row_key(row)))}] equal: {audited[-1]['equal']}", flush=True)
    write()
    return 0 if all(held(a["equal"]) for a in audited) else 1

if __name__ == "__main__":
    sys.exit(main())
