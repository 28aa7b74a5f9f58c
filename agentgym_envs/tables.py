"""Plain-text metric tables for the CLI, trainers and benchmarks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_COLUMNS = ("success", "tool_reliability", "tokens_used", "cost_reduction", "time_savings", "turns", "invalid_calls", "return")


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A markdown table of ``rows`` (dicts) restricted to ``columns``; floats to 3 places."""
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    cells = [[cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    line = lambda values: "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    return "\n".join([line(columns), line(["-" * w for w in widths]), *map(line, cells)])


def criteria_report(metrics: Mapping[str, float], criteria: Mapping[str, float]) -> str:
    """One line per success criterion: the measured value, the threshold, met or not."""
    lines = []
    for name, threshold in criteria.items():
        value = metrics.get(name, float("nan"))
        verdict = "met" if value >= threshold else "NOT met"
        lines.append(f"  {name}: {value:.3f} (target >= {threshold:.2f}) {verdict}")
    return "\n".join(lines)


def mean_std(values: Sequence[float], digits: int = 2) -> str:
    """``"mean ± sample std"`` of the values that are not NaN (the mean alone for one value, ``-`` for none)."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return "-"
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return f"{mean:.{digits}f} ± {std:.{digits}f}"
