"""The suite's statistics: intervals that resample test units as well as seeds, and orderings
stated only where the interval of the difference excludes 0."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

pytest.importorskip("rliable")


@pytest.fixture
def stats():
    return importlib.import_module("benchmarks.suite_lib.stats")


def episodes(algorithm: str, seeds: int, units: dict[str, list[int]], level: str = "L0") -> list[dict[str, str]]:
    """Rows of the test split: each seed plays every unit's episodes with these successes."""
    return [{"env": "e", "level": level, "algorithm": algorithm, "seed": str(seed), "split": "test", "unit_id": unit,
             "success": str(success)}
            for seed in range(seeds) for unit, outcomes in units.items() for success in outcomes]


def test_runs_that_agree_still_get_an_interval_from_their_units(stats):
    # every seed scores the same, so resampling seeds alone gives no width; the units differ
    units = {f"u{i}": [1, 1] if i < 5 else [0, 0] for i in range(10)}
    outcomes = stats.Outcomes.from_episodes(episodes("a", 5, units))
    tasks = outcomes.tasks(["a"])
    assert outcomes.scores("a", tasks).tolist() == [[0.5]] * 5
    mean = stats.compare(outcomes, ["a"], tasks, reps=500).aggregates["a"]["mean"]
    assert mean.value == 0.5 and mean.low < 0.4 and mean.high > 0.6


def test_a_gap_the_units_cannot_explain_is_an_ordering(stats):
    good = {f"u{i}": [1, 1, 1, 1] for i in range(20)}
    bad = {f"u{i}": [0, 0, 0, 1] for i in range(20)}
    outcomes = stats.Outcomes.from_episodes(episodes("good", 3, good) + episodes("bad", 3, bad))
    comparison = stats.compare(outcomes, ["good", "bad"], outcomes.tasks(["good", "bad"]), reps=500)
    line, = comparison.orderings()
    assert line.startswith("good > bad: IQM difference 0.75 [")
    assert comparison.improvement["good", "bad"].value == 1.0


def test_a_gap_of_one_unit_is_no_difference_at_this_budget(stats):
    # two algorithms that differ on one unit of four: resampling the units covers 0
    first = {"u0": [1], "u1": [1], "u2": [0], "u3": [1]}
    second = {"u0": [1], "u1": [1], "u2": [0], "u3": [0]}
    outcomes = stats.Outcomes.from_episodes(episodes("x", 3, first) + episodes("y", 3, second))
    comparison = stats.compare(outcomes, ["x", "y"], outcomes.tasks(["x", "y"]), reps=500)
    line, = comparison.orderings()
    assert line.startswith("x vs y: no difference at this budget (IQM difference 0.25 [0.00,")


def test_the_unresampled_draw_is_each_runs_test_success_weighted_by_episodes(stats):
    rows = episodes("a", 1, {"u0": [1, 1, 1], "u1": [0]}) + episodes("a", 1, {"u0": [1]}, level="L1")
    outcomes = stats.Outcomes.from_episodes(rows)
    assert outcomes.scores("a", outcomes.tasks(["a"])).tolist() == [[0.75, 1.0]]


def test_sample_efficiency_keeps_an_early_stopped_runs_last_point(stats):
    def points(seed, values):
        return [{"env": "e", "level": "L0", "algorithm": "a", "seed": str(seed), "split": "validation",
                 "env_steps": str(1024 * (i + 1)), "success": str(v)} for i, v in enumerate(values)]
    curves = points(0, [0.2, 1.0, 1.0]) + points(1, [0.0, 0.5, 0.9, 1.0, 1.0])
    steps, estimate, _ = stats.sample_efficiency(curves, ["a"], [("e", "L0")], reps=50)["a"]
    assert steps.tolist() == [1024, 2048, 3072, 4096, 5120]
    assert estimate.tolist() == pytest.approx([0.1, 0.75, 0.95, 1.0, 1.0])


def test_the_replicates_aggregates_are_rliables(stats):
    from rliable import metrics

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, size=(4, 3, 6)) / 4, rng.integers(0, 5, size=(4, 2, 6)) / 4  # ties included
    assert stats.replicated("IQM", x).tolist() == pytest.approx([metrics.aggregate_iqm(r) for r in x])
    assert stats.replicated("mean", x).tolist() == pytest.approx([metrics.aggregate_mean(r) for r in x])
    assert stats.improvement_replicates(x, y).tolist() == pytest.approx(
        [metrics.probability_of_improvement(a, b) for a, b in zip(x, y)])


def test_an_algorithm_without_runs_on_every_family_is_compared_per_family_only(stats):
    report = importlib.import_module("benchmarks.suite_report")
    plays = {"customer_support": ("ppo", "llm-tiny"), "math": ("ppo", "llm-tiny"), "support_team": ("ppo",)}
    rows = [{**row, "env": family} for family, algorithms in plays.items()
            for algorithm in algorithms for row in episodes(algorithm, 2, {"u0": [1, 0], "u1": [1, 1]})]
    outcomes = stats.Outcomes.from_episodes(rows)
    compared = report.comparisons(outcomes, ["ppo", "llm-tiny"], list(plays), reps=50)
    assert list(compared) == ["all", *plays]
    assert set(compared["all"].aggregates) == {"ppo"}
    assert set(compared["math"].aggregates) == {"ppo", "llm-tiny"}
    table = report.iqm_table(compared, ["ppo", "llm-tiny"], outcomes)
    assert "llm-tiny in all (2 of 3 levels)" in table[-1]


def test_an_interval_bound_near_zero_shows_its_sign(stats):
    assert stats.Estimate(0.0081, 0.0013, 0.012).text() == "0.01 [0.0013, 0.01]"
    assert stats.Estimate(0.04, -0.0021, 0.07).text() == "0.04 [-0.0021, 0.07]"
    assert stats.Estimate(0.0, 0.0, 0.0).text() == "0.00 [0.00, 0.00]"


def test_the_ladder_judges_each_step_by_the_best_trained_algorithm_with_every_seed():
    report = importlib.import_module("benchmarks.suite_report")

    def runs(level: str, algorithm: str, success: float, seeds: int = 5, model: str = "") -> list[dict[str, str]]:
        return [{"env": "customer_support", "level": level, "algorithm": algorithm, "seed": str(seed),
                 "test_success": str(success), "model": model} for seed in range(seeds)]

    rows = (runs("L0", "ppo", 1.0) + runs("L1", "ppo", 0.5) + runs("L1", "sb3-ppo", 0.7) + runs("L2", "ppo", 0.2)
            + runs("L2", "sb3-ppo", 0.9, seeds=2)  # not every seed yet: not counted
            + runs("L2", "llm-tiny", 0.95, seeds=1, model="models/tiny sha256:0")  # evaluated only
            + runs("L3", "expert", 1.0, seeds=1))  # evaluated only: L3 has no trained algorithm yet
    assert report.ladder_lines(rows, seeds=5) == [
        "- customer_support (2 of 5 steps measured): L0 1.00 (ppo) -> L1 0.70 (sb3-ppo): met; "
        "L1 0.70 (sb3-ppo) -> L2 0.20 (ppo): NOT met"]
