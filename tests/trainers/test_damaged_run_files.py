"""A resumed run refuses, before it trains and naming the file, a run directory whose files are
damaged or whose checkpoint is gone; what the directory held is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainers.lifecycle import load_trained_policy
from trainers.run import CheckpointError, RunFileError


@pytest.fixture
def finished(train_tiny, tiny_ppo):
    """A finished 32-step PPO run's directory, and ``resume(**overrides)``: the same run resumed to 64 steps."""
    run_dir = Path(train_tiny("ppo", 32, **tiny_ppo).run_dir)
    return run_dir, lambda **overrides: train_tiny("ppo", 64, resume=True, **{**tiny_ppo, **overrides})


def test_resuming_a_finished_run_whose_checkpoint_is_gone_is_refused_and_keeps_its_results(finished):
    run_dir, resume = finished
    (run_dir / "checkpoint.pt").unlink()
    result = (run_dir / "result.json").read_bytes()
    with pytest.raises(RunFileError, match=r"holds a finished run \(result.json\) but no checkpoint.pt to resume from"):
        resume()
    assert (run_dir / "result.json").read_bytes() == result


def test_a_damaged_run_json_beside_a_checkpoint_refuses_the_resume_instead_of_skipping_its_settings_check(finished):
    run_dir, resume = finished
    (run_dir / "run.json").write_text((run_dir / "run.json").read_text()[:30])
    with pytest.raises(RunFileError, match=r"run.json is unreadable"):
        resume(learning_rate=0.5)


def test_a_damaged_run_json_beside_any_algorithms_checkpoint_refuses_the_resume(train_tiny):
    run_dir = Path(train_tiny("expert", 0).run_dir)  # a reference policy's checkpoint: policy.json
    (run_dir / "run.json").write_text("{")
    with pytest.raises(RunFileError, match=r"run.json is unreadable"):
        train_tiny("expert", 0, resume=True)


@pytest.mark.parametrize(("name", "text"), [("wall.json", '{"tra'), ("wall.json", "{}"), ("train_curve.json", "[[1"),
                                            ("train_curve.json", '[["a", 1]]'), ("train_curve.json", "{}")])
def test_a_damaged_timing_or_curve_file_fails_the_resume_before_it_trains_naming_the_file(finished, name, text):
    run_dir, resume = finished
    (run_dir / name).write_text(text)
    checkpoint = (run_dir / "checkpoint.pt").read_bytes()
    with pytest.raises(RunFileError, match=name):
        resume()
    assert (run_dir / "checkpoint.pt").read_bytes() == checkpoint


@pytest.mark.parametrize("content", [b"[]", b"{}", b"\xff\xfe{"])
def test_a_run_json_that_names_no_algorithm_is_a_clear_checkpoint_error(finished, content):
    run_dir, _ = finished
    (run_dir / "run.json").write_bytes(content)
    with pytest.raises(CheckpointError, match="run.json"):
        load_trained_policy(run_dir / "checkpoint.pt", "cpu")
