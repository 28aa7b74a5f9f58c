"""Each trainer runs a few hundred steps end to end: TensorBoard events, a checkpoint, a report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainers import checkpoints, grpo
from trainers.lifecycle import RunMismatchError
from trainers.run import make_env
from trainers.torch_policy import (
    TRAINING_RETURN_TAG,
    batch_masks,
    kl_to_reference,
    network_env,
    new_policy,
    policy_from_checkpoint,
)

CS = "AgentGym/CustomerSupport-v0"
TINY_NET = dict(embed_dim=16, layers=1, heads=2, ff_dim=32)


def scalar_tags(run_dir: Path) -> set[str]:
    events = EventAccumulator(str(run_dir))
    events.Reload()
    return set(events.Tags()["scalars"])


def scalars(run_dir: Path, tag: str) -> list[float]:
    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return [event.value for event in events.Scalars(tag)]


def test_ppo_on_customer_support_writes_events_checkpoint_and_metrics(train_tiny, tiny_ppo):
    result = train_tiny("ppo", 64, **tiny_ppo)
    run_dir = Path(result.run_dir)
    tags = scalar_tags(run_dir)
    for tag in (TRAINING_RETURN_TAG, "charts/SPS", "losses/policy_loss", "losses/value_loss", "losses/entropy",
                "metrics/success", "metrics/tool_reliability", "metrics/tokens_used", "metrics/cost_reduction",
                "eval/test_success", "final/test_success", "final/test_env_return"):
        assert tag in tags, tag
    assert (run_dir / "checkpoint.pt").is_file()
    assert result.total_steps == 64 and result.curve and set(result.test_metrics) >= {"success", "tool_reliability"}


def test_ppo_rounds_total_steps_up_to_whole_rollouts(train_tiny, tiny_ppo):
    assert train_tiny("ppo", 40, **{**tiny_ppo, "eval_every_steps": 0}).total_steps == 64  # 2 rollouts of 2 x 16


def test_ppo_trains_cartpole_with_the_mlp_policy(train_tiny, tiny_ppo):
    result = train_tiny("ppo", 256, env="CartPole-v1", reward_scale=1.0, **tiny_ppo)
    payload = checkpoints.load(Path(result.run_dir) / "checkpoint.pt")
    assert payload["policy_spec"]["kind"] == "mlp"
    assert TRAINING_RETURN_TAG in scalar_tags(Path(result.run_dir))
    assert result.steps_to_target is None
    kl = scalars(Path(result.run_dir), "losses/approx_kl")  # each update moved the policy off the one that acted
    assert len(kl) == result.total_steps // (tiny_ppo["num_envs"] * tiny_ppo["num_steps"]) and all(0 < k < 1 for k in kl)


def test_grpo_writes_events_and_checkpoint(train_tiny):
    result = train_tiny("grpo", 60, group_size=3, groups_per_update=2, eval_every_steps=30, eval_curve_episodes=2,
                        kl_coef=0.1, checkpoint_every=1, **TINY_NET)
    tags = scalar_tags(Path(result.run_dir))
    assert {TRAINING_RETURN_TAG, "charts/SPS", "losses/policy_loss", "losses/kl_to_reference",
            "metrics/success", "eval/test_success"} <= tags
    assert (Path(result.run_dir) / "checkpoint.pt").is_file() and result.total_steps >= 60


def token_env(split: str = "train", context_len: int = 64, entity_len: int = 8):
    """CustomerSupport-v0 as the torch trainers read it (token ids, trainer-sized info)."""
    return network_env(lambda: make_env(CS, split, {}), context_len, entity_len)


def test_grpo_group_plays_one_task_in_every_rollout():
    envs = [token_env() for _ in range(4)]
    policy = new_policy(envs[0], grpo.Config(**TINY_NET).token_config())
    group = grpo.play_group(policy, envs, "train-123", seed=5, device="cpu")
    assert {env.unwrapped.episode.task.task_id for env in envs} == {"train-123"}
    assert all(len(r.actions) >= 1 and r.metrics for r in group)
    prompts = {tuple(r.obs[0]) for r in group}
    assert len(prompts) == 1, "every rollout of a group starts from the same observation"


def test_grpo_outcome_mode_uses_the_envs_outcome_reward(train_tiny):
    result = train_tiny("grpo", 20, group_size=2, groups_per_update=1, reward_mode="outcome", eval_every_steps=0, **TINY_NET)
    returns = scalars(Path(result.run_dir), TRAINING_RETURN_TAG)
    assert returns and all(r in (0.0, 1.0) for r in returns)
    assert result.training_reward["mode"] == "outcome"


@pytest.mark.parametrize("skip", [True, False])
def test_grpo_groups_with_equal_returns_update_nothing_when_skipped(train_tiny, skip):
    # outcome returns of an untrained policy: every rollout fails, so every group is uniform
    result = train_tiny("grpo", 40, seed=1, group_size=2, groups_per_update=2, reward_mode="outcome", learning_rate=1e-2,
                        skip_uniform_groups=skip, eval_every_steps=0, **TINY_NET)
    assert set(scalars(Path(result.run_dir), "charts/uniform_groups")) == {1.0}
    payload = checkpoints.load(Path(result.run_dir) / "checkpoint.pt")
    unchanged = all(torch.equal(payload["policy"][name], tensor) for name, tensor in payload["reference"].items())
    assert unchanged == skip


def test_bc_loss_decreases_on_expert_data(train_tiny):
    result = train_tiny("bc", 300, epochs=6, batch_size=64, learning_rate=5e-3, eval_curve_episodes=1, eval_episodes=1,
                        **TINY_NET)
    losses = scalars(Path(result.run_dir), "losses/bc_loss")
    assert len(losses) == 6 and all(b < a for a, b in zip(losses, losses[1:])) and losses[-1] < 0.7 * losses[0]
    assert checkpoints.load(Path(result.run_dir) / "checkpoint.pt")["policy_spec"]["kind"] == "token"


def initial_weights(train_tiny, tmp_path: Path, config: dict, env: str = CS) -> Path:
    """A checkpoint of a seed-0 PPO policy's initial weights (one update at learning rate 0)."""
    result = train_tiny("ppo", 32, env=env, root=tmp_path / "start", eval_episodes=1, **{**config, "learning_rate": 0.0})
    return Path(result.run_dir) / "checkpoint.pt"


