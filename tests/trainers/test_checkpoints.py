"""Checkpoints: atomic writes with ordinary permissions, clear errors for bad files, and exact
resume after an interruption."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from trainers import checkpoints
from trainers.lifecycle import resumes_exactly
from trainers.run import CheckpointError, run_dir_for


class Interrupted(Exception):
    pass


def interrupt_after_first_checkpoint(monkeypatch):
    """Make the run die right after its first checkpoint is written (as a killed process would)."""
    original = checkpoints.save

    def save_then_die(path, payload):
        original(path, payload)
        raise Interrupted

    monkeypatch.setattr(checkpoints, "save", save_then_die)


def assert_same_state(a: dict, b: dict) -> None:
    assert a["global_step"] == b["global_step"]
    for name, tensor in a["policy"].items():
        torch.testing.assert_close(b["policy"][name], tensor, rtol=0, atol=0)


def assert_resume_reproduces(train_tiny, tmp_path: Path, monkeypatch, algo: str, total_steps: int, **overrides) -> None:
    """A run killed after its first checkpoint, then resumed, ends as the uninterrupted run."""
    full = train_tiny(algo, total_steps, root=tmp_path / "full", **overrides)
    with monkeypatch.context() as patch:
        interrupt_after_first_checkpoint(patch)
        with pytest.raises(Interrupted):
            train_tiny(algo, total_steps, root=tmp_path / "cut", **overrides)
    cut = tmp_path / "cut" / Path(full.run_dir).name / "checkpoint.pt"
    assert checkpoints.load(cut)["global_step"] < full.total_steps
    resumed = train_tiny(algo, total_steps, root=tmp_path / "cut", resume=True, **overrides)
    assert_same_state(checkpoints.load(Path(full.run_dir) / "checkpoint.pt"), checkpoints.load(cut))
    assert resumed.test_metrics == full.test_metrics and resumed.curve == full.curve


@pytest.mark.parametrize("setting", [{}, {"task_token_swap": 0.2, "task_token_dropout": 0.2}, {"observation": "features"}],
                         ids=["plain", "augmented", "features"])
def test_resumed_ppo_run_reproduces_the_uninterrupted_run(train_tiny, tmp_path, tiny_ppo, monkeypatch, setting):
    assert_resume_reproduces(train_tiny, tmp_path, monkeypatch, "ppo", 96, **tiny_ppo, **setting)


def test_resumed_ppo_run_keeps_its_kl_reference(train_tiny, tmp_path, tiny_ppo, monkeypatch):
    assert_resume_reproduces(train_tiny, tmp_path, monkeypatch, "ppo", 96, kl_coef=1.0, **{**tiny_ppo, "learning_rate": 0.01})


def test_resumed_grpo_run_reproduces_the_uninterrupted_run(train_tiny, tmp_path, monkeypatch):
    assert_resume_reproduces(train_tiny, tmp_path, monkeypatch, "grpo", 40, group_size=2, groups_per_update=2, embed_dim=16,
                             layers=1, heads=2, ff_dim=32, eval_every_steps=0, checkpoint_every=1, eval_episodes=1)


def test_a_checkpoint_whose_envs_other_code_saved_is_a_clear_error(train_tiny, tmp_path, tiny_ppo, monkeypatch):
    with monkeypatch.context() as patch:
        interrupt_after_first_checkpoint(patch)
        with pytest.raises(Interrupted):
            train_tiny("ppo", 96, root=tmp_path, **tiny_ppo)
    cut = next(tmp_path.glob("*/checkpoint.pt"))
    state = checkpoints.load(cut)
    assert state["envs"] is not None
    checkpoints.save(cut, {**state, "envs": b"cagentgym_envs.wrappers.actions\n_GoneSince\n."})  # a class since removed
    with pytest.raises(CheckpointError, match="its envs were saved by other code of agentgym.*start the run afresh"):
        train_tiny("ppo", 96, root=tmp_path, resume=True, **tiny_ppo)


def test_a_failed_checkpoint_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    checkpoints.save(path, {"policy_spec": {}, "policy": {"w": torch.ones(2)}})

    def broken_save(obj, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError):
        checkpoints.save(path, {"policy_spec": {}, "policy": {"w": torch.zeros(2)}})
    monkeypatch.undo()
    torch.testing.assert_close(checkpoints.load(path)["policy"]["w"], torch.ones(2))
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"], "no temporary file may be left behind"


def test_checkpoints_get_the_permissions_the_umask_gives_new_files(tmp_path):
    previous = os.umask(0o022)
    try:
        checkpoints.save(tmp_path / "checkpoint.pt", {"policy_spec": {}, "policy": {}})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "checkpoint.pt").stat().st_mode) == 0o644


def test_a_corrupt_checkpoint_gives_a_clear_error(tmp_path):
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"\x00not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        checkpoints.load(path)
    torch.save({"something": 1}, path)
    with pytest.raises(CheckpointError, match="not an agentgym trainer checkpoint"):
        checkpoints.load(path)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        checkpoints.load(tmp_path / "missing.pt")


def test_resuming_from_a_checkpoint_of_another_network_is_a_clear_error(train_tiny, tmp_path, tiny_ppo, monkeypatch):
    with monkeypatch.context() as patch:
        interrupt_after_first_checkpoint(patch)
        with pytest.raises(Interrupted):
            train_tiny("ppo", 96, root=tmp_path, **tiny_ppo)
    path, = tmp_path.glob("*/checkpoint.pt")
    payload = checkpoints.load(path)
    name, tensor = next(iter(payload["policy"].items()))
    payload["policy"][name] = torch.zeros(tensor.shape[0] + 1, *tensor.shape[1:])  # as an action layer of another size
    checkpoints.save(path, payload)
    with pytest.raises(CheckpointError, match="does not fit this run's network"):
        train_tiny("ppo", 96, root=tmp_path, resume=True, **tiny_ppo)


def test_a_run_resumes_exactly_only_from_a_checkpoint_that_holds_its_envs(tmp_path):
    assert resumes_exactly("ppo", tmp_path)  # nothing to resume yet
    payload = {"policy_spec": {}, "policy": {}}
    checkpoints.save(tmp_path / "checkpoint.pt", {**payload, "envs": b"pickled envs"})
    assert resumes_exactly("ppo", tmp_path)
    checkpoints.save(tmp_path / "checkpoint.pt", {**payload, "envs": None})  # subprocess envs do not pickle
    assert not resumes_exactly("ppo", tmp_path)
    checkpoints.save(tmp_path / "checkpoint.pt", payload)  # BC's: no envs to restore
    assert resumes_exactly("bc", tmp_path)
    (tmp_path / "checkpoint.pt").write_bytes(b"cut short")
    assert not resumes_exactly("ppo", tmp_path)
    assert not resumes_exactly("sb3-ppo", tmp_path)


@pytest.mark.parametrize("env", ["AgentGym/Tau2Retail-L0-v2", "AgentGym/Coding-L0-v2"], ids=["tau2", "coding"])
def test_a_resumed_run_on_tau2s_tools_or_the_coding_sandbox_reproduces_the_uninterrupted_run(
        train_tiny, tmp_path, tiny_ppo, monkeypatch, env):
    """tau2's tools are closures and the sandbox runs a server: the checkpoint still holds the envs."""
    assert_resume_reproduces(train_tiny, tmp_path, monkeypatch, "ppo", 96, env=env, observation="features", **tiny_ppo)
    assert resumes_exactly("ppo", run_dir_for(tmp_path / "cut", env, "ppo", 0))
