"""Load on a served env: ``--sessions`` concurrent sessions each play ``--episodes`` Math-v0
episodes of the scripted expert over OpenEnv's WebSocket path (``/ws``), against a server in
its own process (``python -m agentgym_envs.serve``).

The expert's replies are computed in process first (session k plays train seeds
k * episodes .. k * episodes + episodes - 1); the same replies are then sent over the wire,
and every episode's return must equal its in-process return. Reported: steps/s over the wire
(all sessions together, wall clock from the first reset to the last step), steps/s in process
(the same resets and steps in one process, no server), and the median and p99 round trip of
one step as a client sees it. Goal: >= 2,000 steps/s over 8 sessions on 2 cores, p99 <= 5 ms.

Two servers are measured in turn: the default (a worker thread per session, with the step
timeout) and ``--inline`` (steps on the event loop).

Usage: python benchmarks/serve_load.py [--sessions 8] [--episodes 200] [--clients 1]
       [--out benchmarks/results/serve.md]
``--clients``: client processes the sessions are spread over; each plays its sessions on one
asyncio event loop (websockets' asyncio client, OpenEnv's messages as ``RemoteEnv`` sends them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import agentgym_envs  # noqa: E402,F401
from agentgym_envs.policies.agents import expert_action
from agentgym_envs.serve.client import action_payload, ws_url

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

    async def run() -> list[dict[str, Any]]:
        sockets = [await connect(ws_url(base), max_size=None, compression=None) for _ in sessions]
        barrier.wait()  # every client's sessions are open: start together
        results = await asyncio.gather(*(play_session(ws, episodes) for ws, episodes in zip(sockets, sessions,
                                                                                              strict=True)))
        for ws in sockets:
            await ws.close()
        return list(results)

    queue.put(asyncio.run(run()))


def measure(plans: list[list[dict[str, Any]]], clients: int, inline: bool) -> dict[str, Any]:
    """One load run against a fresh server: steps/s, round trips and mismatched returns."""
    from agentgym_envs.serve.local import ServerProcess, free_port

    options = ["--max-sessions", str(len(plans)), "--idle-timeout", "60"] + (["--inline"] if inline else [])
    server = ServerProcess("math", free_port(), *options).start()
    try:
        context = multiprocessing.get_context("fork")
        groups = [group for group in (plans[i::clients] for i in range(clients)) if group]
        barrier = context.Barrier(len(groups) + 1)
        queue = context.Queue()
        processes = [context.Process(target=client_process, args=(server.base, group, barrier, queue))
                     for group in groups]
        for process in processes:
            process.start()
        barrier.wait()
        start = time.perf_counter()
        results = [result for _ in processes for result in queue.get()]
        for process in processes:
            process.join()
        wall = max(result["end"] for result in results) - start
    finally:
        server.kill()
    times = sorted(t for result in results for t in result["times"])
    steps = sum(result["steps"] for result in results)
    return {"options": " ".join(options), "steps": steps, "rate": steps / wall, "clients": len(groups),
            "mismatches": sum(result["mismatches"] for result in results),
            "median_ms": 1000 * times[len(times) // 2],
            "p99_ms": 1000 * times[min(len(times) - 1, int(0.99 * len(times)))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=200, help="episodes per session")
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    parser.add_argument("--out", default="benchmarks/results/serve.md")
    args = parser.parse_args()

    plans = [expert_episodes(range(k * args.episodes, (k + 1) * args.episodes)) for k in range(args.sessions)]
    everything = [episode for plan in plans for episode in plan]
    local_rate = statistics.median(in_process_rate(everything) for _ in range(3))
    runs = {"worker thread per session (default)": measure(plans, args.clients, inline=False),
            "--inline (steps on the event loop)": measure(plans, args.clients, inline=True)}

    command = "python benchmarks/serve_load.py " + " ".join(sys.argv[1:])
    lines = [
        "# Serving load: Math-v0 over OpenEnv",
        "",
        f"`{command.strip()}` on {platform.machine()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, shared with other jobs while it ran (figures are noisy; the server, the "
        "clients and those jobs compete for the same cores). Server: `python -m agentgym_envs.serve math` in its "
        f"own process, once per column; {args.sessions} sessions over `/ws` from {args.clients} client process(es) "
        f"(asyncio, websockets) on the same machine; each session plays {args.episodes} episodes of the scripted "
        "expert's replies, computed in process beforehand, and every episode's return is checked against its "
        "in-process return. In process: the same resets and steps in one process without a server (median of 3).",
        "",
        "| measure | " + " | ".join(runs) + " | goal |",
        "| --- | " + " | ".join("---" for _ in runs) + " | --- |",
        "| server options | " + " | ".join(f"`{r['options']}`" for r in runs.values()) + " | |",
        "| episodes with the in-process return | " + " | ".join(
            f"{len(everything) - r['mismatches']} / {len(everything)}" for r in runs.values()) + " | all |",
        "| steps | " + " | ".join(str(r["steps"]) for r in runs.values()) + " | |",
        f"| steps/s over the wire ({args.sessions} sessions) | " + " | ".join(
            f"{r['rate']:.0f} ({'met' if r['rate'] >= 2000 else 'NOT met'})" for r in runs.values()) + " | >= 2000 |",
        "| steps/s in process (1 process, no server) | " + " | ".join(f"{local_rate:.0f}" for _ in runs) + " | |",
        "| wire / in process | " + " | ".join(f"{r['rate'] / local_rate:.2f}" for r in runs.values()) + " | |",
        "| step round trip, median | " + " | ".join(f"{r['median_ms']:.2f} ms" for r in runs.values()) + " | |",
        "| step round trip, p99 | " + " | ".join(f"{r['p99_ms']:.2f} ms ({'met' if r['p99_ms'] <= 5 else 'NOT met'})"
                                                 for r in runs.values()) + " | <= 5 ms |",
        "",
    ]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if all(r["mismatches"] == 0 for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
