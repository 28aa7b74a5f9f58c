"""The equal-tuning search on Ray Tune: every trial trains on the tuning levels and is scored on
their validation split; the best settings are frozen, and a finished search is not run again."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from benchmarks.suite_lib import plan

pytest.importorskip("optuna")
pytestmark = pytest.mark.xdist_group("ray")

ROOT = Path(__file__).resolve().parents[2]


def load_tuning():
    spec = importlib.util.spec_from_file_location("tuning", ROOT / "benchmarks" / "tuning.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_search_freezes_its_best_validation_trial_and_resumes_finished(tmp_path):
    tuning = load_tuning()
    argv = ["--algos", "ppo", "--trials", "2", "--levels", "AgentGym/CustomerSupport-L0-v1", "--steps", "512",
            "--episodes", "4", "--storage", str(tmp_path / "ray"), "--out", str(tmp_path / "tuned"), "--concurrent", "1"]
    assert tuning.main(argv) == 0
    record = json.loads((tmp_path / "tuned" / "ppo.json").read_text())
    assert record["trials"] == 2 and record["levels"] == ["AgentGym/CustomerSupport-L0-v1"]
    assert set(tuning.search_spaces()["ppo"]) <= set(record["settings"]) and record["settings"]["observation"] == "features"
    assert 0.0 <= record["validation_success"] <= 1.0
    assert record["validation_success"] == record["per_level"]["AgentGym/CustomerSupport-L0-v1"]
    trials = (tmp_path / "tuned" / "ppo_trials.csv").read_text().splitlines()
    assert len(trials) == 3  # the header and both trials
    runs = sorted((tmp_path / "ray" / "ppo_runs").iterdir())
    assert len(runs) == 2
    assert tuning.main(argv) == 0  # restored: both trials finished, none runs again
    assert sorted((tmp_path / "ray" / "ppo_runs").iterdir()) == runs
    assert json.loads((tmp_path / "tuned" / "ppo.json").read_text())["settings"] == record["settings"]
    assert plan.frozen_settings("ppo", tmp_path / "tuned") == record["settings"]  # what the table trains with


def test_the_table_refuses_to_train_an_algorithm_never_tuned(tmp_path, monkeypatch):
    monkeypatch.setattr(plan, "TUNED", tmp_path)
    assert plan.frozen_settings("sb3-dqn") is None
    with pytest.raises(FileNotFoundError, match="run python benchmarks/tuning.py --algos sb3-dqn"):
        plan.settings("math", "sb3-dqn", tuned=True)


def test_a_search_resumed_with_another_definition_is_refused(tmp_path):
    tuning = load_tuning()
    definition = {"trials": 16, "levels": ["AgentGym/CustomerSupport-L2-v1"], "env_steps": 50000, "episodes": 50,
                  "search_seed": tuning.SEARCH_SEED}
    tuning.check_same_search(tmp_path, "ppo", definition)
    tuning.check_same_search(tmp_path, "ppo", definition)  # the same search resumes
    with pytest.raises(SystemExit, match="other env_steps"):
        tuning.check_same_search(tmp_path, "ppo", {**definition, "env_steps": 20000})
    tuning.check_same_search(tmp_path, "bc", {**definition, "env_steps": 20000})  # another algorithm's own search
