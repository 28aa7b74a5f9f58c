"""The suite's page and figures, regenerated from its committed files alone (imports neither torch nor SB3):

    python -m benchmarks.suite_report --preset full      # benchmarks/results/suite.md and its PNGs
    python -m benchmarks.suite_report --preset smoke     # suite_smoke.md ...

Reads ``<name>.csv`` (a row per run), ``<name>_curves/`` (validation and train curves) and
``<name>_episodes/`` (every final evaluation's episodes); writes ``<name>.md`` and the rliable
figures ``<name>_aggregate.png`` (IQM and mean with 95 % intervals), ``<name>_improvement.png``
(probability of improvement), ``<name>_profile.png`` (performance profile) and
``<name>_sample_efficiency.png`` (IQM of validation success against env steps)."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from agentgym_envs.levels import level_ids
from benchmarks.suite_lib.llm_rows import is_llm_row
from benchmarks.suite_lib.plan import (
    FAMILIES,
    PRESETS,
    REFERENCES,
    STOP_AT,
    Preset,
    cells,
    level_name,
    settings_text,
    tuning_progress,
    untuned,
)
from benchmarks.suite_lib.stats import Comparison, Outcomes, compare, performance_profile, sample_efficiency
from benchmarks.suite_lib.store import read_curves, read_family_files, read_rows, row_key
from trainers.lifecycle import first_step_at_target

TARGET = 0.9  # the validation success "steps to" counts to
LADDER_FALL = 0.35  # the most the best trained algorithm's test success may fall from a level to the next
TAUS = np.linspace(0.0, 1.0, 41)


def file_name(preset: str) -> str:
    """The files' prefix: ``suite`` for the full preset, ``suite_<preset>`` otherwise."""
    return "suite" if preset == "full" else f"suite_{preset}"


def grouped(rows: list[dict[str, str]]) -> dict[tuple[str, str, str], list[dict[str, str]]]:
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for row in rows:
        groups.setdefault((row["env"], row["level"], row["algorithm"]), []).append(row)
    return groups


def mean_std(values: list[float]) -> str:
    return f"{np.mean(values):.2f}" + (f" ± {np.std(values, ddof=1):.2f}" if len(values) > 1 else "")


def steps_to_target(curves: list[dict[str, str]]) -> dict[tuple[str, str, str, int], int]:
    """Per run (its row key), the first step of its validation curve at :data:`TARGET` success (runs that never
    reached it are left out)."""
    points: dict[tuple[str, str, str, int], list[tuple[int, float]]] = {}
    for r in curves:
        if r["split"] == "validation":
            points.setdefault(row_key(r), []).append((int(r["env_steps"]), float(r["success"])))
    reached = {key: first_step_at_target(run, TARGET) for key, run in points.items()}
    return {key: step for key, step in reached.items() if step is not None}


def evaluated_only(row: dict[str, str]) -> bool:
    """Whether the row's algorithm is evaluated, not trained (random, expert, a language model): no seeds, no curve."""
    return row["algorithm"] in REFERENCES or is_llm_row(row)


def steps_cell(steps_at_target: dict[tuple[str, str, str, int], int], rows: list[dict[str, str]]) -> str:
    """The mean env steps to :data:`TARGET` over ``rows``' runs that reached it (``steps_at_target``), and how many did."""
    if evaluated_only(rows[0]):
        return "n/a"  # no curve
    reached = [steps_at_target[row_key(r)] for r in rows if row_key(r) in steps_at_target]
    return f"{np.mean(reached):,.0f} ({len(reached)}/{len(rows)})" if reached else f"- (0/{len(rows)})"


