"""Each trainer runs a few hundred steps end to end: TensorBoard events, a checkpoint, a report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainers import bc, common, grpo, ppo
from trainers.registry import RunSpec, run

CS = "AgentGym/CustomerSupport-v0"


def scalar_tags(run_dir: Path) -> set[str]:
    events = EventAccumulator(str(run_dir))
    events.Reload()
    return set(events.Tags()["scalars"])


def scalars(run_dir: Path, tag: str) -> list[float]:
    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return [event.value for event in events.Scalars(tag)]


def test_ppo_on_customer_support_writes_events_checkpoint_and_metrics(tmp_path, tiny_ppo):
    result = ppo.train(ppo.Config(env_id=CS, total_steps=64, run_dir=str(tmp_path / "run"), **tiny_ppo))
    tags = scalar_tags(tmp_path / "run")
    for tag in ("charts/episodic_return", "charts/SPS", "losses/policy_loss", "losses/value_loss", "losses/entropy",
                "metrics/success", "metrics/tool_reliability", "metrics/tokens_used", "metrics/cost_reduction",
                "eval/test_success"):
        assert tag in tags, tag
    assert (tmp_path / "run" / "checkpoint.pt").is_file()
    assert result.total_steps == 64 and result.curve and set(result.test_metrics) >= {"success", "tool_reliability"}


def test_ppo_trains_cartpole_with_the_mlp_policy(tmp_path, tiny_ppo):
    config = ppo.Config(env_id="CartPole-v1", total_steps=256, run_dir=str(tmp_path / "cp"), reward_scale=1.0, **tiny_ppo)
    result = ppo.train(config)
    payload = common.load_checkpoint(tmp_path / "cp" / "checkpoint.pt")
    assert payload["policy_spec"]["kind"] == "mlp"
    assert "charts/episodic_return" in scalar_tags(tmp_path / "cp")
    assert result.test_metrics["return"] > 0


def test_grpo_writes_events_and_checkpoint(tmp_path):
    config = grpo.Config(total_steps=60, group_size=3, groups_per_update=2, run_dir=str(tmp_path / "g"), embed_dim=16,
                         layers=1, heads=2, ff_dim=32, eval_every_steps=30, eval_curve_episodes=2, eval_episodes=2,
                         progress=False, kl_coef=0.1, checkpoint_every=1)
    result = grpo.train(config)
    tags = scalar_tags(tmp_path / "g")
    assert {"charts/episodic_return", "charts/SPS", "losses/policy_loss", "losses/kl_to_reference",
            "metrics/success", "eval/test_success"} <= tags
    assert (tmp_path / "g" / "checkpoint.pt").is_file() and result.total_steps >= 60


def test_grpo_group_plays_one_task_in_every_rollout():
    envs = [common.make_env(CS, "train", 64, 8) for _ in range(4)]
    policy = common.new_policy(envs[0], 64, 8, grpo.Config(embed_dim=16, layers=1, heads=2, ff_dim=32).token_config())
    group = grpo.play_group(policy, envs, "train-123", seed=5, device=torch.device("cpu"))
    assert {env.unwrapped.episode.task.task_id for env in envs} == {"train-123"}
    assert all(len(r.actions) >= 1 and r.metrics for r in group)
    prompts = {tuple(r.obs[0]) for r in group}
    assert len(prompts) == 1, "every rollout of a group starts from the same observation"


def test_group_advantages_are_normalised_within_the_group():
    advantages = grpo.group_advantages(np.array([1.0, 2.0, 3.0, 6.0]))
    assert advantages.mean() == pytest.approx(0.0) and advantages.std() == pytest.approx(1.0, abs=1e-6)
    assert np.all(grpo.group_advantages(np.array([4.0, 4.0, 4.0])) == 0.0)


def test_grpo_outcome_mode_uses_the_envs_outcome_reward(tmp_path):
    config = grpo.Config(total_steps=20, group_size=2, groups_per_update=1, reward_mode="outcome", run_dir=str(tmp_path / "o"),
                         embed_dim=16, layers=1, heads=2, ff_dim=32, eval_every_steps=0, eval_episodes=1, progress=False)
    grpo.train(config)
    returns = scalars(tmp_path / "o", "charts/episodic_return")
    assert returns and all(r in (0.0, 1.0) for r in returns)


@pytest.mark.parametrize("skip", [True, False])
def test_grpo_groups_with_equal_returns_update_nothing_when_skipped(tmp_path, skip):
    # outcome returns of an untrained policy: every rollout fails, so every group is uniform
    config = grpo.Config(total_steps=40, group_size=2, groups_per_update=2, reward_mode="outcome", learning_rate=1e-2,
                         skip_uniform_groups=skip, run_dir=str(tmp_path / "u"), embed_dim=16, layers=1, heads=2,
                         ff_dim=32, eval_every_steps=0, eval_episodes=1, progress=False)
    grpo.train(config)
    assert set(scalars(tmp_path / "u", "charts/uniform_groups")) == {1.0}
    payload = common.load_checkpoint(tmp_path / "u" / "checkpoint.pt")
    unchanged = all(torch.equal(payload["policy"][name], tensor) for name, tensor in payload["reference"].items())
    assert unchanged == skip


def test_bc_loss_decreases_on_expert_data(tmp_path):
    config = bc.Config(total_steps=300, epochs=6, batch_size=64, learning_rate=5e-3, run_dir=str(tmp_path / "bc"), embed_dim=16, layers=1,
                       heads=2, ff_dim=32, eval_curve_episodes=1, eval_episodes=1, progress=False)
    bc.train(config)
    losses = scalars(tmp_path / "bc", "losses/bc_loss")
    assert len(losses) == 6 and all(b < a for a, b in zip(losses, losses[1:])) and losses[-1] < 0.7 * losses[0]
    assert common.load_checkpoint(tmp_path / "bc" / "checkpoint.pt")["policy_spec"]["kind"] == "token"


def test_ppo_starts_from_a_bc_checkpoint(tmp_path, tiny_ppo):
    net = dict(embed_dim=16, layers=1, heads=2, ff_dim=32)
    bc.train(bc.Config(total_steps=100, epochs=1, run_dir=str(tmp_path / "bc"), eval_curve_episodes=1, eval_episodes=1,
                       progress=False, **net))
    bc_weights = common.load_checkpoint(tmp_path / "bc" / "checkpoint.pt")["policy"]
    tiny_ppo.update(learning_rate=0.0, anneal_lr=False)
    ppo.train(ppo.Config(total_steps=32, run_dir=str(tmp_path / "ppo"), init_checkpoint=str(tmp_path / "bc" / "checkpoint.pt"), **tiny_ppo))
    ppo_weights = common.load_checkpoint(tmp_path / "ppo" / "checkpoint.pt")["policy"]
    for name, tensor in bc_weights.items():
        torch.testing.assert_close(ppo_weights[name], tensor)


def initial_weights(tmp_path: Path, config: dict, env_id: str = CS) -> Path:
    """A checkpoint of a PPO policy's initial weights (one update at learning rate 0)."""
    start = tmp_path / "start" / "checkpoint.pt"
    ppo.train(ppo.Config(env_id=env_id, total_steps=32, run_dir=str(start.parent), **{**config, "learning_rate": 0.0}))
    return start


