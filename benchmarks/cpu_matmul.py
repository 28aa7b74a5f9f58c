"""The rollout engine's matrix products on this CPU: torch's ``linear`` (MKL on x86 builds)
against oneDNN on a matrix packed once (``torch.ops.mkldnn``, what the lean decoder uses on a
CPU: ``agentgym_envs/inference/decoder.py``), at the shapes of the project's ``small`` model (hidden 256,
MLP 1024, vocabulary about 3,000) for the rows a decode step (16, 64) and a prefill pass
(1,024) feed. The gap was measured on an AMD CPU; MKL's speed differs between CPUs, so run it on
yours. Writes ``benchmarks/results/cpu_matmul.md``.

    python benchmarks/cpu_matmul.py --threads 2
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from agentgym_envs.inference.decoder import Projection

SHAPES = {"query, key, value": (768, 256), "gate and up": (2048, 256), "down": (256, 1024), "vocabulary": (3015, 256)}
ROWS = (16, 64, 1024)


def cpu_name() -> str:
    """The CPU's model name where Linux says it, else the machine type."""
    info = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines()
             if line.startswith("model name")] if info.exists() else []
    return names[0] if names else platform.processor() or platform.machine()


def microseconds(call: Callable[[], torch.Tensor], seconds: float = 0.5) -> float:
    """Mean time of ``call`` over about ``seconds`` after a warm-up."""
    for _ in range(20):
        call()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        count += 1
    return (time.perf_counter() - start) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=0.5, help="timed seconds per product and implementation")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    lines = ["# Matrix products of the rollout engine on a CPU", "",
             f"`python benchmarks/cpu_matmul.py --threads {args.threads}` on {cpu_name()} "
             f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}), torch {torch.__version__}, "
             f"oneDNN available: {torch.backends.mkldnn.is_available()}. Microseconds per product, float32.", "",
             "| product | out x in | rows | torch `linear` | oneDNN, packed | speed-up |", "|---|---|---|---|---|---|"]
    for name, (out_features, in_features) in SHAPES.items():
        projection = Projection(torch.randn(out_features, in_features))
        for rows in ROWS:
            x = torch.randn(rows, in_features)
            plain = microseconds(lambda: F.linear(x, projection.weight), args.seconds)  # noqa: B023 (timed here)
            packed = microseconds(lambda: projection(x), args.seconds) if projection.packed is not None else float("nan")  # noqa: B023
            lines.append(f"| {name} | {out_features} x {in_features} | {rows} | {plain:.0f} | {packed:.0f} | "
                         f"x{plain / packed:.1f} |")
            print(lines[-1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu_matmul.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