def family_tables(env: str, groups: dict[tuple[str, str, str], list[dict[str, str]]], curves: list[dict[str, str]],
                  seeds: int) -> list[str]:
    """A family's tables, a row per level and a column per algorithm: test success (mean ± std
    over seeds) / train success; env steps to :data:`TARGET` validation success; wall time."""
    own = {(level, algorithm): group for (e, level, algorithm), group in groups.items() if e == env}
    steps_at_target = steps_to_target([point for point in curves if point["env"] == env])
    algorithms = list(dict.fromkeys(algorithm for _, algorithm in own))
    head = ["| level | " + " | ".join(algorithms) + " |", "|" + "---|" * (len(algorithms) + 1)]

    def table(cell: Callable[[list[dict[str, str]]], str]) -> list[str]:
        return [*head, *("| " + " | ".join([level, *(cell(own[level, a]) if (level, a) in own else "" for a in algorithms)])
                         + " |" for level in dict.fromkeys(level for level, _ in own))]

    def success(group: list[dict[str, str]]) -> str:
        partial = "" if evaluated_only(group[0]) or len(group) >= seeds else f" ({len(group)} of {seeds} seeds)"
        trains = [float(r["train_success"]) for r in group if r["train_success"]]
        train = f"{np.mean(trains):.2f}" if trains else "-"
        return f"{mean_std([float(r['test_success']) for r in group])} / {train}{partial}"

    def wall(group: list[dict[str, str]]) -> str:
        return f"{np.mean([float(r['wall_train_s']) for r in group]):,.0f} + {np.mean([float(r['wall_eval_s']) for r in group]):,.0f}"

    return ["Test success (mean ± std over seeds) / train success:", "", *table(success), "",
            f"Env steps to {TARGET} validation success (mean over the runs that reached it):", "",
            *table(lambda group: steps_cell(steps_at_target, group)), "",
            "Seconds of training + final evaluation per run (mean; summed over each run's sittings):", "", *table(wall)]


def best_trained(group_of: dict[str, list[dict[str, str]]], seeds: int) -> tuple[float, str] | None:
    """The highest mean test success over the trained algorithms with every seed on a level (``group_of``: the
    level's runs by algorithm), and the algorithm's name; None where none has every seed yet."""
    return max(((float(np.mean([float(r["test_success"]) for r in group])), algorithm)
                for algorithm, group in group_of.items()
                if not evaluated_only(group[0]) and len({r["seed"] for r in group}) >= seeds),
               default=None)


def ladder_lines(rows: list[dict[str, str]], seeds: int) -> list[str]:
    """Per family, each step up its ladder where both levels have a trained algorithm with every seed: the best
    trained mean test success on each level (:func:`best_trained`, whichever algorithm holds it there: the frontier,
    not one algorithm's own fall) and whether it fell by at most :data:`LADDER_FALL`."""
    groups = grouped(rows)
    lines = []
    for env in dict.fromkeys(r["env"] for r in rows):
        ladder = [level_name(env_id) for env_id in level_ids(env)]
        best = {level: best_trained({a: g for (e, lv, a), g in groups.items() if e == env and lv == level}, seeds)
                for level in ladder}
        steps = []
        for lower, upper in zip(ladder, ladder[1:]):
            below, above = best[lower], best[upper]
            if below is None or above is None:
                continue
            verdict = "met" if below[0] - above[0] <= LADDER_FALL else "NOT met"
            steps.append(f"{lower} {below[0]:.2f} ({below[1]}) -> {upper} {above[0]:.2f} ({above[1]}): {verdict}")
        lines.append(f"- {env} ({len(steps)} of {len(ladder) - 1} steps measured): " + ("; ".join(steps) or "-"))
    return lines


def trained(algorithms: list[str]) -> list[str]:
    return [a for a in algorithms if a not in REFERENCES]


def scopes(families: list[str]) -> dict[str, frozenset[str] | None]:
    """The page's rows, each a set of families (None: all): all families, then each family."""
    return {"all": None} | {f: frozenset({f}) for f in families}


