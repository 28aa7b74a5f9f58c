"""A user's algorithm beside the suite's committed baseline rows: its cells under a preset's protocol,
and the page that compares it with the baselines (rliable statistics over the levels both have
rows on). Imports neither torch nor SB3."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from .llm_rows import is_llm_row
from .plan import REFERENCES, Cell, Preset, cells
from .sitting import TableFiles
from .stats import Comparison


def contender_cells(preset: Preset, families: list[str], algo: str, settings: dict[str, Any],
                    seeds: int | None = None) -> list[Cell]:
    """``algo``'s cells under ``preset``: its levels, seeds (``seeds``: fewer), budgets, evaluation
    episodes, curve grid and early stopping, with the frozen ``settings`` on every level."""
    own = replace(preset, algorithms=(algo,), extra={}, seeds=seeds or preset.seeds)
    return [replace(cell, overrides={**settings, **cell.overrides}) for cell in cells(own, families)]


def budget_notes(baselines: list[dict[str, str]], planned: list[Cell]) -> list[str]:
    """Where a trained baseline row's budget differs from the cell's of the same level (no equal comparison
    there); the references and language models are evaluated only (budget 0)."""
    budget = {(c.env, c.level): c.env_steps for c in planned}
    return sorted({f"{r['env']} {r['level']} {r['algorithm']}: {int(r['budget']):,} env steps, this run "
                   f"{budget[r['env'], r['level']]:,}" for r in baselines
                   if (r["env"], r["level"]) in budget and r["algorithm"] not in REFERENCES and not is_llm_row(r)
                   and int(r["budget"]) != budget[r["env"], r["level"]]})


def tuning_text(record: dict[str, Any], trials: int, levels: tuple[str, ...], steps: int, episodes: int) -> str:
    """The frozen record's search in words, and whether it had the protocol's budget (``trials`` of
    ``steps`` env steps on each of ``levels``, scored on ``episodes`` validation episodes a level)."""
    text = (f"{record['trials']} trials of Optuna TPE (seed {record['search_seed']}) on Ray Tune, each {record['env_steps']:,} "
            f"env steps on {', '.join(record['levels'])}, scored on {record['episodes']} validation episodes a level; "
            f"best validation success {record['validation_success']:.2f}, settings `{json.dumps(record['settings'], sort_keys=True)}`")
    equal = (record["trials"] == trials and tuple(record["levels"]) == levels and record["env_steps"] == steps
             and record["episodes"] == episodes)
    return text + ("" if equal else f". **Not the protocol's tuning budget** ({trials} trials of {steps:,} env steps on "
                   f"{', '.join(levels)}, {episodes} validation episodes a level): its rows do not compare at equal tuning")


def baseline_settings_text(algorithms: list[str], tuned: Path) -> str:
    """Which baselines have a frozen tuning record in ``tuned`` (the rest ran the settings their rows' commands give)."""
    records = {a: json.loads((tuned / f"{a}.json").read_text()) for a in algorithms if (tuned / f"{a}.json").exists()}
    listed = ", ".join(f"{a} ({r['trials']} trials)" for a, r in records.items()) or "none"
    return (f"The baselines ran the settings their rows' commands give; frozen tuning records of theirs in "
            f"`benchmarks/{tuned.name}/`: {listed}.")


def orderings_with(comparison: Comparison, algo: str) -> list[str]:
    """The comparison's ordering lines of the pairs that hold ``algo``."""
    own = {pair: d for pair, d in comparison.differences.items() if algo in pair}
    return Comparison(comparison.tasks, comparison.aggregates, own, comparison.improvement).orderings()


def merged(baseline: TableFiles, own: TableFiles, tasks: set[tuple[str, str]]) -> tuple[list[dict[str, str]], ...]:
    """Rows, curve points and episodes of the baselines on ``tasks`` (env, level), then the contender's."""
    def on_tasks(items: list[dict[str, str]]) -> list[dict[str, str]]:
        return [item for item in items if (item["env"], item["level"]) in tasks]

    return (on_tasks(baseline.rows()) + own.rows(), on_tasks(baseline.curve_points()) + own.curve_points(),
            on_tasks(baseline.episode_rows()) + own.episode_rows())

