"""The equal-tuning search on Ray Tune: every trial trains on the tuning levels and is scored on
their validation split; the best settings are frozen, and a finished search is not run again."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from benchmarks.suite_lib import plan

pytest.importorskip("optuna")

ROOT = Path(__file__).resolve().parents[2]


def load_tuning():
    spec = importlib.util.spec_from_file_location("tuning", ROOT / "benchmarks" / "tuning.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def search_argv(tmp_path: Path, storage: str = "ray") -> list[str]:
    """A two-trial search of our PPO on one level, its Ray folder ``tmp_path/storage``, its record in ``tmp_path/tuned``."""
    return ["--algos", "ppo", "--trials", "2", "--levels", "AgentGym/CustomerSupport-L0-v1", "--steps", "512",
            "--episodes", "4", "--storage", str(tmp_path / storage), "--out", str(tmp_path / "tuned"), "--concurrent", "1"]


@pytest.fixture(scope="module")
def finished_search(tmp_path_factory) -> Path:
    """The folder of one finished search (:func:`search_argv`): a test that changes it works on a copy."""
    tmp_path = tmp_path_factory.mktemp("search")
    assert load_tuning().main(search_argv(tmp_path)) == 0
    return tmp_path


def test_a_search_freezes_its_best_validation_trial_and_resumes_finished(finished_search, tmp_path):
    tuning = load_tuning()
    shutil.copytree(finished_search, tmp_path, dirs_exist_ok=True)
    argv = search_argv(tmp_path)
    record = json.loads((tmp_path / "tuned" / "ppo.json").read_text())
    assert record["trials"] == 2 and record["levels"] == ["AgentGym/CustomerSupport-L0-v1"]
    assert set(tuning.search_spaces()["ppo"]) <= set(record["settings"]) and record["settings"]["observation"] == "features"
    assert 0.0 <= record["validation_success"] <= 1.0
    assert record["validation_success"] == record["per_level"]["AgentGym/CustomerSupport-L0-v1"]
    trials = (tmp_path / "tuned" / "ppo_trials.csv").read_text().splitlines()
    assert len(trials) == 3  # the header and both trials
    runs = sorted((tmp_path / "ray" / "ppo_runs").iterdir())
    assert len(runs) == 2
    marker = json.loads((tmp_path / "ray" / "ppo.search.json").read_text())
    assert marker["fixed"] == {"observation": "features"} and set(marker["search_space"]) == set(tuning.search_spaces()["ppo"])
    assert tuning.main(argv) == 0  # restored: both trials finished, none runs again
    assert sorted((tmp_path / "ray" / "ppo_runs").iterdir()) == runs
    assert json.loads((tmp_path / "tuned" / "ppo.json").read_text())["settings"] == record["settings"]
    assert plan.frozen_settings("ppo", tmp_path / "tuned") == record["settings"]  # what the table trains with


def test_a_search_whose_ray_folder_is_lost_resumes_from_its_journal_running_only_new_missing_trials(finished_search,
                                                                                                   tmp_path):
    tuning = load_tuning()
    shutil.copytree(finished_search / "tuned", tmp_path / "tuned")
    journal = tmp_path / "tuned" / "ppo_trials.csv"
    first, _ = tuning.read_trials(tmp_path / "tuned", "ppo")
    assert first["commit"] == tuning.commit() and first["trial_id"] and first["cpu_s"] > 0
    # the machine is gone with Ray's folder and the search's last trial, before it scored a level; the journals were kept
    (tmp_path / "tuned" / "ppo.json").unlink()
    for kept in (journal, tmp_path / "tuned" / "ppo_levels.csv"):
        kept.write_text("\n".join(kept.read_text().splitlines()[:2]) + "\n")
    assert tuning.main(search_argv(tmp_path, "ray-after")) == 0
    assert len(list((tmp_path / "ray-after" / "ppo_runs").iterdir())) == 1  # only the missing trial ran
    rows = tuning.read_trials(tmp_path / "tuned", "ppo")
    assert len(rows) == 2 and rows[0] == first and rows[1]["trial_id"] != first["trial_id"]
    assert tuning.searched(rows[1]) != tuning.searched(first)  # new settings, not the first sitting's draw again
    record = json.loads((tmp_path / "tuned" / "ppo.json").read_text())
    best = max(rows, key=lambda row: row["validation_success"])
    assert record["trials"] == 2 and record["settings"] == {"observation": "features", **tuning.searched(best)}


def test_a_trial_cut_short_with_its_machine_runs_first_next_sitting_training_only_the_levels_it_had_not_scored(tmp_path):
    tuning = load_tuning()
    scored, missing = "AgentGym/CustomerSupport-L0-v1", "AgentGym/Math-L0-v1"
    settings = {"learning_rate": 0.003, "num_steps": 64, "num_minibatches": 2, "update_epochs": 2, "ent_coef": 0.01,
                "gamma": 0.99, "gae_lambda": 0.95, "clip_coef": 0.2}
    assert set(settings) == set(tuning.search_spaces()["ppo"])
    # an earlier sitting's trial scored its first level, then the machine was gone
    tuning.record_row(tuning.levels_path(tmp_path / "tuned", "ppo"),
                      {"trial_id": "gone", "commit": "c", "level": scored, "score": 0.25, "cpu_s": 100.0,
                       **tuning.settings_columns(settings)}, key=("trial_id", "level"))
    argv = ["--algos", "ppo", "--trials", "1", "--levels", scored, missing, "--steps", "512", "--episodes", "4",
            "--storage", str(tmp_path / "ray"), "--out", str(tmp_path / "tuned"), "--concurrent", "1"]
    assert tuning.main(argv) == 0
    [row] = tuning.read_trials(tmp_path / "tuned", "ppo")
    assert tuning.searched(row) == settings and row["trial_id"] != "gone"
    assert row[scored] == 0.25 and row["validation_success"] == (0.25 + row[missing]) / 2
    [trial_runs] = (tmp_path / "ray" / "ppo_runs").iterdir()
    assert [run.name for run in trial_runs.iterdir()] == ["Math-L0-v1__ppo__seed0"]  # the scored level was not trained
    levels = tuning.read_rows(tuning.levels_path(tmp_path / "tuned", "ppo"))
    assert [(level["trial_id"], level["level"]) for level in levels] == [("gone", scored), (row["trial_id"], missing)]
    assert row["cpu_s"] == round(100.0 + levels[1]["cpu_s"], 1)  # summed over both sittings


def test_a_search_with_a_level_that_cannot_be_made_stops_before_any_trial(tmp_path):
    argv = ["--algos", "ppo", "--levels", "AgentGym/CustomerSupport-L0-v1", "AgentGym/NoSuchLevel-v1",
            "--storage", str(tmp_path / "ray"), "--out", str(tmp_path / "tuned")]
    with pytest.raises(SystemExit, match="tuning level AgentGym/NoSuchLevel-v1 cannot be made: .*NoSuchLevel"):
        load_tuning().main(argv)
    assert not (tmp_path / "ray").exists() and not (tmp_path / "tuned").exists()


def test_a_journal_keeps_one_row_per_trial_and_reads_its_values_back(tmp_path):
    tuning = load_tuning()
    row = {"trial_id": "a1", "commit": "abc", "settings/learning_rate": 0.003, "settings/num_steps": 64,
           "settings/observation": "features", "validation_success": 0.5}
    tuning.record_trial(tmp_path, "ppo", row)
    tuning.record_trial(tmp_path, "ppo", {**row, "validation_success": 0.25})  # the same trial, run again
    tuning.record_trial(tmp_path, "ppo", {**row, "trial_id": "b2"})
    rows = tuning.read_trials(tmp_path, "ppo")
    assert rows == [row, {**row, "trial_id": "b2"}]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ppo_trials.csv"]


def test_the_page_counts_each_algorithms_recorded_trials_and_the_hours_left_at_their_pace(tmp_path):
    tuning = load_tuning()
    for trial, seconds in (("a", 600.0), ("b", 1200.0)):
        tuning.record_trial(tmp_path, "sb3-a2c", {"trial_id": trial, "commit": "c", "cpu_s": seconds,
                                                  "settings/learning_rate": 0.001, "validation_success": 0.5})
    tuning.record_trial(tmp_path, "sb3-dqn", {"trial_id": "c", "commit": "c", "settings/learning_rate": 0.001,
                                              "validation_success": 0.1})  # written before trials were timed
    text = plan.tuning_progress(["sb3-a2c", "sb3-dqn", "bc"], tmp_path)
    left = (14 + 15 + 16) * 900 / 3600  # trials left, at the timed trials' mean of 15 minutes
    assert text == (f"trials recorded: sb3-a2c 2 of 16, sb3-dqn 1 of 16, bc 0 of 16; about {left:.0f} CPU hours of "
                    "trials left (each algorithm's at the mean of its own timed trials, else at the mean of all 2 timed "
                    "trials: 15 CPU minutes)")
    assert plan.tuning_progress(["bc"], tmp_path / "empty") == "trials recorded: bc 0 of 16"


def test_an_algorithm_without_timed_trials_is_paced_on_every_algorithms_not_on_the_short_ones_asked_about(tmp_path):
    tuning = load_tuning()
    for trial, seconds in (("m1", 3600.0), ("m2", 3600.0)):  # a tuned algorithm's long trials
        tuning.record_trial(tmp_path, "sb3-maskable-ppo", {"trial_id": trial, "commit": "c", "cpu_s": seconds,
                                                           "settings/learning_rate": 0.001, "validation_success": 0.7})
    tuning.record_trial(tmp_path, "sb3-ppo", {"trial_id": "p1", "commit": "c", "cpu_s": 300.0,
                                              "settings/learning_rate": 0.001, "validation_success": 0.0})
    text = plan.tuning_progress(["sb3-ppo", "bc"], tmp_path)
    left = (15 * 300 + 16 * 2500) / 3600  # sb3-ppo at its own 5 minutes, bc at the mean of all three trials
    assert f"about {left:.0f} CPU hours of trials left" in text and "all 3 timed trials: 42 CPU minutes" in text


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


def test_a_search_resumed_with_another_space_or_fixed_settings_is_refused(tmp_path):
    tuning = load_tuning()
    spaces = tuning.search_spaces()
    definition = {"trials": 16, "levels": ["AgentGym/CustomerSupport-L2-v1"], "env_steps": 50000, "episodes": 50,
                  "search_seed": tuning.SEARCH_SEED, "search_space": tuning.described(spaces["sb3-ppo"]), "fixed": {}}
    tuning.check_same_search(tmp_path, "sb3-ppo", definition)
    again = {**definition, "search_space": tuning.described(tuning.search_spaces()["sb3-ppo"])}  # new domain objects
    tuning.check_same_search(tmp_path, "sb3-ppo", again)
    with pytest.raises(SystemExit, match="other search_space"):
        tuning.check_same_search(tmp_path, "sb3-ppo", {**definition, "search_space": tuning.described(spaces["sb3-a2c"])})
    with pytest.raises(SystemExit, match="other fixed"):
        tuning.check_same_search(tmp_path, "sb3-ppo", {**definition, "fixed": {"observation": "text"}})


def test_a_search_space_is_recorded_by_its_domains_bounds_and_samplers_not_their_addresses():
    tuning = load_tuning()
    text = json.dumps(tuning.described(tuning.search_spaces()["ppo"]), sort_keys=True)
    assert " at 0x" not in text
    learning_rate = json.loads(text)["learning_rate"]
    assert learning_rate == {"class": "Float", "lower": 1e-4, "upper": 1e-2, "sampler": {"class": "_LogUniform"}}
    assert json.loads(text)["num_steps"]["categories"] == [32, 64, 128, 256]


def test_a_marker_written_before_the_space_was_recorded_still_resumes(tmp_path):
    tuning = load_tuning()
    old = {"trials": 16, "levels": ["AgentGym/CustomerSupport-L2-v1"], "env_steps": 50000, "episodes": 50,
           "search_seed": tuning.SEARCH_SEED}
    (tmp_path / "ppo.search.json").write_text(json.dumps(old))
    full = {**old, "search_space": tuning.described(tuning.search_spaces()["ppo"]), "fixed": tuning.FIXED["ppo"]}
    tuning.check_same_search(tmp_path, "ppo", full)  # only the keys the marker holds are compared
    assert json.loads((tmp_path / "ppo.search.json").read_text()) == old  # and it is left as it was
    with pytest.raises(SystemExit, match="other episodes"):
        tuning.check_same_search(tmp_path, "ppo", {**full, "episodes": 20})
    with pytest.raises(SystemExit, match="other search_seed"):  # a key the marker holds and the definition lacks
        tuning.check_same_search(tmp_path, "ppo", {k: v for k, v in full.items() if k != "search_seed"})


def test_import_takes_one_module_a_flag_so_the_positional_algorithm_is_kept():
    from benchmarks import your_algorithm

    args = load_tuning().build_parser().parse_args(["--algos", "x", "--import", "a.plugins", "--import", "b.plugins"])
    assert args.imports == ["a.plugins", "b.plugins"]
    args = your_algorithm.build_parser().parse_args(["--import", "a.plugins", "my-algo", "--import", "b.plugins"])
    assert (args.algo, args.imports) == ("my-algo", ["a.plugins", "b.plugins"])


def test_the_commit_names_a_tree_that_differs_from_it_dirty(tmp_path, monkeypatch):
    import subprocess

    tuning = load_tuning()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "f.txt").write_text("a")
    subprocess.run([*git, "add", "f.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    monkeypatch.setattr(tuning, "ROOT", tmp_path)
    head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert tuning.commit() == head
    (tmp_path / "f.txt").write_text("b")
    assert tuning.commit() == f"{head}-dirty"
    monkeypatch.setattr(tuning, "ROOT", tmp_path / "nowhere")
    assert tuning.commit() == "unknown"
