"""Load on a served env: ``--sessions`` concurrent sessions each play ``--episodes`` Math-v0
episodes of the scripted expert over OpenEnv's WebSocket path (``/ws``), against a server in
its own process (``python -m agentgym_envs.external_trainers.openenv``).

The expert's replies are computed in process first (session k plays train seeds
k * episodes .. k * episodes + episodes - 1); the same replies are then sent over the wire,
and every episode's return must equal its in-process return. Reported: steps/s over the wire
(all sessions together, wall clock from the first reset to the last step), steps/s in process
(the same resets and steps in one process, no server), the median and p99 round trip of
one step as a client sees it, and the server's memory per open session. Goal: >= 2,000 steps/s
over 8 sessions on 2 cores, p99 <= 5 ms, in the server's default mode.

Four servers are measured in turn: the default (Math's steps run on the event loop) and
``--worker`` (a worker thread per session, with the step timeout) with ``--sessions`` sessions,
and the default with ``--many`` sessions, and asyncio's own event loop in place of uvloop. Each
column is measured ``--repeats`` times, each time against a fresh server: the table gives each
figure's median over the repeats, and the spread of steps/s and of the p99.

Usage: python benchmarks/serve_load.py [--sessions 8] [--many 64] [--episodes 200] [--clients 1]
       [--repeats 3] [--out benchmarks/results/serve.md]
``--clients``: client processes the sessions are spread over; each plays its sessions on one
asyncio event loop (websockets' asyncio client, OpenEnv's messages as ``RemoteEnv`` sends them).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentgym_envs  # noqa: E402,F401
from agentgym_envs.evaluation.agents import expert_action
from agentgym_envs.external_trainers.openenv.client import action_payload, ws_url

ENV_ID = "AgentGym/Math-v0"


def expert_episodes(seeds: range) -> list[dict[str, Any]]:
    """The expert's replies and return for each seed, in process."""
    env = gym.make(ENV_ID, action_mode="text")
    episodes = []
    for seed in seeds:
        env.reset(seed=seed)
        actions, total = [], 0.0
        while True:
            action = expert_action(env.unwrapped.episode, "text")
            _, reward, terminated, truncated, _ = env.step(action)
            actions.append(action)
            total += reward
            if terminated or truncated:
                break
        episodes.append({"seed": seed, "actions": actions, "return": total})
    env.close()
    return episodes


def in_process_rate(episodes: list[dict[str, Any]]) -> float:
    """Steps/s of the same resets and steps in one process (the server's work, without the wire)."""
    env = gym.make(ENV_ID, action_mode="text")
    steps = 0
    start = time.perf_counter()
    for episode in episodes:
        env.reset(seed=episode["seed"])
        for action in episode["actions"]:
            env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


