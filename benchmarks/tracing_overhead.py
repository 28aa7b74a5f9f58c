"""What tracing costs per env step: ``env.step`` (and ``reset`` at episode ends) timed three ways,
each right after the others in ``--rounds`` rounds, medians reported:

- ``no hooks``: the env's step without the tracing hook (``ToolUseEnv.step`` replaced by the
  untraced ``_step``), the reference;
- ``off``: as shipped, tracing off (the hook checks one attribute per step);
- ``on``: tracing on, an episode span per episode and a tool-call span per step, exported by the
  SDK's batch processor over OTLP/HTTP to a local receiver (a subprocess on 127.0.0.1 that
  accepts every export), so that span creation, batching and protobuf encoding all count.

Overhead is the median per-round ratio of seconds per step to the ``no hooks`` row's, minus 1.

Usage: python benchmarks/tracing_overhead.py [--steps 5000] [--rounds 5] [--envs ID ...] [--out benchmarks/results]
       [--name tracing_overhead]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import gymnasium as gym

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.core.env import ToolUseEnv
from agentgym_envs.observe import tracing
from agentgym_envs.policies import ExpertPolicy

sys.path.insert(0, str(Path(__file__).parent))
from env_throughput import steps_per_second  # noqa: E402

RECEIVER = """
import http.server, sys
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0"); self.end_headers()
    do_GET = do_POST
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
"""
TARGET = 0.10  # tracing on may cost at most this fraction of the untraced step time


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def seconds_per_step(env_id: str, steps: int) -> float:
    env = gym.make(env_id, action_mode="text")
    try:
        return 1.0 / steps_per_second(env, ExpertPolicy(env), steps)[0]
    finally:
        env.close()


def measure(env_id: str, steps: int, rounds: int, endpoint: str) -> dict[str, list[float]]:
    """Seconds per step of each variant, one value per round."""
    traced_step = ToolUseEnv.step
    times: dict[str, list[float]] = {"no hooks": [], "off": [], "on": []}
    for _ in range(rounds):
        ToolUseEnv.step = ToolUseEnv._step
        try:
            times["no hooks"].append(seconds_per_step(env_id, steps))
        finally:
            ToolUseEnv.step = traced_step
        times["off"].append(seconds_per_step(env_id, steps))
        with tracing.session(endpoint):
            times["on"].append(seconds_per_step(env_id, steps))  # the flush at the end is not timed
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
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)])
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
            base = times["no hooks"]
            for variant, values in times.items():
                overhead = statistics.median(v / b - 1 for v, b in zip(values, base))
                rows.append((env_id, variant, statistics.median(values) * 1e6, overhead))
                print(f"{env_id} {variant}: {statistics.median(values) * 1e6:.1f} us/step, overhead {overhead:+.1%}")
    finally:
        receiver.terminate()
        receiver.wait()
    load = os.getloadavg()
    command = " ".join(["python benchmarks/tracing_overhead.py", *sys.argv[1:]])
    lines = ["# Tracing overhead per env step", "",
             f"`{command}` on {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs shared with "
             f"other work (load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end of the run). "
             f"Text mode, scripted expert, {args.steps} timed `env.step` calls (resets included, policy excluded) per "
             f"measurement, {args.rounds} rounds; the three variants alternate within each round. Tracing on: the "
             "OpenTelemetry SDK's batch processor exporting over OTLP/HTTP to a local receiver that accepts every "
             "export. Overhead: the median per-round ratio of time per step to the `no hooks` row's, minus 1.", "",
             "| env | variant | us/step | overhead | target |", "| --- | --- | --- | --- | --- |"]
    for env_id, variant, micros, overhead in rows:
        target = "" if variant == "no hooks" else (
            f"<= {TARGET:.0%}: {'met' if overhead <= TARGET else 'NOT met'}" if variant == "on" else "none measurable")
        lines.append(f"| {env_id} | {variant} | {micros:.1f} | {overhead:+.1%} | {target} |")
    out = Path(args.out) / f"{args.name}.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
