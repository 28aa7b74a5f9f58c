"""What tracing costs per env step: ``env.step`` (and ``reset`` at episode ends) timed in short
blocks, four ways taking turns, each round starting with the next one; medians reported.

- ``no hooks``: the env whose ``reset`` starts no episode trace (``tracing.start_episode``
  answering None), so that each step goes straight to the untraced step after its one check of
  ``episode_trace``: the reference;
- ``off``: as shipped, tracing off (``reset`` asks ``tracing.start_episode``, which answers None;
  a step's check is the reference's);
- ``on``: tracing on, an episode span per episode and a tool-call span per step, exported over
  OTLP/HTTP to a local receiver (a process of its own session on 127.0.0.1, as a collector is a
  service of its own, that accepts every export and counts the spans in it), so that recording,
  batching, protobuf encoding and sending all count;
- ``on, packing only``: tracing on, but each episode's record (its tool calls in it) dropped
  where it would be handed to the exporter process: what the stepping process itself spends on
  them.

Each block ends its last episode with an untimed ``reset``, so that the tool calls a block made
are sent (or dropped) as that block's, not with the next block's records.

One env and one tracing session (one exporter process) per env id, as in a run: the blocks
measure the steady state, in which the exporter keeps pace (when it cannot, the pipe to it
fills and the steps wait, which the ``on`` blocks then count). After the last block, the time
until every span has reached the receiver (``tracing.flush()``, a one-off at a run's end) is
reported apart, and every tool-call span of the ``on`` blocks must have arrived. ``off`` is
measured before tracing is configured, beside ``no hooks`` blocks of its own; the ``on``
variants beside ``no hooks, session open`` blocks (the exporter process started, idle).

Blocks are short (1000 steps, a tenth of a second) and rounds many, so that the blocks a ratio
compares run moments apart and the machine's drift between them stays small. The exporter works
on each frame of 1024 spans as it comes, so the frame an ``on`` block sends last is encoded
while the next block runs, whichever variant that is: a part of the exporter's share is spread
over all variants (longer blocks spread less of it; ``--steps 5000`` checks).

Overhead is the median per-round ratio of seconds per step to the same round's ``no hooks``
block, minus 1. CPU: seconds of CPU the stepping process used per step (the policy's included);
for ``on``, the exporter process's CPU per step of the ``on`` blocks is reported beside it.

Usage: python benchmarks/tracing_overhead.py [--steps 1000] [--rounds 200] [--envs ID ...]
       [--out benchmarks/results] [--name tracing_overhead]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
from env_throughput import steps_per_second  # the script beside this one (its folder leads sys.path)

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.observe import tracing

RECEIVER = """
import http.server, json, sys
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
bodies = []  # decoded only when asked for the counts, so as to take no CPU while steps are timed
class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as collectors serve it: one connection for all exports
    def do_POST(self):
        bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200); self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):  # the names of the spans received since the last GET, counted
        counts = {}
        for body in bodies:
            for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        kind = span.name.split(" ")[0]
                        counts[kind] = counts.get(kind, 0) + 1
        bodies.clear()
        data = json.dumps(counts).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
"""
TARGET = 0.10  # tracing on may cost at most this fraction of the untraced step time


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def timed_block(env: gym.Env, policy: ExpertPolicy, steps: int) -> tuple[float, float]:
    """Wall seconds per step (steps and resets, policy excluded) and CPU seconds of this process
    per step (policy included) of ``steps`` steps."""
    cpu = time.process_time()
    wall = steps / steps_per_second(env, policy, steps)[0]
    return wall / steps, (time.process_time() - cpu) / steps


def process_cpu(pid: int) -> float:
    """CPU seconds process ``pid`` has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def received(endpoint: str) -> dict[str, int]:
    """The spans the receiver got since the last call, counted by the first word of their names."""
    with urllib.request.urlopen(endpoint, timeout=60) as response:
        return json.load(response)