def complete(outcomes: Outcomes, algorithms: list[str], scope: frozenset[str] | None) -> tuple[list[str], dict[str, int]]:
    """Of the algorithms with runs in ``scope`` (None: all families), those with runs on every level any has
    there (so that an algorithm's missing levels do not shrink the others' comparison), and the levels each
    other one has."""
    levels = len(outcomes.tasks([], scope))
    counts = {a: len(outcomes.tasks([a], scope)) for a in algorithms}
    whole = [a for a in algorithms if counts[a] == levels]
    return whole, {a: n for a, n in counts.items() if 0 < n < levels}


def comparisons(outcomes: Outcomes, algorithms: list[str], families: list[str], reps: int) -> dict[str, Comparison]:
    """Per scope (:func:`scopes`): the statistics of the algorithms with runs on every level of it (where
    none has, of those with runs there, on the levels they share)."""
    out = {}
    for name, scope in scopes(families).items():
        whole, partial = complete(outcomes, algorithms, scope)
        present = whole or list(partial)
        tasks = outcomes.tasks(present, scope)
        if present and tasks:
            out[name] = replace(compare(outcomes, present, tasks, reps), families=scope)
    return out


def widest(stats: dict[str, Comparison]) -> tuple[str, Comparison]:
    """The scope that compares the most algorithms (the first such: all families where it does), by name."""
    return max(stats.items(), key=lambda item: len(item[1].aggregates))


def levels_text(count: int) -> str:
    """``count`` levels, in words: "1 level", "3 levels"."""
    return f"{count} level" + ("" if count == 1 else "s")


def iqm_table(stats: dict[str, Comparison], algorithms: list[str], outcomes: Outcomes) -> list[str]:
    """The IQM table, and which algorithms it leaves out of a scope whose every level they have not run yet."""
    lines = ["| families | " + " | ".join(algorithms) + " |", "|" + "---|" * (len(algorithms) + 1)]
    left_out = []
    for name, comparison in stats.items():
        cells_ = [comparison.aggregates[a]["IQM"].text() if a in comparison.aggregates else "" for a in algorithms]
        lines.append(f"| {name} ({levels_text(len(comparison.tasks))}) | " + " | ".join(cells_) + " |")
        _, partial = complete(outcomes, algorithms, comparison.families)
        levels = len(outcomes.tasks([], comparison.families))
        left_out += [f"{a} in {name} ({n} of {levels} levels)" for a, n in partial.items() if a not in comparison.aggregates]
    if left_out:
        lines += ["", "Not in a row until it has runs on every level of it: " + "; ".join(left_out) + "."]
    return lines


