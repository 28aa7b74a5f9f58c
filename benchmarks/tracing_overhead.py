"""What tracing costs per env step: ``env.step`` (and ``reset`` at episode ends) timed four ways,
each right after the others in ``--rounds`` rounds, medians reported:

- ``no hooks``: the env's step without the tracing hook (``ToolUseEnv.step`` replaced by the
  untraced ``_step``), the reference;
- ``off``: as shipped, tracing off (the hook checks one attribute per step);
- ``on, packing only``: tracing on, but the spans are kept in the stepping process instead of
  being sent to the exporter: what the stepping process itself spends on them;
- ``on``: tracing on, an episode span per episode and a tool-call span per step, exported over
  OTLP/HTTP to a local receiver (a process of its own session on 127.0.0.1, as a collector is a
  service of its own, that accepts every export and counts the spans in it), so that recording,
  batching, protobuf encoding and sending all count: the time is taken until the last span has
  reached the receiver (``tracing.flush()``). Every tool-call span must arrive.

The variants take turns (each round starts with the next one). Overhead is the median per-round
ratio of seconds per step to the ``no hooks`` row's, minus 1. CPU: seconds of CPU the stepping
process used per step (the policy's included; for ``on``, its span exporter process's too).

Usage: python benchmarks/tracing_overhead.py [--steps 5000] [--rounds 5] [--envs ID ...] [--out benchmarks/results]
       [--name tracing_overhead]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable

import gymnasium as gym

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.core.env import ToolUseEnv
from agentgym_envs.observe import tracing
from agentgym_envs.policies import ExpertPolicy

sys.path.insert(0, str(Path(__file__).parent))
from env_throughput import steps_per_second  # noqa: E402

RECEIVER = """
import http.server, json, sys
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
bodies = []  # decoded only when asked for the counts, so as to take no CPU while steps are timed
class Receiver(http.server.BaseHTTPRequestHandler):
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


def seconds_per_step(env_id: str, steps: int, then: Callable[[], object] = lambda: None) -> tuple[float, float]:
    """Wall seconds per step (steps and resets, and ``then()`` after the last) and CPU seconds
    of this process per step."""
    env = gym.make(env_id, action_mode="text")
    try:
        cpu = time.process_time()
        wall = steps / steps_per_second(env, ExpertPolicy(env), steps)[0]
        start = time.perf_counter()
        then()
        wall += time.perf_counter() - start
        return wall / steps, (time.process_time() - cpu) / steps
    finally:
        env.close()


def children_cpu() -> float:
    """CPU seconds of this process's ended child processes (the span exporter's, once shut down)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def received(endpoint: str) -> dict[str, int]:
    """The spans the receiver got since the last call, counted by the first word of their names."""
    with urllib.request.urlopen(endpoint, timeout=60) as response:
        return json.load(response)


def measure(env_id: str, steps: int, rounds: int, endpoint: str) -> dict[str, list[tuple[float, float]]]:
    """(wall seconds, CPU seconds) per step of each variant, one per round."""

    def no_hooks() -> tuple[float, float]:
        traced_step = ToolUseEnv.step
        ToolUseEnv.step = ToolUseEnv._step
        try:
            return seconds_per_step(env_id, steps)
        finally:
            ToolUseEnv.step = traced_step

    def on() -> tuple[float, float]:
        received(endpoint)
        exporter_cpu = children_cpu()
        with tracing.session(endpoint):
            wall, cpu = seconds_per_step(env_id, steps, then=tracing.flush)
        cpu += (children_cpu() - exporter_cpu) / steps
        counts = received(endpoint)
        if counts.get("execute_tool") != steps or not counts.get("episode"):
            raise RuntimeError(f"{steps} tool-call spans were sent, the receiver got {counts}")
        return wall, cpu

    def packing_only() -> tuple[float, float]:
        with tracing.session(endpoint):
            tracing._processor.add = [].append  # spans packed in the stepping process, then kept there
            return seconds_per_step(env_id, steps)

    variants = {"no hooks": no_hooks, "off": lambda: seconds_per_step(env_id, steps), "on": on,
                "on, packing only": packing_only}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(rounds):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            times[name].append(variants[name]())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=["AgentGym/CustomerSupport-v0", "AgentGym/Math-v0"])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
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
        rows = []
        for env_id in args.envs:
            times = measure(env_id, args.steps, args.rounds, endpoint)
            base = [wall for wall, _ in times["no hooks"]]
            for variant, values in times.items():
                wall, cpu = (statistics.median(column) * 1e6 for column in zip(*values))
                overhead = statistics.median(v / b - 1 for (v, _), b in zip(values, base))
                rows.append((env_id, variant, wall, overhead, cpu))
                print(f"{env_id} {variant}: {wall:.1f} us/step, overhead {overhead:+.1%}, CPU {cpu:.1f} us/step")
    finally:
        receiver.terminate()
        receiver.wait()
    load = os.getloadavg()
    command = " ".join(["python benchmarks/tracing_overhead.py", *sys.argv[1:]])
    lines = ["# Tracing overhead per env step", "",
             f"`{command}` on {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs shared with "
             f"other work (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end of the run). "
             f"Text mode, scripted expert, {args.steps} timed `env.step` calls (resets included, policy excluded) per "
             f"measurement, {args.rounds} rounds; the variants take turns, each round starting with the next. "
             "Tracing on: spans exported by the OpenTelemetry SDK's OTLP/HTTP exporter in a process of their own to a local "
             "receiver, a process of its own session that accepts every export; timed until the last span has arrived, "
             "and every tool-call span was checked to arrive. Overhead: the median "
             "per-round ratio of wall time per step to the `no hooks` row's, minus 1. CPU: the stepping process's "
             "CPU time per step (the policy's and, for `on`, the span exporter process's included).", "",
             "| env | variant | us/step | overhead | target | CPU us/step |",
             "| --- | --- | --- | --- | --- | --- |"]
    for env_id, variant, micros, overhead, cpu in rows:
        target = "" if variant == "no hooks" else (
            f"<= {TARGET:.0%}: {'met' if overhead <= TARGET else 'NOT met'}" if variant == "on" else
            "none measurable" if variant == "off" else "")
        lines.append(f"| {env_id} | {variant} | {micros:.1f} | {overhead:+.1%} | {target} | {cpu:.1f} |")
    out = Path(args.out) / f"{args.name}.md"
    earlier = out.read_text(encoding="utf-8") if out.exists() else ""
    notes = earlier[earlier.index("\n## ") + 1:] if "\n## " in earlier else ""  # the notes written below the table
    out.write_text("\n".join(lines) + "\n" + ("\n" + notes if notes else ""), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
