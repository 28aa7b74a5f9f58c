"""The suite's statistics, with rliable (Agarwal et al., 2021): IQM and mean of test success with
95 % intervals, the probability of improvement of each pair of algorithms, performance profiles,
and sample-efficiency curves on validation.

Test success moves in whole units (phrasing templates, problem templates, coding problems, tau2
users or tasks), so the intervals resample test units as well as seeds: a two-level stratified
bootstrap. Each replicate, per level, draws the level's test units with replacement (one draw
shared by every algorithm: they are scored on the same units) and, per algorithm, the level's runs
with replacement (stratified by level, as rliable's bootstrap); a run's replicate success is its
successes over its episodes on the drawn units (the unresampled draw gives its test success).
rliable's aggregate functions (``aggregate_iqm``, ``aggregate_mean``, ``probability_of_improvement``)
are computed on every replicate; an interval is the replicates' 2.5th and 97.5th percentiles.
Imports neither torch nor SB3."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from rliable import library as rly
from rliable import metrics
from scipy.stats import trim_mean

CONFIDENCE = 0.95
Task = tuple[str, str]  # (family, level)


@dataclass
class Outcomes:
    """Per task and algorithm, each run's test successes and episodes per unit (runs x units),
    the units in one order for every algorithm."""

    successes: dict[Task, dict[str, np.ndarray]]
    episodes: dict[Task, dict[str, np.ndarray]]

    @classmethod
    def from_episodes(cls, rows: list[dict[str, str]], split: str = "test") -> Outcomes:
        """From the suite's per-episode rows (``env, level, algorithm, seed, split, unit_id, success``)."""
        counts: dict[tuple[Task, str, int, str], list[int]] = {}
        for row in rows:
            if row["split"] == split:
                tally = counts.setdefault(((row["env"], row["level"]), row["algorithm"], int(row["seed"]), row["unit_id"]), [0, 0])
                tally[0] += int(row["success"])
                tally[1] += 1
        units: dict[Task, set[str]] = {}  # per task, its units; and per task and algorithm, the seeds run
        seeds_of: dict[Task, dict[str, set[int]]] = {}
        for task, algorithm, seed, unit in counts:
            units.setdefault(task, set()).add(unit)
            seeds_of.setdefault(task, {}).setdefault(algorithm, set()).add(seed)
        successes: dict[Task, dict[str, np.ndarray]] = {}
        episodes: dict[Task, dict[str, np.ndarray]] = {}
        for task, unit_set in units.items():
            names = sorted(unit_set)
            for algorithm, seeds in sorted(seeds_of[task].items()):
                tallies = np.array([[counts.get((task, algorithm, s, u), [0, 0]) for u in names] for s in sorted(seeds)])
                successes.setdefault(task, {})[algorithm] = tallies[..., 0].astype(float)
                episodes.setdefault(task, {})[algorithm] = tallies[..., 1].astype(float)
        return cls(successes, episodes)

    def tasks(self, algorithms: list[str], families: Collection[str] | None = None) -> list[Task]:
        """The tasks (of ``families``, or all) on which every one of ``algorithms`` has runs."""
        if isinstance(families, str):
            raise TypeError(f"families is a collection of family names, not the string {families!r}")
        return [t for t in self.successes
                if (families is None or t[0] in families) and all(a in self.successes[t] for a in algorithms)]

    def runs(self, algorithm: str, tasks: list[Task]) -> int:
        """The runs per task an algorithm's score matrix holds: its fewest over ``tasks``."""
        return min(len(self.successes[t][algorithm]) for t in tasks)

    def scores(self, algorithm: str, tasks: list[Task]) -> np.ndarray:
        """The algorithm's test success, runs x tasks (its first :meth:`runs` seeds of each task)."""
        n = self.runs(algorithm, tasks)
        return np.stack([self.successes[t][algorithm][:n].sum(1) / self.episodes[t][algorithm][:n].sum(1) for t in tasks], 1)


def replicates(outcomes: Outcomes, algorithms: list[str], tasks: list[Task], reps: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``reps`` two-level bootstrap replicates of each algorithm's score matrix (reps x runs x tasks)."""
    rng = np.random.default_rng(seed)
    out = {a: np.empty((reps, outcomes.runs(a, tasks), len(tasks))) for a in algorithms}
    for column, task in enumerate(tasks):
        n_units = outcomes.successes[task][algorithms[0]].shape[1]
        drawn = rng.integers(n_units, size=(reps, n_units))
        weights = np.stack([np.bincount(row, minlength=n_units) for row in drawn]).astype(float)  # reps x units
        for algorithm in algorithms:
            n = out[algorithm].shape[1]
            runs = rng.integers(n, size=(reps, n))
            wins = np.einsum("rsu,ru->rs", outcomes.successes[task][algorithm][:n][runs], weights)
            played = np.einsum("rsu,ru->rs", outcomes.episodes[task][algorithm][:n][runs], weights)
            out[algorithm][:, :, column] = wins / np.maximum(played, 1)
    return out


def interval(values: np.ndarray) -> tuple[float, float]:
    low, high = np.percentile(values, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)])
    return float(low), float(high)


@dataclass
class Estimate:
    """A point estimate and its 95 % interval."""

    value: float
    low: float
    high: float

    def text(self) -> str:
        return f"{figure(self.value)} [{figure(self.low)}, {figure(self.high)}]"


def figure(x: float) -> str:
    """Two decimals, but a figure that two decimals would round to zero keeps two significant digits, so
    that an interval's bound shows on which side of 0 it lies (0.0013, not 0.00)."""
    return f"{x:.2f}" if x == 0 or abs(x) >= 0.005 else f"{x:.2g}"


AGGREGATES: dict[str, Callable[[np.ndarray], float]] = {"IQM": metrics.aggregate_iqm, "mean": metrics.aggregate_mean}