@pytest.mark.parametrize("env_id", [CS, "CartPole-v1"])
def test_critic_warmup_updates_change_only_the_value_head(tmp_path, tiny_ppo, env_id):
    tiny_ppo.update(anneal_lr=False, eval_every_steps=0)
    start = initial_weights(tmp_path, tiny_ppo, env_id)
    ppo.train(ppo.Config(env_id=env_id, total_steps=64, critic_warmup_updates=2, run_dir=str(tmp_path / "warm"),
                         init_checkpoint=str(start), **tiny_ppo))
    before = common.load_checkpoint(start)["policy"]
    after = common.load_checkpoint(tmp_path / "warm" / "checkpoint.pt")["policy"]
    value_head = "value_head." if env_id == CS else "critic."
    moved = {name for name in before if not torch.equal(before[name], after[name])}
    assert moved and all(name.startswith(value_head) for name in moved)


def test_ppo_kl_penalty_holds_the_policy_near_its_starting_weights(tmp_path, tiny_ppo):
    tiny_ppo.update(anneal_lr=False, eval_every_steps=0, learning_rate=0.01)
    start = initial_weights(tmp_path, tiny_ppo)
    final_kl = {}
    for kl_coef in (0.0, 10.0):
        run_dir = tmp_path / f"kl{kl_coef}"
        ppo.train(ppo.Config(total_steps=128, kl_coef=kl_coef, init_checkpoint=str(start), run_dir=str(run_dir), **tiny_ppo))
        final_kl[kl_coef] = kl_to_start(start, run_dir / "checkpoint.pt")
    assert "losses/kl_to_reference" in scalar_tags(tmp_path / "kl10.0")
    assert 0 < final_kl[10.0] < 0.5 * final_kl[0.0]