def plot_figures(outcomes: Outcomes, curves: list[dict[str, str]], scope: tuple[str, Comparison], out: Path, name: str,
                 reps: int) -> list[str]:
    """The rliable figures of one scope (its name and statistics, :func:`widest`); the page's image lines."""
    label, overall = scope
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import plot_utils

    algorithms = list(overall.aggregates)
    figures = [f"Figures over {label} ({levels_text(len(overall.tasks))}):", ""]

    def save(figure, suffix: str, title: str) -> None:
        path = out / f"{name}_{suffix}.png"
        figure.savefig(path, dpi=80, bbox_inches="tight")
        plt.close(figure)
        figures.append(f"![{title}, {label}]({path.name})")

    def absent(suffix: str, title: str, why: str) -> None:  # an earlier sitting's figure must not outlive its data
        (out / f"{name}_{suffix}.png").unlink(missing_ok=True)
        figures.append(f"No {title} figure yet: {why}.")

    points = {a: np.array([overall.aggregates[a][m].value for m in ("IQM", "mean")]) for a in algorithms}
    intervals = {a: np.array([[overall.aggregates[a][m].low for m in ("IQM", "mean")],
                              [overall.aggregates[a][m].high for m in ("IQM", "mean")]]) for a in algorithms}
    figure, _ = plot_utils.plot_interval_estimates(points, intervals, ["IQM", "mean"], algorithms,
                                                   xlabel="test success (95 % intervals: seeds and test units resampled)")
    save(figure, "aggregate", "IQM and mean of test success")
    pairs = [(x, y) for (x, y), d in overall.improvement.items() if x in trained(algorithms) and y in trained(algorithms)
             and algorithms.index(x) < algorithms.index(y)]
    if pairs:
        axis = plot_utils.plot_probability_of_improvement(
            {f"{x},{y}": overall.improvement[x, y].value for x, y in pairs},
            {f"{x},{y}": np.array([overall.improvement[x, y].low, overall.improvement[x, y].high]) for x, y in pairs})
        save(axis.get_figure(), "improvement", "probability of improvement")
    else:
        absent("improvement", "probability of improvement", "fewer than two algorithms with runs besides random and expert")
    distributions, bands = performance_profile(outcomes, algorithms, overall.tasks, TAUS, reps)
    figure, axis = plt.subplots(figsize=(6, 4))
    plot_utils.plot_performance_profiles(distributions, TAUS, performance_profile_cis=bands, xlabel=r"test success $\tau$",
                                         ax=axis, labelsize="small", legend=True)
    save(figure, "profile", "performance profile")
    efficiency = sample_efficiency(curves, algorithms, overall.tasks, reps)
    if efficiency:
        figure, axis = plt.subplots(figsize=(6, 4))
        for algorithm, (steps, estimate, band) in efficiency.items():
            line, = axis.plot(steps, estimate, marker=".", label=algorithm)
            axis.fill_between(steps, band[0], band[1], alpha=0.2, color=line.get_color())
        axis.set(xlabel="env steps", ylabel="IQM of validation success", ylim=(-0.02, 1.02))
        axis.legend(fontsize="small")
        save(figure, "sample_efficiency", "sample efficiency on validation")
    else:
        absent("sample_efficiency", "sample efficiency", f"no trained algorithm has validation curves on all "
               f"{levels_text(len(overall.tasks))}")
    return figures


def relative_pace(family_pace: dict[tuple[str, ...], float], algorithm: str) -> float:
    """``algorithm``'s seconds per env step over ppo's, the median over the families that ran both (1 without one)."""
    quotients = [seconds / family_pace[env, "ppo"] for (env, name), seconds in family_pace.items()
                 if name == algorithm and family_pace.get((env, "ppo"))]
    return float(np.median(quotients)) if quotients else 1.0


def estimated_hours(preset: Preset, rows: list[dict[str, str]], superseded: list[dict[str, str]],
                    retired: Sequence[dict[str, str]] = ()) -> float:
    """Hours the preset's runs without a row would take at the pace of the rows of the same family,
    level and algorithm (this table's, else its retired rows' (a level of the version before), else the
    superseded protocol's, whose times count a resumed run's last sitting only), else of the family's other
    levels, else of the family's ppo runs scaled by :func:`relative_pace`: the median seconds per env step
    at full budgets (early stopping only shortens them; the median, as a run that shared its machine with
    others took several times as long); an evaluated reference's median seconds."""
    def paces(table: Sequence[dict[str, str]], seconds: Callable[[dict[str, str]], float]) -> dict[tuple[str, ...], tuple[float, bool]]:
        """Each (family, level, algorithm)'s median seconds per env step (True), or a reference's (no steps)
        median seconds per run (False)."""
        runs: dict[tuple[str, ...], list[tuple[float, float]]] = {}
        for row in table:
            runs.setdefault((row["env"], row["level"], row["algorithm"]), []).append((seconds(row), float(row["env_steps"])))
        return {key: (float(np.median([s / n if n else s for s, n in values])), all(n for _, n in values))
                for key, values in runs.items()}

    def own_seconds(row: dict[str, str]) -> float:
        return float(row["wall_train_s"]) + float(row["wall_eval_s"])

    pace = {**paces(superseded, lambda r: float(r["wall_s"])), **paces(retired, own_seconds), **paces(rows, own_seconds)}
    levels: dict[tuple[str, ...], list[float]] = {}
    for (env, _, algorithm), (seconds, per_step) in pace.items():
        levels.setdefault((env, algorithm), []).append(seconds if per_step else 0.0)
    family_pace = {key: float(np.median(values)) for key, values in levels.items()}  # over a family's levels
    done = {row_key(r) for r in rows}
    total = 0.0
    for cell in cells(preset, list(preset.families or FAMILIES), untuned_too=True):
        if cell.key in done:
            continue
        if cell.key[:3] in pace:
            seconds, per_step = pace[cell.key[:3]]
            total += seconds * cell.env_steps if per_step else seconds
        elif (cell.env, cell.algorithm) in family_pace:  # no run of this level: the family's other levels
            total += family_pace[cell.env, cell.algorithm] * cell.env_steps
        elif (cell.env, "ppo") in family_pace:  # the family's ppo pace, times the algorithm's over ppo's elsewhere
            total += family_pace[cell.env, "ppo"] * relative_pace(family_pace, cell.algorithm) * cell.env_steps
    return total / 3600


