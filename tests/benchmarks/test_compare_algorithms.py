"""The benchmark harness on a tiny budget: random, expert and SB3 PPO (256 steps), a missing
algorithm reported as skipped and a crashing one as failed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from trainers import lifecycle


@pytest.fixture
def compare(monkeypatch, benchmark_script):
    module = benchmark_script("compare_algorithms")
    monkeypatch.setitem(lifecycle.ALGORITHMS, "not-built-yet", lifecycle.Algorithm("trainers.not_built_yet:train",
                                                                                    "trainers.not_built_yet:load_policy"))
    return module


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_harness_writes_csv_table_and_curves(compare, tmp_path):
    argv = ["--algos", "random", "expert", "sb3-ppo", "not-built-yet", "--envs", "CustomerSupport-v0",
            "--seeds", "1", "--total-steps", "256", "--eval-episodes", "4", "--out", str(tmp_path)]
    assert compare.main(argv) == 0
    rows = read_csv(tmp_path / "compare.csv")
    assert [(r["algo"], r["seed"]) for r in rows] == [(a, s) for a in ("random", "expert", "sb3-ppo", "not-built-yet") for s in "0"]
    by_algo = {r["algo"]: r for r in rows}
    assert float(by_algo["expert"]["test_success"]) == 1.0 and float(by_algo["random"]["test_success"]) < 0.5
    assert int(by_algo["sb3-ppo"]["total_steps"]) >= 256 and float(by_algo["sb3-ppo"]["sps"]) > 0
    assert by_algo["not-built-yet"]["status"].startswith("skipped: module trainers.not_built_yet is not available")
    table = (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert "python benchmarks/compare_algorithms.py " + " ".join(argv) in table
    assert "| expert | 1 | 1.000 | 1.000 |" in table
    assert "not-built-yet seed 0: skipped" in table
    assert (tmp_path / "compare_CustomerSupport-v0.png").stat().st_size > 0
    assert list((tmp_path / "runs" / "CustomerSupport-v0__sb3-ppo__seed0").glob("events.out.tfevents.*"))


def test_resume_reuses_finished_runs_and_tables_mean_and_std(compare, tmp_path, capsys):
    argv = ["--algos", "expert", "--seeds", "2", "--eval-episodes", "2", "--out", str(tmp_path), "--envs", "customer_support"]
    assert compare.main(argv) == 0
    assert compare.main([*argv, "--resume"]) == 0
    assert capsys.readouterr().out.count("reusing") == 2
    assert "| expert | 2 | 1.000 ± 0.000 | 1.000 ± 0.000 |" in (tmp_path / "compare.md").read_text(encoding="utf-8")


def test_a_failing_run_is_reported_and_the_others_still_run(compare, tmp_path, monkeypatch):
    real_train = compare.train

    def train(request):
        if request.algo == "random":
            raise RuntimeError("boom")
        return real_train(request)

    monkeypatch.setattr(compare, "train", train)
    argv = ["--algos", "random", "expert", "--seeds", "1", "--eval-episodes", "2", "--out", str(tmp_path), "--envs", "customer_support"]
    assert compare.main(argv) == 1
    rows = read_csv(tmp_path / "compare.csv")
    assert rows[0]["status"] == "failed: RuntimeError: boom" and rows[1]["status"] == "ok"


def test_unknown_algorithm_is_a_clear_error(compare, tmp_path, capsys):
    assert compare.main(["--algos", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown algorithm(s) ['nope']" in capsys.readouterr().err