def take_turns(variants: dict[str, Callable[[], tuple[float, float]]], rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Each variant's block once a round, each round starting with the next variant."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(rounds):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            times[name].append(variants[name]())
    return times


def measure(env_id: str, steps: int, rounds: int, endpoint: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Per variant: median wall and CPU seconds per step and overhead; and the ``on`` blocks'
    exporter CPU per step, the final flush's seconds and the spans that arrived."""
    env = gym.make(env_id, action_mode="text")
    policy = ExpertPolicy(env)
    start_episode = tracing.start_episode

    def block(hooks: bool) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            if not hooks:
                tracing.start_episode = lambda *args, **kwargs: None
            try:
                timed = timed_block(env, policy, steps)
                env.reset()  # untimed: the block's last episode ends in it, its calls sent (or dropped) as the block's
                return timed
            finally:
                tracing.start_episode = start_episode
        return run

    timed_block(env, policy, steps)  # warm-up: the tasks' caches filled for every variant alike
    phases = [take_turns({"no hooks": block(False), "off": block(True)}, rounds)]
    received(endpoint)
    exporter_cpu = 0.0
    with tracing.session(endpoint):
        processor = tracing.exporter()
        exporter, send = processor.pid, processor.add

        def on() -> tuple[float, float]:
            nonlocal exporter_cpu
            cpu = process_cpu(exporter)
            result = block(True)()
            exporter_cpu += process_cpu(exporter) - cpu
            return result

        def packing_only() -> tuple[float, float]:
            processor.add = lambda record, spans=1: None  # each record made, then dropped
            try:
                return block(True)()
            finally:
                processor.add = send

        phases.append(take_turns({"no hooks, session open": block(False), "on": on, "on, packing only": packing_only},
                                 rounds))
        start = time.perf_counter()
        tracing.flush()
        flush_s = time.perf_counter() - start
    env.close()
    counts = received(endpoint)
    if counts.get("execute_tool") != rounds * steps or not counts.get("episode"):
        raise RuntimeError(f"{rounds * steps} tool-call spans were sent, the receiver got {counts}")
    rows: dict[str, dict[str, float]] = {}
    for times in phases:
        base = [wall for wall, _ in next(iter(times.values()))]  # the phase's no-hooks blocks
        for variant, values in times.items():
            wall, cpu = (statistics.median(column) for column in zip(*values))
            ratios = [v / b - 1 for (v, _), b in zip(values, base)]
            quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            rows[variant] = {"wall": wall, "cpu": cpu, "overhead": statistics.median(ratios),
                             "spread": (quartiles[0], quartiles[2])}
    return rows, {"exporter_cpu": exporter_cpu / (rounds * steps), "flush_s": flush_s,
                  "tool_spans": counts["execute_tool"], "episode_spans": counts["episode"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=["AgentGym/CustomerSupport-v0", "AgentGym/Math-v0"])
    parser.add_argument("--steps", type=int, default=1000, help="steps per block")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--name", default="tracing_overhead", help="the result file's name, without .md")
    args = parser.parse_args()
    port = free_port()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)], start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}/v1/traces"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        results = {env_id: measure(env_id, args.steps, args.rounds, endpoint) for env_id in args.envs}
    finally:
        receiver.terminate()
        receiver.wait()
    load = os.getloadavg()
    command = " ".join(["python benchmarks/tracing_overhead.py", *sys.argv[1:]])
    lines = ["# Tracing overhead per env step", "",
             f"`{command}` on {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs shared with "
             f"other work (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end of the run). "
             f"Text mode, scripted expert; blocks of {args.steps} timed `env.step` calls (resets included, policy "
             f"excluded), {args.rounds} rounds in which the variants take turns, each round starting with the next; one "
             "env and, for the `on` variants, one tracing session per env id. Tracing on: spans exported by the "
             "OpenTelemetry SDK's OTLP/HTTP exporter in a process of their own to a local receiver, a process of its own "
             "session that accepts every export; every tool-call span of the `on` blocks was checked to arrive. "
             "Overhead: the median per-round ratio of wall time per step to the same round's no-hooks block, minus 1 "
             "(`off` beside `no hooks` before tracing starts, the `on` rows beside `no hooks, session open`); the middle "
             "half of the rounds: their ratios' first to third quartile. "
             "CPU: the stepping process's CPU time per step (the policy's included); exporter CPU: the exporter process's "
             "per step of the `on` blocks. Final flush: the wait, after the last block, until every span had arrived "
             "(once per run).", "",
             "| env | variant | us/step | overhead | middle half of the rounds | target | CPU us/step | exporter CPU us/step |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for env_id, (rows, export) in results.items():
        for variant, row in rows.items():
            target = "" if variant.startswith("no hooks") else (
                f"<= {TARGET:.0%}: {'met' if row['overhead'] <= TARGET else 'NOT met'}" if variant == "on" else
                "none measurable" if variant == "off" else "")
            exporter = f"{export['exporter_cpu'] * 1e6:.1f}" if variant == "on" else ""
            low, high = row["spread"]
            spread = "" if variant.startswith("no hooks") else f"{low:+.1%} to {high:+.1%}"
            lines.append(f"| {env_id} | {variant} | {row['wall'] * 1e6:.1f} | {row['overhead']:+.1%} | {spread} | {target} | "
                         f"{row['cpu'] * 1e6:.1f} | {exporter} |")
            print(lines[-1])
    lines += ["", "| env | final flush (ms) | tool-call spans received | episode spans received |", "| --- | --- | --- | --- |"]
    lines += [f"| {env_id} | {export['flush_s'] * 1e3:.1f} | {export['tool_spans']} | {export['episode_spans']} |"
              for env_id, (_, export) in results.items()]
    out = Path(args.out) / f"{args.name}.md"
    earlier = out.read_text(encoding="utf-8") if out.exists() else ""
    notes = earlier[earlier.index("\n## ") + 1:] if "\n## " in earlier else ""  # the notes written below the table
    out.write_text("\n".join(lines) + "\n" + ("\n" + notes if notes else ""), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
