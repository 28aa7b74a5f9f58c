"""The benchmark suite on a tiny budget: one row per run with the suite's columns, curves, a
table with the goals checked, and a second sitting that runs only what is missing."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest


@pytest.fixture
def suite(benchmark_script):
    return benchmark_script("suite")


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def tiny(tmp_path: Path, *extra: str) -> list[str]:
    return ["--preset", "quick", "--envs", "customer_support", "--env-steps", "256", "--eval-episodes", "4",
            "--out", str(tmp_path / "results"), "--runs", str(tmp_path / "runs"), *extra]


def test_a_sitting_writes_rows_curves_table_and_plot(suite, tmp_path):
    assert suite.main(tiny(tmp_path)) == 0
    results = tmp_path / "results"
    rows = read_csv(results / "suite_quick.csv")
    assert list(rows[0]) == list(suite.FIELDS)
    assert [(r["env"], r["level"], r["algorithm"]) for r in rows] == [
        ("customer_support", "L0", algorithm) for algorithm in ("random", "expert", "ppo", "sb3-maskable-ppo")]
    by_algorithm = {r["algorithm"]: r for r in rows}
    assert float(by_algorithm["expert"]["test_success"]) == 1.0
    assert int(by_algorithm["sb3-maskable-ppo"]["env_steps"]) >= 256 and int(by_algorithm["ppo"]["env_steps"]) >= 256
    curves = read_csv(results / "suite_quick_curves" / "customer_support.csv")
    assert {(r["algorithm"], r["split"]) for r in curves} >= {("sb3-maskable-ppo", "test"), ("sb3-maskable-ppo", "train")}
    assert all(len(r["points"].split()) >= 1 for r in curves)
    assert suite.read_curves(results / "suite_quick_curves")[0]["env_steps"].isdigit()
    table = (results / "suite_quick.md").read_text(encoding="utf-8")
    assert "Command: `python benchmarks/suite.py --preset quick`" in table
    assert "python benchmarks/suite.py " + " ".join(tiny(tmp_path)) in table
    assert "- customer_support L0: random <= 0.1: met" in table
    header, _, level_0 = table.split("Test success / train success:\n\n", 1)[1].splitlines()[:3]
    success = dict(zip(header.strip("| ").split(" | "), level_0.strip("| ").split(" | ")))
    assert success["level"] == "L0" and success["expert"] == "1.00 / 1.00"
    assert "Steps to 0.9 test success:" in table
    assert (results / "suite_quick_customer_support.png").stat().st_size > 0


def test_a_second_sitting_runs_only_what_is_missing(suite, tmp_path, capsys):
    assert suite.main(tiny(tmp_path, "--max-runs", "1")) == 0
    assert len(read_csv(tmp_path / "results" / "suite_quick.csv")) == 1
    capsys.readouterr()
    assert suite.main(tiny(tmp_path, "--algos", "random", "expert")) == 0
    printed = capsys.readouterr().out
    assert "random seed 0" not in printed and "expert seed 0" in printed
    assert len(read_csv(tmp_path / "results" / "suite_quick.csv")) == 2
    assert suite.main(tiny(tmp_path, "--algos", "random", "expert")) == 0
    assert "seed 0] " not in capsys.readouterr().out  # nothing left to run
    table = (tmp_path / "results" / "suite_quick.md").read_text(encoding="utf-8")
    assert "--algos random expert`, from suite_quick.csv alone)" in table
    assert "Runs so far: 2 of the 28 the preset plans." in table


def test_a_complete_table_says_so(suite):
    assert suite.runs_line(28, 28, ladder=False) == "Runs: all 28 the preset plans."
    assert suite.runs_line(27, 28, ladder=True).startswith("Runs so far: 27 of the 28 the preset plans (every family's")


def test_an_unknown_algorithm_is_a_clear_error(suite, tmp_path, capsys):
    assert suite.main(tiny(tmp_path, "--algos", "nope")) == 2
    assert "unknown algorithm(s) ['nope']" in capsys.readouterr().err


def test_a_family_setting_overrides_the_algorithms_and_the_page_names_it(suite):
    assert suite.settings("coding", "sb3-maskable-ppo") == {"ent_coef": 0.03}
    assert suite.settings("coding", "ppo") == {**suite.SB3_SHAPE, "ent_coef": 0.03}
    assert suite.settings("math", "ppo") == suite.SB3_SHAPE and suite.settings("math", "sb3-maskable-ppo") == {}
    assert suite.settings("tau2_airline", "bc-ppo") == {**suite.SB3_SHAPE, **suite.CLONING}
    assert suite.settings("customer_support", "sb3-dqn") == {}
    assert "on coding ppo: " in suite.settings_text() and "sb3-ppo: {'ent_coef': 0.03}" in suite.settings_text()


def test_a_level_budget_overrides_the_family_and_the_page_names_it(suite):
    full = suite.PRESETS["full"]
    budgets = {(c.env, c.level): c.env_steps for c in suite.cells(full, ["customer_support", "coding"])}
    assert budgets[("customer_support", "L0")] == full.env_steps
    assert budgets[("customer_support", "L2")] == budgets[("customer_support", "v0")] == 200_000
    assert budgets[("coding", "L0")] == suite.CODING_STEPS
    assert full.budget_text() == "100,000 env steps (coding: 200,000; customer_support L2: 200,000; customer_support L3: 200,000; customer_support v0: 200,000)"


def success_rows(algorithm, *values):
    return [{"env": "e", "level": "L1", "algorithm": algorithm, "seed": str(i), "test_success": str(v)}
            for i, v in enumerate(values)]


def test_the_ordering_names_the_step_that_breaks_it_and_whether_the_noise_covers_it(suite):
    table = [*success_rows("random", 0.0), *success_rows("sb3-maskable-ppo", 1.0, 1.0, 1.0),
             *success_rows("ppo", 1.0, 0.92, 1.0), *success_rows("bc-ppo", 0.5, 0.5, 0.5)]
    line, = suite.ordering(suite.grouped(table), 100)
    assert ("does not hold: sb3-maskable-ppo 1.00 > ppo 0.97, within the noise "
            "(seeds' std 0.05, 100-episode standard error 0.01); ") in line
    assert "ppo 0.97 > bc-ppo 0.50, beyond the noise (seeds' std 0.05, 100-episode standard error 0.04)" in line


def test_a_gap_of_one_episode_in_a_hundred_is_within_the_noise_when_the_seeds_agree(suite):
    table = [*success_rows("random", 0.0), *success_rows("sb3-maskable-ppo", 0.47, 0.47, 0.47),
             *success_rows("ppo", 0.47, 0.47, 0.47), *success_rows("bc-ppo", 0.46, 0.46, 0.46)]
    line, = suite.ordering(suite.grouped(table), 100)
    assert "ppo 0.47 > bc-ppo 0.46, within the noise (seeds' std 0.00, 100-episode standard error 0.05)" in line
    line, = suite.ordering(suite.grouped(table), 10_000)
    assert "ppo 0.47 > bc-ppo 0.46, beyond the noise (seeds' std 0.00, 10000-episode standard error 0.00)" in line


def test_our_ppo_on_the_level_just_below_v0_is_checked_in_every_seed(suite):
    def rows(level, *values):
        return [{"env": "customer_support", "level": level, "algorithm": "ppo", "seed": str(i), "test_success": str(v)}
                for i, v in enumerate(values)]
    below = suite.level_name(suite.level_ids("customer_support")[-2])
    assert below == "L3"
    met = [line for line in suite.goals(rows(below, 1.0, 0.82, 0.86), [], 100) if "just below v0" in line]
    assert met == ["- customer_support L3, the level just below v0: ppo >= 0.8 test success in every seed: met (1.00, 0.82, 0.86)"]
    missed, = [line for line in suite.goals(rows(below, 1.0, 0.79, 0.95), [], 100) if "just below v0" in line]
    assert "NOT met (1.00, 0.79, 0.95)" in missed
    assert not [line for line in suite.goals(rows("L2", 1.0), [], 100) if "just below v0" in line]


def test_a_run_left_by_other_settings_is_run_afresh(suite, tmp_path, capsys, monkeypatch):
    assert suite.main(tiny(tmp_path, "--algos", "ppo")) == 0
    (tmp_path / "results" / "suite_quick.csv").unlink()  # the row is gone; the run directory stays
    monkeypatch.setitem(suite.SETTINGS, "ppo", {**suite.SETTINGS["ppo"], "ent_coef": 0.02})
    capsys.readouterr()
    assert suite.main(tiny(tmp_path, "--algos", "ppo")) == 0
    assert "starting afresh" in capsys.readouterr().out
    run_json = tmp_path / "runs" / "suite_quick" / "CustomerSupport-L0-v0__ppo__seed0" / "run.json"
    assert '"ent_coef": 0.02' in run_json.read_text()