# The project's own small model's rows, and what a reader must know of them: its recipe was not chosen on validation.
PROJECT_MODELS = ("llm-agentgym-tiny", "llm-agentgym-tiny-grpo")
PROJECT_MODEL_CAVEAT = (
    " The project's small model ({names}; [suite_llm/notes.md](suite_llm/notes.md)) is not a held-out evaluation "
    "of a frozen configuration on customer support and math: its build recipe and its GRPO settings were chosen on the "
    "test success of CustomerSupport-v0 and Math-v0 ([llm_model.md](llm_model.md), [llm_grpo.md](llm_grpo.md)), "
    "whose test units the `-v1` test splits hold.")


def llm_episodes(rows: list[dict[str, str]]) -> str:
    """The test episodes the language-model rows played (their commands' ``--episodes``), as ``"50 "``; ``""``
    without such rows."""
    commands = [shlex.split(row["command"]) for row in rows if is_llm_row(row)]
    counts = sorted({int(words[words.index("--episodes") + 1]) for words in commands if "--episodes" in words})
    return " or ".join(map(str, counts)) + " " if counts else ""


def project_model_caveat(rows: list[dict[str, str]]) -> str:
    """:data:`PROJECT_MODEL_CAVEAT` when the project's own model has rows, else ``""``."""
    names = [name for name in PROJECT_MODELS if any(row["algorithm"] == name for row in rows)]
    return PROJECT_MODEL_CAVEAT.format(names=", ".join(names)) if names else ""


def processors_text(rows: list[dict[str, str]]) -> str:
    """How many rows each processor made, most first (``"not recorded"``: rows made before the column)."""
    counts = Counter(row.get("cpu") or "not recorded" for row in rows)
    return ", ".join(f"{cpu} {count}" for cpu, count in counts.most_common())


def retired_text(retired: list[dict[str, str]], name: str) -> str:
    """The page's sentence on the runs of levels a later version re-cut (none: ``""``)."""
    if not retired:
        return ""
    ids = ", ".join(sorted({r["env_id"].split("/", 1)[-1] for r in retired}))
    return (f" {len(retired)} rows of levels that a later version re-cut ({ids}) left this page for "
            f"[{name}_retired.csv]({name}_retired.csv), with their curves and episodes (`python -m benchmarks.suite_retire`).")


