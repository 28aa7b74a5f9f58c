"""The evaluation protocol every algorithm shares through the lifecycle: learning-curve points on
one env-step grid (``curve_every``), the same early-stopping rule (``early_stop``), the final
evaluation's episodes kept per split, and seconds of training and evaluation summed over sittings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainers.lifecycle import episodes_path

SB3_TINY = dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1)


@pytest.mark.parametrize("algo", ["ppo", "sb3-ppo"])
def test_a_run_stops_once_its_curve_held_the_early_stop_value_for_two_points_on_the_shared_grid(train_tiny, tiny_ppo, algo):
    # CartPole has no success metric: its curve is the mean return, always above 1 (the rule's largest value)
    settings = {**tiny_ppo, "reward_scale": 1.0} if algo == "ppo" else SB3_TINY
    result = train_tiny(algo, 1024, env="CartPole-v1", curve_every=64, curve_episodes=1, early_stop=1.0, **settings)
    assert [step for step, _ in result.curve] == [64, 128]
    # SB3 stops at its first step after the point: one step of its 2 envs more
    assert result.total_steps == (128 if algo == "ppo" else 128 + SB3_TINY["n_envs"]) and result.test_metrics


def test_an_early_stopped_run_stays_stopped_when_resumed_and_adds_its_sitting(train_tiny, tiny_ppo):
    protocol = dict(curve_every=64, curve_episodes=1, early_stop=1.0, reward_scale=1.0, **tiny_ppo)
    first = train_tiny("ppo", 1024, env="CartPole-v1", **protocol)
    walls = json.loads((Path(first.run_dir) / "wall.json").read_text())
    assert walls["sittings"] == 1 and first.wall_train_s == walls["train_s"] > 0 and first.wall_eval_s > 0
    again = train_tiny("ppo", 1024, env="CartPole-v1", resume=True, **protocol)
    assert again.total_steps == 128 and again.curve == first.curve
    assert again.wall_train_s > first.wall_train_s and again.wall_eval_s > first.wall_eval_s
    assert json.loads((Path(again.run_dir) / "wall.json").read_text())["sittings"] == 2


def test_a_sitting_killed_outright_counts_its_seconds_up_to_its_last_checkpoint(train_tiny, tiny_ppo, monkeypatch):
    from trainers import checkpoints, lifecycle

    class Killed(Exception):
        pass

    protocol = dict(reward_scale=1.0, **tiny_ppo)
    marked = lifecycle.mark_sitting

    def mark_then_die(*args):  # killed right after the first checkpoint
        marked(*args)
        raise Killed

    with monkeypatch.context() as patch:  # killed outright: no ``finally`` closes the sitting
        patch.setattr(lifecycle, "mark_sitting", mark_then_die)
        patch.setattr(lifecycle, "add_sitting", lambda *args: {})
        with pytest.raises(Killed):
            train_tiny("ppo", 96, env="CartPole-v1", **protocol)
    resumed = train_tiny("ppo", 96, env="CartPole-v1", resume=True, **protocol)
    walls = json.loads((Path(resumed.run_dir) / "wall.json").read_text())
    trained = checkpoints.load(Path(resumed.run_dir) / "checkpoint.pt")["train_seconds"]  # both sittings' training
    assert walls["sittings"] == 2 and "open_train_s" not in walls
    assert resumed.wall_train_s == walls["train_s"] >= trained > 0


@pytest.mark.parametrize(("env", "split"), [("AgentGym/CustomerSupport-L0-v1", "validation"),
                                           ("AgentGym/CustomerSupport-v0", "test")])  # -v0 has no validation split
def test_the_curve_reads_validation_where_there_is_one_and_the_final_evaluation_keeps_every_episode(
        train_tiny, tiny_ppo, env, split):
    result = train_tiny("ppo", 64, env=env, eval_episodes=3, **tiny_ppo)
    assert result.curve_split == split and len(result.curve) == 2 and result.curve[-1][0] == 64
    events = EventAccumulator(result.run_dir)
    events.Reload()
    assert f"eval/{split}_success" in events.Tags()["scalars"]
    for split in ("train", "test"):
        config, *episodes = episodes_path(result.run_dir, split).read_text().splitlines()
        assert json.loads(config)["config"]["split"] == split and len(episodes) == 3
        assert all(json.loads(line)["task_id"] and json.loads(line)["unit_id"] for line in episodes)


@pytest.mark.parametrize("setting", [{"curve_every": 0}, {"curve_episodes": 2.5}, {"early_stop": 1.5},
                                     {"early_stop": True}])
def test_a_bad_curve_setting_is_a_clear_error(train_tiny, tiny_ppo, setting):
    name, = setting
    with pytest.raises(ValueError, match=f"setting {name} takes"):
        train_tiny("ppo", 64, **{**tiny_ppo, **setting})


def test_early_stopping_on_an_env_without_a_validation_split_is_refused(train_tiny, tiny_ppo):
    with pytest.raises(ValueError, match="has no validation split"):
        train_tiny("ppo", 64, env="AgentGym/CustomerSupport-v0", early_stop=0.9, **tiny_ppo)
