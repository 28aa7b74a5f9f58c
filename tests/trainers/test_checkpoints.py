"""Checkpoints: atomic writes, clear errors for bad files, and exact resume after an interruption."""

from __future__ import annotations

import pytest
import torch

from trainers import common, grpo, ppo


class Interrupted(Exception):
    pass


def interrupt_after_first_checkpoint(monkeypatch):
    """Make the run die right after its first checkpoint is written (as a killed process would)."""
    original = common.save_checkpoint

    def save_then_die(path, payload):
        original(path, payload)
        raise Interrupted

    monkeypatch.setattr(common, "save_checkpoint", save_then_die)


def assert_same_state(a: dict, b: dict) -> None:
    assert a["global_step"] == b["global_step"]
    for name, tensor in a["policy"].items():
        torch.testing.assert_close(b["policy"][name], tensor, rtol=0, atol=0)


@pytest.mark.parametrize("augmentation", [{}, {"task_token_swap": 0.2, "task_token_dropout": 0.2}], ids=["plain", "augmented"])
def test_resumed_ppo_run_reproduces_the_uninterrupted_run(tmp_path, tiny_ppo, monkeypatch, augmentation):
    assert_ppo_resume_reproduces(tmp_path, monkeypatch, dict(total_steps=96, **tiny_ppo, **augmentation))


def test_resumed_ppo_run_keeps_the_kl_reference_of_its_starting_checkpoint(tmp_path, tiny_ppo, monkeypatch):
    start = tmp_path / "start" / "checkpoint.pt"  # trained weights, unlike the seeded initial ones
    ppo.train(ppo.Config(total_steps=64, run_dir=str(start.parent), **{**tiny_ppo, "learning_rate": 0.01}))
    assert_ppo_resume_reproduces(tmp_path, monkeypatch, dict(total_steps=96, kl_coef=1.0, init_checkpoint=str(start), **tiny_ppo))


def assert_ppo_resume_reproduces(tmp_path, monkeypatch, config: dict) -> None:
    """A PPO run killed after its first checkpoint, then resumed, ends as the uninterrupted run."""
    full = ppo.train(ppo.Config(run_dir=str(tmp_path / "full"), **config))
    with monkeypatch.context() as patch:
        interrupt_after_first_checkpoint(patch)
        with pytest.raises(Interrupted):
            ppo.train(ppo.Config(run_dir=str(tmp_path / "cut"), **config))
    assert common.load_checkpoint(tmp_path / "cut" / "checkpoint.pt")["global_step"] == 32
    resumed = ppo.train(ppo.Config(run_dir=str(tmp_path / "cut"), **config), resume=True)
    assert_same_state(common.load_checkpoint(tmp_path / "full" / "checkpoint.pt"),
                      common.load_checkpoint(tmp_path / "cut" / "checkpoint.pt"))
    assert resumed.test_metrics == full.test_metrics and resumed.curve == full.curve


def test_resumed_grpo_run_reproduces_the_uninterrupted_run(tmp_path, monkeypatch):
    config = dict(total_steps=40, group_size=2, groups_per_update=2, embed_dim=16, layers=1, heads=2, ff_dim=32,
                  eval_every_steps=0, eval_episodes=1, progress=False, checkpoint_every=1)
    grpo.train(grpo.Config(run_dir=str(tmp_path / "full"), **config))
    with monkeypatch.context() as patch:
        interrupt_after_first_checkpoint(patch)
        with pytest.raises(Interrupted):
            grpo.train(grpo.Config(run_dir=str(tmp_path / "cut"), **config))
    grpo.train(grpo.Config(run_dir=str(tmp_path / "cut"), **config), resume=True)
    assert_same_state(common.load_checkpoint(tmp_path / "full" / "checkpoint.pt"),
                      common.load_checkpoint(tmp_path / "cut" / "checkpoint.pt"))


def test_a_failed_checkpoint_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    common.save_checkpoint(path, {"policy_spec": {}, "policy": {"w": torch.ones(2)}})

    def broken_save(obj, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError):
        common.save_checkpoint(path, {"policy_spec": {}, "policy": {"w": torch.zeros(2)}})
    monkeypatch.undo()
    torch.testing.assert_close(common.load_checkpoint(path)["policy"]["w"], torch.ones(2))
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"], "no temporary file may be left behind"


def test_a_corrupt_checkpoint_gives_a_clear_error(tmp_path):
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"\x00not a checkpoint")
    with pytest.raises(common.CheckpointError, match="not a readable checkpoint"):
        common.load_checkpoint(path)
    torch.save({"something": 1}, path)
    with pytest.raises(common.CheckpointError, match="not an agentgym trainer checkpoint"):
        common.load_checkpoint(path)
    with pytest.raises(common.CheckpointError, match="no checkpoint at"):
        common.load_checkpoint(tmp_path / "missing.pt")