def markdown(rows: list[dict[str, str]], curves: list[dict[str, str]], stats: dict[str, Comparison], figures: list[str],
             preset_name: str, preset: Preset, name: str, reps: int, outcomes: Outcomes,
             retired: Sequence[dict[str, str]] = ()) -> str:
    families = list(preset.families or FAMILIES)
    planned = len(cells(preset, families))
    waiting, later = untuned(preset), len(cells(preset, families, untuned_too=True)) - planned
    runs, models = [r for r in rows if not is_llm_row(r)], sum(map(is_llm_row, rows))
    hours = sum(float(r["wall_train_s"]) + float(r["wall_eval_s"]) for r in rows) / 3600
    commits = sorted({r["commit"] for r in rows})
    superseded = read_rows(Path(__file__).resolve().parent / "results" / "suite_v0" / "suite.csv")
    tuning = (f" now, and {later} more once {', '.join(waiting)} are tuned (`python benchmarks/tuning.py --algos "
              f"{' '.join(waiting)}`; {tuning_progress(waiting)})") if later else ""
    left = (f" The {planned - len(runs)} runs left" + (f" and the {later} of the algorithms not tuned yet" if later else "")
            + f": about {estimated_hours(preset, runs, superseded, retired):.0f} hours of runs on this machine (estimated at the "
            "median seconds per env step of the same family, level and algorithm in this table, else in the superseded "
            "one, else of the family's other levels, else of its ppo runs times the algorithm's median pace over ppo's in "
            "the families that ran both; full budgets). A run takes one core, so on n cores (`--workers n`) "
            "the wall time is about 1/n of that.") if len(runs) < planned + later else ""
    left += f" Language-model rows: {models} (each with its `agentgym eval` command)." if models else ""
    lines = [
        f"# Benchmark suite ({preset_name})", "",
        f"Command: `python -m benchmarks.suite --preset {preset_name}` (the runs: resumable, over sittings, locally or "
        f"on Ray); this page and its figures: `python -m benchmarks.suite_report --preset {preset_name}`, from the "
        "committed files alone.", "",
        f"Runs: {len(runs)} of the {planned} the preset plans{tuning}, {hours:.2f} hours of training and evaluation in "
        f"all (summed over runs), at commit(s) {', '.join(commits) or '-'}.{left} Each row of [{name}.csv]({name}.csv) holds its commit, the "
        "command that reproduces it (a trained or reference row's `agentgym train`, a language model's `agentgym eval`), "
        "its settings hash, the versions of torch, SB3 and gymnasium, its processor (`cpu`: "
        f"{processors_text(runs)}; a row reproduces exactly on its processor, "
        "[suite_reproduction.md](suite_reproduction.md)) and "
        f"its seconds of training and of final evaluation; [{name}_episodes/]({name}_episodes) every final evaluation's "
        "episodes (task, unit, success, return, turns, invalid calls)." + retired_text(list(retired), name), "",
        f"Protocol: each trained run {preset.budget_text()}, settings {settings_text(preset)}; a learning-curve point every "
        f"{preset.curve_every:,} env steps for every algorithm ({preset.curve_episodes} validation episodes; taken "
        "where an update ends at or after each grid step: the policy after that many steps); a run "
        f"stops once validation success held >= {STOP_AT} for two points in a row; the test split is read once, by the "
        f"final greedy evaluation ({preset.eval_episodes} episodes per split, the env's own reward). Random and expert "
        "are evaluated, not trained; so are language models (a row with a `model`: the weights' hash or the "
        f"endpoint), greedily in text mode on the test split's first {llm_episodes(rows)}episodes of the same seeds, "
        "with no train success and no curve." + project_model_caveat(rows), "",
        *figures, "",
        "## IQM of test success, 95 % intervals", "",
        "Seeds and test units resampled (footnote). Over all families, then per family:", "",
    ]
    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    lines += iqm_table(stats, algorithms, outcomes) + ["", "## Orderings", "",
                                               "Each pair of algorithms with runs (trained or language models; random and expert "
                                               "left out): an ordering only "
                                               "where the 95 % interval of the IQM difference excludes 0.", ""]
    for family, comparison in stats.items():
        present = trained(list(comparison.aggregates))
        sub = Comparison(comparison.tasks, comparison.aggregates,
                         {p: d for p, d in comparison.differences.items() if set(p) <= set(present)}, comparison.improvement)
        lines += [f"- {family}: " + ("; ".join(sub.orderings()) or "fewer than two trained algorithms")]
    lines += ["", "## The ladder", "",
              "Between adjacent levels the best trained test success should fall by at most "
              f"{LADDER_FALL}: on each level the highest mean test success (over seeds) of a trained algorithm with "
              f"all {preset.seeds} seeds there, whichever algorithm it is (the two levels' may differ; each is named). "
              "The ceiling is the one the "
              "algorithms have: the scripted expert's success through the trainers' flat actions, level by level, is "
              "on [admissible_actions.md](admissible_actions.md).", "", *ladder_lines(rows, preset.seeds)]
    lines += ["", "## Per level", "", "Test and train success, env steps to the target and seconds per run, level by level: "
              + ", ".join(f"[{env}]({name}_levels/{env}.md)" for env in dict.fromkeys(r["env"] for r in rows)) + "."]
    lines += ["", "## How the intervals are made", "",
              f"Two-level stratified bootstrap ({reps} replicates, seed 0): per level, the test units (phrasing or "
              "problem template, coding problem, tau2 user or task: the episode's `unit_id`, else its task id) are "
              "drawn with replacement, one draw for every algorithm, and each algorithm's runs (seeds) are drawn with "
              "replacement; a run's replicate success is its successes over its episodes on the drawn units. rliable's "
              "`aggregate_iqm`, `aggregate_mean` and `probability_of_improvement` are computed on each replicate; an "
              "interval is the 2.5th to 97.5th percentile. The performance profile's and the sample-efficiency "
              "curves' bands are rliable's own (runs resampled, units not). An early-stopped run keeps its last "
              "validation point on the sample-efficiency curve."]
    return "\n".join(lines) + "\n"