def kl_to_start(start: Path, trained: Path) -> float:
    """KL(trained || start) over the states of 8 train episodes the trained policy plays."""
    device = torch.device("cpu")
    reference, policy = (common.policy_from_checkpoint(common.load_checkpoint(path), device) for path in (start, trained))
    env = common.make_env(CS, "train", policy.spec["context_len"], policy.spec["entity_len"])
    torch.manual_seed(0)
    kls = []
    for seed in range(8):
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, masks = torch.as_tensor(observation[None]), common.batch_masks(info, device)
            with torch.no_grad():
                action, logprob, _, _ = policy.get_action_and_value(obs, masks)
                kls.append(common.kl_to_reference(reference, obs, masks, action, logprob).item())
            observation, _, terminated, truncated, info = env.step(action[0].numpy())
            done = terminated or truncated
    return float(np.mean(kls))


def test_bc_grpo_starts_grpo_from_the_bc_weights_with_the_same_network_overrides(tmp_path):
    overrides = dict(embed_dim=16, layers=1, heads=2, ff_dim=32, progress=False, bc_steps=40, bc_epochs=1,
                     group_size=2, groups_per_update=1, learning_rate=0.0, eval_every_steps=0)
    result = run("bc-grpo", RunSpec(CS, total_steps=60, run_dir=str(tmp_path), eval_episodes=1, overrides=overrides))
    run_dir = tmp_path / "CustomerSupport-v0__bc-grpo__seed0"
    bc_payload = common.load_checkpoint(run_dir / "bc" / "checkpoint.pt")
    grpo_payload = common.load_checkpoint(run_dir / "grpo" / "checkpoint.pt")
    assert bc_payload["config"]["total_steps"] == 40 and bc_payload["config"]["epochs"] == 1
    assert grpo_payload["algo"] == "bc-grpo" and grpo_payload["config"]["init_checkpoint"].endswith("bc/checkpoint.pt")
    for name, tensor in bc_payload["policy"].items():
        torch.testing.assert_close(grpo_payload["policy"][name], tensor)
    assert result.total_steps >= 60


def test_bc_ppo_resume_finishes_a_bc_stage_killed_between_epochs(tmp_path):
    overrides = dict(embed_dim=16, layers=1, heads=2, ff_dim=32, progress=False, bc_steps=40, bc_epochs=2,
                     num_envs=2, num_steps=8, eval_every_steps=0)
    spec = RunSpec(CS, total_steps=56, run_dir=str(tmp_path), eval_episodes=1, overrides=overrides)
    run("bc-ppo", spec)
    bc_checkpoint = tmp_path / "CustomerSupport-v0__bc-ppo__seed0" / "bc" / "checkpoint.pt"
    common.save_checkpoint(bc_checkpoint, {**common.load_checkpoint(bc_checkpoint), "epoch": 1})  # as if killed after epoch 1
    assert not bc.finished(bc_checkpoint)
    run("bc-ppo", replace(spec, resume=True))
    assert bc.finished(bc_checkpoint)


def test_bc_then_rl_overrides_split_between_the_stages():
    bc_overrides, rl_overrides = bc.split_overrides({"bc_steps": 5, "bc_learning_rate": 0.1, "embed_dim": 8, "learning_rate": 0.2})
    assert bc_overrides == {"total_steps": 5, "learning_rate": 0.1, "embed_dim": 8}
    assert rl_overrides == {"embed_dim": 8, "learning_rate": 0.2}


def test_training_reward_applies_to_training_envs_of_tool_use_envs_only():
    config = ppo.Config(env_kwargs={"reward_config": {"success": 20.0}})
    assert ppo.training_env_kwargs(config)["reward_config"] == {"success": 20.0, **ppo.TRAINING_REWARD}
    assert ppo.training_env_kwargs(ppo.Config(training_reward=None)) == {}
    assert ppo.training_env_kwargs(ppo.Config(env_id="CartPole-v1")) == {}
