"""The processor a benchmark ran on, as its pages and rows record it: a figure measured on one
processor (its BLAS kernels, its speed against CartPole's) need not hold on another."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name where Linux says it (``/proc/cpuinfo``), else the machine type."""
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:  # not Linux
        lines = []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor() or platform.machine()
