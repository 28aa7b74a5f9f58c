"""``agentgym train`` and ``agentgym eval <checkpoint>`` end to end on a tiny budget."""

from __future__ import annotations

import pytest

from agentgym_envs.cli import main

TINY = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "embed_dim=16", "--set", "layers=1", "--set", "heads=2",
        "--set", "ff_dim=32", "--set", "eval_every_steps=0", "--no-progress", "--eval-episodes", "2"]


def test_train_then_eval_the_checkpoint_on_the_test_split(tmp_path, capsys):
    assert main(["train", "customer_support", "--total-steps", "32", "--seed", "3", "--device", "cpu",
                 "--run-dir", str(tmp_path), *TINY]) == 0
    out = capsys.readouterr().out
    assert "success criteria" in out and "| test" in out
    run_dir = tmp_path / "CustomerSupport-v1__ppo__seed3"
    for target in (run_dir / "checkpoint.pt", run_dir):  # the checkpoint, or its run directory
        assert main(["eval", str(target), "--split", "test", "--episodes", "2"]) == 0
        out = capsys.readouterr().out
        assert "split=test" in out and "tool_reliability" in out


def test_eval_of_a_checkpoint_writes_its_episodes_and_refuses_what_it_would_ignore(tmp_path, capsys):
    assert main(["train", "customer_support", "--total-steps", "32", "--run-dir", str(tmp_path), *TINY]) == 0
    run_dir, output = tmp_path / "CustomerSupport-v1__ppo__seed0", tmp_path / "episodes.jsonl"
    assert main(["eval", str(run_dir), "--episodes", "2", "--trials", "2", "--output", str(output), "--no-store"]) == 0
    assert len(output.read_text().splitlines()) == 1 + 4  # the config line, then 2 tasks x 2 trials
    assert main(["eval", str(run_dir), "--episodes", "3", "--trials", "2", "--output", str(output), "--resume", "--no-store"]) == 0
    assert len(output.read_text().splitlines()) == 1 + 6  # the third task's two trials added
    capsys.readouterr()
    assert main(["eval", str(run_dir), "--max-turns", "3", "--policy", "random", "--num-workers", "2"]) == 2
    assert "--policy, --max-turns, --num-workers apply to reference policies and language models only" in capsys.readouterr().err


def test_train_resume_continues_an_existing_run(tmp_path, capsys):
    args = ["train", "customer_support", "--total-steps", "32", "--run-dir", str(tmp_path), *TINY]
    assert main(args) == 0
    assert main([*args, "--resume"]) == 0
    assert "resumed from" in capsys.readouterr().out


def test_resuming_with_other_settings_is_a_clear_error_and_keeps_the_run(tmp_path, capsys):
    args = ["train", "customer_support", "--total-steps", "32", "--run-dir", str(tmp_path), *TINY]
    assert main(args) == 0
    run_dir = tmp_path / "CustomerSupport-v1__ppo__seed0"
    before = (run_dir / "checkpoint.pt").read_bytes()
    assert main([*args, "--set", "ent_coef=0.03", "--resume"]) == 2
    error = capsys.readouterr().err
    assert "holds a run of other settings" in error and "ent_coef" in error
    assert (run_dir / "checkpoint.pt").read_bytes() == before and '"ent_coef"' not in (run_dir / "run.json").read_text()
    assert main([*args, "--total-steps", "64", "--resume"]) == 0, "a larger budget resumes"


def test_eval_of_a_corrupt_checkpoint_is_a_clear_error(tmp_path, capsys):
    assert main(["train", "customer_support", "--algo", "expert", "--run-dir", str(tmp_path), "--eval-episodes", "1"]) == 0
    bad = tmp_path / "CustomerSupport-v1__ppo__seed0"
    bad.mkdir()
    (bad / "run.json").write_text('{"algo": "ppo", "env_id": "AgentGym/CustomerSupport-v1"}')
    (bad / "checkpoint.pt").write_bytes(b"garbage")
    assert main(["eval", str(bad / "checkpoint.pt")]) == 2
    assert "not a readable checkpoint" in capsys.readouterr().err


def test_unknown_algorithm_and_config_field_are_clear_errors(tmp_path, capsys):
    assert main(["train", "customer_support", "--algo", "nope", "--run-dir", str(tmp_path)]) == 2
    assert "unknown algorithm" in capsys.readouterr().err
    assert main(["train", "customer_support", "--set", "no_such_field=1", "--run-dir", str(tmp_path)]) == 2
    assert "no_such_field" in capsys.readouterr().err


def test_a_setting_of_the_wrong_type_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    # JSON spells a bool false: Python's False is the string "False", which would read as true
    assert main(["train", "customer_support", "--set", "anneal_lr=False", "--run-dir", str(tmp_path)]) == 2
    assert "ppo setting anneal_lr takes true or false, got 'False' (str)" in capsys.readouterr().err
    assert main(["train", "customer_support", "--set", "num_envs=2.5", "--run-dir", str(tmp_path)]) == 2
    assert "ppo setting num_envs takes an integer, got 2.5 (float)" in capsys.readouterr().err
    assert main(["train", "customer_support", "--set", "progress=no", "--run-dir", str(tmp_path)]) == 2
    assert "setting progress takes true or false" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_settings_of_the_fields_types_pass_the_check():
    from trainers.ppo import Config
    from trainers.run import check_settings

    check_settings("ppo", Config, {"anneal_lr": False, "learning_rate": 1, "target_kl": None, "num_envs": 4,
                                   "observation": "features"})
    with pytest.raises(ValueError, match="ppo setting num_envs takes an integer, got True"):
        check_settings("ppo", Config, {"num_envs": True})
    with pytest.raises(ValueError, match="ppo setting target_kl takes a number or null, got 'x'"):
        check_settings("ppo", Config, {"target_kl": "x"})


def test_every_algorithms_defaults_pass_its_own_settings_check():
    from dataclasses import MISSING, fields

    from trainers.lifecycle import ALGORITHMS
    from trainers.run import check_settings

    for name, entry in ALGORITHMS.items():
        config = entry.config_class()
        if config is not None:
            check_settings(name, config, {f.name: f.default for f in fields(config) if f.default is not MISSING})


def test_eval_of_reference_policies_still_works(capsys):
    assert main(["eval", "customer_support", "--policy", "expert", "--episodes", "3"]) == 0
    assert "expert" in capsys.readouterr().out


def test_a_misspelt_setting_loses_nothing_of_an_earlier_run(tmp_path, capsys):
    assert main(["train", "customer_support", "--algo", "expert", "--run-dir", str(tmp_path), "--eval-episodes", "1"]) == 0
    run_dir = tmp_path / "CustomerSupport-v1__expert__seed0"
    before = sorted(path.name for path in run_dir.iterdir())
    assert main(["train", "customer_support", "--algo", "expert", "--run-dir", str(tmp_path), "--set", "lr=1"]) == 2
    assert "unknown expert setting(s) ['lr']" in capsys.readouterr().err
    assert sorted(path.name for path in run_dir.iterdir()) == before