def report(preset_name: str, folder: Path, reps: int = 2000) -> Path:
    """Write ``<name>.md`` and its figures in ``folder`` from the suite's files there; the page's path."""
    name, preset = file_name(preset_name), PRESETS[preset_name]
    rows = read_rows(folder / f"{name}.csv")
    curves = read_curves(folder / f"{name}_curves")
    outcomes = Outcomes.from_episodes(read_family_files(folder / f"{name}_episodes", "*.csv.gz"))
    order = {c.key: i for i, c in enumerate(cells(preset, list(dict.fromkeys(r["env"] for r in rows))))}
    rows = sorted(rows, key=lambda r: order.get(row_key(r), math.inf))
    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    stats = comparisons(outcomes, algorithms, list(dict.fromkeys(r["env"] for r in rows)), reps) if rows else {}
    figures = plot_figures(outcomes, curves, widest(stats), folder, name, reps) if stats else []
    page = folder / f"{name}.md"
    retired = read_rows(folder / f"{name}_retired.csv")
    page.write_text(markdown(rows, curves, stats, figures, preset_name, preset, name, reps, outcomes, retired),
                    encoding="utf-8")
    write_level_pages(rows, curves, preset, folder / f"{name}_levels", page.name,
                      f"python -m benchmarks.suite_report --preset {preset_name}")
    return page


def write_level_pages(rows: list[dict[str, str]], curves: list[dict[str, str]], preset: Preset, folder: Path,
                      main_page: str, command: str) -> None:
    """One page per family in ``folder``: its tables level by level (the main page links them)."""
    folder.mkdir(parents=True, exist_ok=True)
    groups = grouped(rows)
    families = {r["env"] for r in rows}
    for stale in folder.glob("*.md"):  # a family whose rows all left the table (retired) has no page
        if stale.stem not in families:
            stale.unlink()
    for env in dict.fromkeys(r["env"] for r in rows):
        text = [f"# {env}, level by level", "", f"Command: `{command}`, from the suite's files (the runs and their "
                f"protocol: [{main_page}](../{main_page})).", "",
                *family_tables(env, groups, curves, preset.seeds)]
        (folder / f"{env}.md").write_text("\n".join(text) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=list(PRESETS), default="full")
    parser.add_argument("--out", default="benchmarks/results", help="the folder of the suite's files")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replicates")
    args = parser.parse_args(argv)
    print(report(args.preset, Path(args.out), args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