def replicated(name: str, drawn: np.ndarray) -> np.ndarray:
    """rliable's aggregate ``name`` of every replicate (reps x runs x tasks) at once: the IQM is
    ``aggregate_iqm``'s 25 % trimmed mean over all scores, the mean ``aggregate_mean``'s mean of
    the per-task means."""
    flat = drawn.reshape(len(drawn), -1)
    return trim_mean(flat, 0.25, axis=1) if name == "IQM" else drawn.mean(axis=1).mean(axis=1)


def improvement_replicates(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """rliable's ``probability_of_improvement`` of every replicate pair at once (reps x runs x
    tasks each): per task, the Mann-Whitney U of X over Y divided by its maximum, P(X > Y) + P(X = Y) / 2
    over all pairs of runs; then the mean over tasks."""
    above = (x[:, :, None, :] > y[:, None, :, :]).mean(axis=(1, 2))
    tied = (x[:, :, None, :] == y[:, None, :, :]).mean(axis=(1, 2))
    return (above + tied / 2).mean(axis=1)


@dataclass
class Comparison:
    """The statistics of one set of tasks (a family, several, or all): per algorithm its aggregates; per
    ordered pair the difference of IQMs and the probability of improvement."""

    tasks: list[Task]
    aggregates: dict[str, dict[str, Estimate]]  # algorithm -> "IQM" | "mean" -> estimate
    differences: dict[tuple[str, str], Estimate]  # (x, y) -> IQM(x) - IQM(y)
    improvement: dict[tuple[str, str], Estimate]  # (x, y) -> P(x > y)
    families: frozenset[str] | None = None  # the scope the tasks were drawn from (None: every family)

    def orderings(self) -> list[str]:
        """Each pair, higher IQM first: ordered where the difference's interval excludes 0, else
        no difference at this budget."""
        lines = []
        for x, y in combinations(list(self.aggregates), 2):
            if (x, y) not in self.differences:
                continue
            if self.differences[x, y].value < 0:
                x, y = y, x
            difference = self.differences[x, y]
            if difference.low > 0:
                lines.append(f"{x} > {y}: IQM difference {difference.text()}, P({x} > {y}) {self.improvement[x, y].text()}")
            else:
                lines.append(f"{x} vs {y}: no difference at this budget (IQM difference {difference.text()})")
        return lines


def compare(outcomes: Outcomes, algorithms: list[str], tasks: list[Task], reps: int = 2000) -> Comparison:
    """IQM and mean with intervals, IQM differences and probabilities of improvement over ``tasks``."""
    points = {a: outcomes.scores(a, tasks) for a in algorithms}
    drawn = replicates(outcomes, algorithms, tasks, reps)
    aggregates = {a: {name: Estimate(f(points[a]), *interval(replicated(name, drawn[a]))) for name, f in AGGREGATES.items()}
                  for a in algorithms}
    iqm = {a: replicated("IQM", drawn[a]) for a in algorithms}
    differences, improvement = {}, {}
    for x, y in (pair for a, b in combinations(algorithms, 2) for pair in ((a, b), (b, a))):
        differences[x, y] = Estimate(aggregates[x]["IQM"].value - aggregates[y]["IQM"].value, *interval(iqm[x] - iqm[y]))
        improvement[x, y] = Estimate(metrics.probability_of_improvement(points[x], points[y]),
                                     *interval(improvement_replicates(drawn[x], drawn[y])))
    return Comparison(tasks, aggregates, differences, improvement)


def performance_profile(outcomes: Outcomes, algorithms: list[str], tasks: list[Task], taus: np.ndarray, reps: int = 2000
                        ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's run-score distributions (the fraction of runs above each tau) and their intervals (runs resampled)."""
    np.random.seed(0)  # rliable's bootstrap draws from numpy's global generator
    return rly.create_performance_profile({a: outcomes.scores(a, tasks) for a in algorithms}, taus, reps=reps)


def sample_efficiency(curves: list[dict[str, str]], algorithms: list[str], tasks: list[Task], reps: int = 2000
                      ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per algorithm, the IQM of validation success over runs and tasks at each grid step, with
    rliable's intervals (runs resampled): (steps, IQM, 2 x steps interval). A run that stopped early
    keeps its last point; the steps run from the first at which every run has a point to the last
    that every task's runs reached."""
    series: dict[tuple[str, Task], dict[int, dict[int, float]]] = {}
    for point in curves:
        if point["split"] == "validation":
            run = series.setdefault((point["algorithm"], (point["env"], point["level"])), {}).setdefault(int(point["seed"]), {})
            run[int(point["env_steps"])] = float(point["success"])
    out = {}
    for algorithm in algorithms:
        runs = [series.get((algorithm, task), {}) for task in tasks]
        if not all(runs):
            continue
        first = max(min(points) for task_runs in runs for points in task_runs.values())
        last = min(max(max(points) for points in task_runs.values()) for task_runs in runs)
        steps = sorted({s for task_runs in runs for points in task_runs.values() for s in points if first <= s <= last})
        if not steps:
            continue
        n = min(len(task_runs) for task_runs in runs)
        scores = np.array([[[points[max(p for p in points if p <= s)] for s in steps] for points in list(task_runs.values())[:n]]
                           for task_runs in runs])  # tasks x runs x steps
        estimates, intervals = rly.get_interval_estimates(
            {algorithm: scores.transpose(1, 0, 2)},
            lambda matrix: np.array([metrics.aggregate_iqm(matrix[..., i]) for i in range(matrix.shape[-1])]), reps=reps,
            random_state=np.random.RandomState(0))
        out[algorithm] = (np.array(steps), estimates[algorithm], intervals[algorithm])
    return out