async def play_session(ws: Any, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """One session's episodes over its WebSocket (OpenEnv's messages, as RemoteEnv sends them)."""
    times, mismatches, steps = [], 0, 0
    for episode in episodes:
        await ws.send(json.dumps({"type": "reset", "data": {"seed": episode["seed"]}}))
        answer = json.loads(await ws.recv())
        assert answer["type"] == "observation", answer
        total, done = 0.0, False
        for action in episode["actions"]:
            began = time.perf_counter()
            await ws.send(json.dumps({"type": "step", "data": action_payload(action)}))
            answer = json.loads(await ws.recv())
            times.append(time.perf_counter() - began)
            assert answer["type"] == "observation", answer
            total += answer["data"]["reward"]
            done = answer["data"]["done"]
            steps += 1
        mismatches += total != episode["return"] or not done
    return {"times": times, "mismatches": mismatches, "steps": steps, "end": time.perf_counter()}


def client_process(base: str, sessions: list[list[dict[str, Any]]], barrier: Any, queue: Any) -> None:
    """Play ``sessions`` concurrently on one event loop; put their timings on ``queue``."""
    from websockets.asyncio.client import connect

    # what this forked process inherited (every column's plans: 12,800 episodes) lives as long as it does: out of
    # the collector's walks, whose pauses would otherwise land in the round trips measured
    gc.freeze()

    async def run() -> list[dict[str, Any]]:
        sockets = [await connect(ws_url(base), max_size=None, compression=None) for _ in sessions]
        barrier.wait()  # every client's sessions are open: start together
        results = await asyncio.gather(*(play_session(ws, episodes) for ws, episodes in zip(sockets, sessions,
                                                                                              strict=True)))
        for ws in sockets:
            await ws.close()
        return list(results)

    queue.put(asyncio.run(run()))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def memory_per_session(base: str, pid: int, sessions: int) -> float:
    """Bytes of server memory per open session: RSS with ``sessions`` sessions open and reset,
    less RSS with none (after one session opened, reset and closed, so that start-up costs are
    paid), over ``sessions``."""
    from websockets.sync.client import connect

    def opened(count: int) -> list[Any]:
        sockets = [connect(ws_url(base), max_size=None, compression=None) for _ in range(count)]
        for seed, ws in enumerate(sockets):
            ws.send(json.dumps({"type": "reset", "data": {"seed": seed}}))
            assert json.loads(ws.recv(60))["type"] == "observation"
        return sockets

    def closed(sockets: list[Any]) -> None:
        for ws in sockets:
            ws.close()
        deadline = time.monotonic() + 30
        while json.loads(urllib.request.urlopen(base + "/sessions").read())["active_sessions"] and \
                time.monotonic() < deadline:
            time.sleep(0.05)

    closed(opened(1))
    before = rss_bytes(pid)
    sockets = opened(sessions)
    during = rss_bytes(pid)
    closed(sockets)
    return (during - before) / sessions


def measure(plans: list[list[dict[str, Any]]], clients: int, mode: list[str]) -> dict[str, Any]:
    """One load run against a fresh server (``mode``: its extra options): steps/s, round trips,
    mismatched returns and memory per session."""
    from agentgym_envs.external_trainers.openenv.local import ServerProcess, free_port

    options = ["--max-sessions", str(len(plans)), "--idle-timeout", "60", *mode]
    server = ServerProcess(ENV_ID, free_port(), *options).start()
    assert server.process is not None
    try:
        memory = memory_per_session(server.base, server.process.pid, len(plans))  # first: no freed memory to reuse
        context = multiprocessing.get_context("fork")
        groups = [group for group in (plans[i::clients] for i in range(clients)) if group]
        barrier = context.Barrier(len(groups) + 1)
        queue = context.Queue()
        processes = [context.Process(target=client_process, args=(server.base, group, barrier, queue))
                     for group in groups]
        for process in processes:
            process.start()
        load = os.getloadavg()[0]
        barrier.wait()
        start, cpu = time.perf_counter(), cpu_seconds(server.process.pid)
        results = [result for _ in processes for result in queue.get()]
        cpu = cpu_seconds(server.process.pid) - cpu
        for process in processes:
            process.join()
        wall = max(result["end"] for result in results) - start
        load = (load, os.getloadavg()[0])
    finally:
        server.kill()
    times = sorted(t for result in results for t in result["times"])
    steps = sum(result["steps"] for result in results)
    return {"options": " ".join(options), "sessions": len(plans), "steps": steps, "rate": steps / wall,
            "clients": len(groups), "mismatches": sum(result["mismatches"] for result in results),
            "episodes": sum(len(plan) for plan in plans), "memory_mib": memory / 2**20, "load": load,
            "cpu_us": 1e6 * cpu / steps,
            "median_ms": 1000 * times[len(times) // 2],
            "p99_ms": 1000 * times[min(len(times) - 1, int(0.99 * len(times)))]}


def measure_repeated(plans: list[list[dict[str, Any]]], clients: int, mode: list[str], repeats: int) -> dict[str, Any]:
    """:func:`measure` ``repeats`` times: each figure's median over the repeats, its mismatches summed, and
    the lowest and highest steps/s and p99 (``rate_range``, ``p99_range``)."""
    runs = [measure(plans, clients, mode) for _ in range(repeats)]
    merged = {key: statistics.median(run[key] for run in runs) for key in
              ("steps", "rate", "memory_mib", "cpu_us", "median_ms", "p99_ms")}
    merged["load"] = tuple(statistics.median(run["load"][i] for run in runs) for i in (0, 1))
    merged["mismatches"] = sum(run["mismatches"] for run in runs)
    merged["episodes"] = sum(run["episodes"] for run in runs)
    merged["options"] = runs[0]["options"]
    merged["rate_range"] = (min(run["rate"] for run in runs), max(run["rate"] for run in runs))
    merged["p99_range"] = (min(run["p99_ms"] for run in runs), max(run["p99_ms"] for run in runs))
    return merged


def verdict(met: bool, goal: bool) -> str:
    return "" if not goal else " (met)" if met else " (NOT met)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--many", type=int, default=64, help="sessions of the third run")
    parser.add_argument("--episodes", type=int, default=200, help="episodes per session")
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    parser.add_argument("--repeats", type=int, default=3, help="measurements of each column, each on a fresh server")
    parser.add_argument("--out", default="benchmarks/results/serve.md")
    args = parser.parse_args()

    plans = [expert_episodes(range(k * args.episodes, (k + 1) * args.episodes)) for k in range(args.many)]
    everything = [episode for plan in plans for episode in plan]
    local_rate = statistics.median(in_process_rate(everything) for _ in range(3))
    few = plans[:args.sessions]
    columns = {f"default, {args.sessions} sessions": (few, [], True),
               f"--worker, {args.sessions} sessions": (few, ["--worker"], False),
               f"default, {args.many} sessions": (plans, [], False),
               f"--loop asyncio, {args.sessions} sessions": (few, ["--loop", "asyncio"], False)}
    runs = {name: (measure_repeated(sessions, args.clients, mode, args.repeats), goal)
            for name, (sessions, mode, goal) in columns.items()}

    def row(name: str, cell: Any, goal: str = "") -> str:
        return f"| {name} | " + " | ".join(cell(run, on_goal) for run, on_goal in runs.values()) + f" | {goal} |"

    command = "python benchmarks/serve_load.py " + " ".join(sys.argv[1:])
    lines = [
        f"# Serving load: {ENV_ID.split('/')[-1]} over OpenEnv",
        "",
        f"`{command.strip()}` on {platform.machine()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, shared with other jobs while it ran (figures are noisy; the server, the "
        "clients and those jobs compete for the same cores). Server: `python -m agentgym_envs.external_trainers.openenv "
        f"{ENV_ID}` in its "
        f"own process, once per column; the sessions play over `/ws` from {args.clients} client process(es) "
        f"(asyncio, websockets) on the same machine; each session plays {args.episodes} episodes of the scripted "
        "expert's replies, computed in process beforehand, and every episode's return is checked against its "
        "in-process return. In process: the same resets and steps in one process without a server (median of 3). "
        "By default Math's steps run on the server's event loop (`--inline`); `--worker` runs them on a thread "
        "per session. By default uvicorn runs the server on uvloop (the serve extra installs it); `--loop asyncio` on "
        "asyncio's own loop. Memory per session: on the fresh server, before the load, its resident memory with every "
        "session open and reset, less its memory with none (after one session opened, reset and closed), over "
        "the sessions. Server CPU time: the server process's user and system time "
        f"over the run, per step. Each column: {args.repeats} measurements, each against a fresh server; every "
        "figure is the median over them, and the spread of steps/s and of the p99 is given. The goals hold for the "
        f"default mode with {args.sessions} sessions.",
        "",
        "| measure | " + " | ".join(runs) + " | goal |",
        "| --- | " + " | ".join("---" for _ in runs) + " | --- |",
        row("server options", lambda r, _: f"`{r['options']}`"),
        row("episodes with the in-process return", lambda r, _: f"{r['episodes'] - r['mismatches']} / "
                                                               f"{r['episodes']}", "all"),
        row("steps", lambda r, _: str(r["steps"])),
        row("steps/s over the wire", lambda r, g: f"{r['rate']:.0f}{verdict(r['rate'] >= 2000, g)}", ">= 2000"),
        row("steps/s over the wire, lowest and highest", lambda r, _: f"{r['rate_range'][0]:.0f}, {r['rate_range'][1]:.0f}"),
        row("steps/s in process (1 process, no server)", lambda r, _: f"{local_rate:.0f}"),
        row("wire / in process", lambda r, _: f"{r['rate'] / local_rate:.2f}"),
        row("step round trip, median", lambda r, _: f"{r['median_ms']:.2f} ms"),
        row("step round trip, p99", lambda r, g: f"{r['p99_ms']:.2f} ms{verdict(r['p99_ms'] <= 5, g)}", "<= 5 ms"),
        row("step round trip, p99, lowest and highest", lambda r, _: f"{r['p99_range'][0]:.2f}, {r['p99_range'][1]:.2f} ms"),
        row("server CPU time per step", lambda r, _: f"{r['cpu_us']:.0f} µs"),
        row("server memory per session", lambda r, _: f"{r['memory_mib']:.2f} MiB"),
        row("machine load average (1 min) before, after", lambda r, _: f"{r['load'][0]:.1f}, {r['load'][1]:.1f}"),
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if all(r["mismatches"] == 0 for r, _ in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
