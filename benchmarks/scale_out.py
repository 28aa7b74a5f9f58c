"""Environment steps per second with the sync, async and Ray vectorisers at 1, 2 and 4 workers,
and a projection of the Ray vectoriser to N machines.

Each row steps a vector env for ``--seconds`` of wall time (at least ``--min-steps`` vector
steps) under uniformly random actions drawn within each sub-env's action mask (computed in the
driver, untimed). ``workers`` is the number of processes that step environments: ``sync`` runs
``workers`` sub-envs in the driver itself (the single-process reference), ``async``
(``AsyncVectorEnv``, pipes, no shared memory) one sub-env per process, ``ray`` (``RayVectorEnv``)
``workers`` Ray actors holding ``--envs-per-worker`` sub-envs each (and a ``ray x1`` row with
one, the same sub-env count as sync and async). Coding-v0 runs with its result cache off, so
every step runs a program in the sandbox, as fresh programs do in training.

Driver CPU time per worker call is ``time.process_time`` of the driver (all its threads) over
the timed steps, divided by the worker calls (vector steps x workers; for sync, per vector step);
it bounds how many workers one driver can keep busy. The projection to N
machines of ``--cores`` cores each (one worker per core) is
``min(N * cores * r1, envs_per_worker / driver_cpu_per_call)``, with ``r1`` the measured 1-worker
Ray rate: linear in workers until the one driver is saturated. It is a projection from these
figures, not a measurement on N machines.

    python benchmarks/scale_out.py [--envs AgentGym/Coding-v0 AgentGym/CustomerSupport-v0]
        [--workers 1 2 4] [--envs-per-worker 4] [--seconds 20] [--name scale_out]
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

import agentgym_envs  # noqa: E402,F401  (registers the env ids)
from agentgym_envs.evaluation.vector_random import masked_random_actions
from agentgym_envs.scale import RayVectorEnv, init_ray

RESULTS = Path(__file__).resolve().parent / "results"
CODING, SUPPORT = "AgentGym/Coding-v0", "AgentGym/CustomerSupport-v0"
MAKE_KWARGS = {CODING: {"cache_results": False}, SUPPORT: {}}
PROJECTED_MACHINES = (1, 2, 4, 8, 16, 32, 64)


def vectorisers(env_id: str, envs_per_worker: int) -> dict[str, Callable[[int], tuple[gym.vector.VectorEnv, int]]]:
    """name -> workers -> (vector env, sub-env count)."""
    # picklable, and "module:id" imports agentgym_envs wherever it runs (async processes, Ray actors)
    make = functools.partial(gym.make, f"agentgym_envs:{env_id}", **MAKE_KWARGS[env_id])
    return {
        "sync": lambda w: (gym.vector.SyncVectorEnv([make] * w), w),
        "async": lambda w: (gym.vector.AsyncVectorEnv([make] * w, shared_memory=False), w),
        "ray x1": lambda w: (RayVectorEnv([make] * w, num_workers=w, worker_options={"num_cpus": 0}), w),
        f"ray x{envs_per_worker}": lambda w: (
            RayVectorEnv([make] * (w * envs_per_worker), num_workers=w, worker_options={"num_cpus": 0}),
            w * envs_per_worker),
    }


def measure(envs: gym.vector.VectorEnv, seconds: float, min_steps: int, seed: int = 0) -> tuple[int, float, float]:
    """(vector steps, wall seconds, driver CPU seconds) of stepping ``envs`` for ``seconds``."""
    rng = np.random.default_rng(seed)
    nvec = envs.single_action_space.nvec
    _, info = envs.reset(seed=seed)
    steps, wall, cpu = 0, 0.0, 0.0
    while wall < seconds or steps < min_steps:
        actions = masked_random_actions(info["action_mask"], nvec, rng)
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        _, _, _, _, info = envs.step(actions)
        wall += time.perf_counter() - start_wall
        cpu += time.process_time() - start_cpu
        steps += 1
    return steps, wall, cpu


def run(env_ids: list[str], workers: list[int], envs_per_worker: int, seconds: float, min_steps: int) -> list[dict]:
    rows = []
    for env_id in env_ids:
        for name, build in vectorisers(env_id, envs_per_worker).items():
            for w in workers:
                envs, num_envs = build(w)
                try:
                    envs.reset(seed=0)  # start-up (imports, actor placement) is not timed
                    steps, wall, cpu = measure(envs, seconds, min_steps)
                finally:
                    envs.close()
                calls = steps * (1 if name == "sync" else w)
                row = {"env": env_id, "vectoriser": name, "workers": w, "sub_envs": num_envs, "vector_steps": steps,
                       "seconds": round(wall, 2), "env_steps_per_s": round(steps * num_envs / wall, 1),
                       "driver_cpu_ms_per_call": round(1000 * cpu / calls, 3)}
                rows.append(row)
                print(row, flush=True)
    return rows


def rate(rows: list[dict], env_id: str, vectoriser: str, workers: int) -> float:
    return next(r["env_steps_per_s"] for r in rows if r["env"] == env_id and r["vectoriser"] == vectoriser and r["workers"] == workers)


def report(rows: list[dict], args: argparse.Namespace, command: str, load: str) -> str:
    batched = f"ray x{args.envs_per_worker}"
    lines = [
        "# Scale-out: env steps/s by vectoriser and worker count", "",
        f"`{command}` on {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPU cores; "
        f"load average before the run: {load}. Ray {__import__('ray').__version__}, local Ray with "
        f"{os.cpu_count()} CPUs. Each row: random actions within the action masks for at least {args.seconds} s "
        f"of stepping (policy untimed); Coding-v0 with its result cache off.", "",
        "| env | vectoriser | workers | sub-envs | vector steps | seconds | env steps/s | driver CPU ms per worker call |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {r['env']} | {r['vectoriser']} | {r['workers']} | {r['sub_envs']} | {r['vector_steps']} | {r['seconds']} "
              f"| {r['env_steps_per_s']} | {r['driver_cpu_ms_per_call']} |" for r in rows]
    lines += ["", "## Goals", ""]
    env_ids = {r["env"] for r in rows}
    if CODING in env_ids and {1, 2} <= set(args.workers):
        for name in ("async", "ray x1", batched):
            speedup = rate(rows, CODING, name, 2) / rate(rows, CODING, name, 1)
            lines.append(f"- Coding-v0, {name}: 2 workers / 1 worker = {speedup:.2f} (goal >= 1.7: "
                         f"{'met' if speedup >= 1.7 else 'NOT met'})")
    if SUPPORT in env_ids and 1 in args.workers:
        asynchronous = rate(rows, SUPPORT, "async", 1)
        for name in ("ray x1", batched):
            ratio = asynchronous / rate(rows, SUPPORT, name, 1)
            lines.append(f"- CustomerSupport-v0, 1 worker: async steps/s / {name} steps/s = {ratio:.2f} (goal <= 2: "
                         f"{'met' if ratio <= 2 else 'NOT met'})")
    lines += ["", "## Projection to N machines (a projection, not a measurement)", "",
              f"Per machine {args.cores} cores, one Ray worker per core holding {args.envs_per_worker} sub-envs; "
              "projected env steps/s = min(N x cores x r1, envs_per_worker / driver CPU per call), with r1 the "
              f"measured `{batched}` 1-worker rate and the driver CPU per call measured at the largest worker count "
              "(the driver serialises actions and merges results for every worker, so one driver saturates).", "",
              "| env | r1 (env steps/s per worker) | driver CPU ms per call | driver ceiling (env steps/s) | "
              + " | ".join(f"N={n}" for n in PROJECTED_MACHINES) + " |",
              "| --- | --- | --- | --- | " + " | ".join("---" for _ in PROJECTED_MACHINES) + " |"]
    for env_id in sorted(env_ids):
        r1 = rate(rows, env_id, batched, 1)
        top = max(args.workers)
        per_call_ms = next(r["driver_cpu_ms_per_call"] for r in rows
                           if r["env"] == env_id and r["vectoriser"] == batched and r["workers"] == top)
        ceiling = args.envs_per_worker / (per_call_ms / 1000)
        projected = [min(n * args.cores * r1, ceiling) for n in PROJECTED_MACHINES]
        lines.append(f"| {env_id} | {r1:.0f} | {per_call_ms:.3f} | {ceiling:.0f} | "
                     + " | ".join(f"{p:.0f}" for p in projected) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=[CODING, SUPPORT])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--envs-per-worker", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--min-steps", type=int, default=10)
    parser.add_argument("--cores", type=int, default=2, help="cores per machine in the projection")
    parser.add_argument("--name", default="scale_out")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    command = "python benchmarks/scale_out.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    init_ray(num_cpus=os.cpu_count())
    rows = run(args.envs, args.workers, args.envs_per_worker, args.seconds, args.min_steps)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / f"{args.name}.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    text = report(rows, args, command.strip(), load)
    (args.out / f"{args.name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