@pytest.mark.parametrize("algo", ["bc-ppo", "bc-grpo"])
def test_warm_start_trains_bc_then_starts_the_rl_stage_from_its_weights(train_tiny, algo):
    rl = dict(num_envs=2, num_steps=16) if algo == "bc-ppo" else dict(group_size=2, groups_per_update=1)
    result = train_tiny(algo, 72, eval_episodes=1, bc_steps=40, bc_epochs=1, bc_eval_curve_episodes=1,
                        learning_rate=0.0, anneal_lr=False, eval_every_steps=0, **rl, **TINY_NET)
    run_dir = Path(result.run_dir)
    bc_payload = checkpoints.load(run_dir / "bc" / "checkpoint.pt")
    rl_payload = checkpoints.load(run_dir / "checkpoint.pt")
    assert bc_payload["config"]["epochs"] == 1 and bc_payload["config"]["embed_dim"] == 16, "shared overrides reach BC"
    assert rl_payload["algo"] == algo
    for name, tensor in bc_payload["policy"].items():
        torch.testing.assert_close(rl_payload["policy"][name], tensor)
    assert result.total_steps >= 72 and result.curve == []  # no curve point asked for; the final test is none


def test_bc_ppo_resume_finishes_a_bc_stage_killed_between_epochs(train_tiny):
    overrides = dict(bc_steps=40, bc_epochs=2, bc_eval_curve_episodes=1, num_envs=2, num_steps=8, eval_every_steps=0,
                     eval_episodes=1, **TINY_NET)
    result = train_tiny("bc-ppo", 56, **overrides)
    stage = Path(result.run_dir) / "bc"
    checkpoints.save(stage / "checkpoint.pt", {**checkpoints.load(stage / "checkpoint.pt"), "epoch": 1})  # killed after epoch 1
    (stage / "result.json").unlink()
    train_tiny("bc-ppo", 56, resume=True, **overrides)
    assert checkpoints.load(stage / "checkpoint.pt")["epoch"] == 2 and (stage / "result.json").is_file()


def test_bc_ppo_resume_refuses_a_finished_bc_stage_of_other_settings(train_tiny):
    overrides = dict(bc_steps=40, bc_epochs=1, bc_eval_curve_episodes=1, num_envs=2, num_steps=8, eval_every_steps=0,
                     eval_episodes=1, **TINY_NET)
    train_tiny("bc-ppo", 56, **overrides)
    with pytest.raises(RunMismatchError, match="other settings"):
        train_tiny("bc-ppo", 56, resume=True, **{**overrides, "bc_epochs": 2})


@pytest.mark.parametrize("env", [CS, "CartPole-v1"])
def test_critic_warmup_updates_change_only_the_value_head(train_tiny, tmp_path, tiny_ppo, env):
    tiny_ppo.update(anneal_lr=False, eval_every_steps=0)
    start = initial_weights(train_tiny, tmp_path, tiny_ppo, env)  # the same seed starts from the same weights
    warm = train_tiny("ppo", 64, env=env, root=tmp_path / "warm", critic_warmup_updates=2, eval_episodes=1, **tiny_ppo)
    before = checkpoints.load(start)["policy"]
    after = checkpoints.load(Path(warm.run_dir) / "checkpoint.pt")["policy"]
    value_head = "value_head." if env == CS else "critic."
    moved = {name for name in before if not torch.equal(before[name], after[name])}
    assert moved and all(name.startswith(value_head) for name in moved)


def test_ppo_kl_penalty_holds_the_policy_near_its_starting_weights(train_tiny, tmp_path, tiny_ppo):
    tiny_ppo.update(anneal_lr=False, eval_every_steps=0, learning_rate=0.01)
    start = initial_weights(train_tiny, tmp_path, tiny_ppo)
    final_kl = {}
    for kl_coef in (0.0, 10.0):
        result = train_tiny("ppo", 128, root=tmp_path / f"kl{kl_coef}", kl_coef=kl_coef, eval_episodes=1, **tiny_ppo)
        final_kl[kl_coef] = kl_to_start(start, Path(result.run_dir) / "checkpoint.pt")
    assert "losses/kl_to_reference" in scalar_tags(Path(result.run_dir))
    assert 0 < final_kl[10.0] < 0.5 * final_kl[0.0]


def kl_to_start(start: Path, trained: Path) -> float:
    """KL(trained || start) over the states of 8 train episodes the trained policy plays."""
    reference, policy = (policy_from_checkpoint(checkpoints.load(path), "cpu") for path in (start, trained))
    env = token_env("train", policy.spec["context_len"], policy.spec["entity_len"])
    torch.manual_seed(0)
    kls = []
    for seed in range(8):
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, masks = torch.as_tensor(observation[None]), batch_masks(info, "cpu")
            with torch.no_grad():
                action, logprob, _, _ = policy.get_action_and_value(obs, masks)
                kls.append(kl_to_reference(reference, obs, masks, action, logprob).item())
            observation, _, terminated, truncated, info = env.step(action[0].numpy())
            done = terminated or truncated
    return float(np.mean(kls))
