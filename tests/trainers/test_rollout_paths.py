"""The lean paths PPO's rollouts take: categoricals, trainer-sized info, batched episode scalars."""

from __future__ import annotations

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter

from trainers.policy import (
    MASKED,
    SPARSE_INPUT_DIM,
    SPARSE_MIN_ROWS,
    Categorical,
    Masks,
    MLPPolicy,
    MultiCategorical,
    inverse_transform_draw,
    masked_categorical,
)
from trainers.ppo import ROLLOUT_INFO_KEYS
from trainers.run import make_env
from trainers.torch_policy import TRAINING_RETURN_TAG, EpisodeStats, network_env, write_scalars

CS = "AgentGym/CustomerSupport-v0"


@pytest.mark.parametrize("n", [2, 11, 32])
def test_categorical_scores_as_torch_distributions_categorical(n):
    logits = torch.randn(64, n, requires_grad=True)
    ours, torchs = Categorical(logits), torch.distributions.Categorical(logits=logits)
    sample = ours.sample()
    assert torch.equal(ours.log_prob(sample), torchs.log_prob(sample))
    assert torch.equal(ours.entropy(), torchs.entropy())
    assert torch.equal(ours.mode(), torchs.mode)
    ours_grad, = torch.autograd.grad(ours.log_prob(sample).sum() + ours.entropy().sum(), logits)
    torchs_grad, = torch.autograd.grad(torchs.log_prob(sample).sum() + torchs.entropy().sum(), logits)
    assert torch.equal(ours_grad, torchs_grad)


def test_categorical_draws_each_action_by_its_probability_and_never_a_masked_one():
    torch.manual_seed(0)
    logits = torch.randn(1, 704)
    mask = torch.zeros(1, 704, dtype=torch.bool)
    mask[0, [3, 300, 301, 600, 702]] = True  # customer support's size, the last action masked
    draws = masked_categorical(logits.expand(20000, -1), mask.expand(20000, -1)).sample()
    frequencies = torch.bincount(draws, minlength=704) / len(draws)
    assert set(draws.tolist()) == {3, 300, 301, 600, 702}
    assert torch.allclose(frequencies, masked_categorical(logits, mask).probs[0], atol=0.01)


def test_a_draw_rounded_up_to_the_total_takes_the_last_action_of_positive_probability(monkeypatch):
    probs = torch.tensor([[0.0, 0.5, 0.5, 0.0, 0.0], [0.25, 0.0, 0.0, 0.0, 0.75]])
    monkeypatch.setattr(torch, "rand", lambda size, **kwargs: torch.ones(size, **kwargs))  # u at the total
    assert inverse_transform_draw(probs).tolist() == [2, 4]


@pytest.mark.parametrize(("scale", "dtype"), [(1.0, torch.float32), (60.0, torch.float32), (500.0, torch.float64)])
def test_masked_categorical_scores_as_torchs_to_the_last_bit_with_most_choices_masked(scale, dtype):
    torch.manual_seed(0)  # at the larger scales some valid logits' exps underflow too
    logits = (torch.randn(32, 704, dtype=dtype) * scale).requires_grad_()
    mask = torch.rand(32, 704) < 0.05
    mask[:, 0], mask[1] = True, False  # row 1: nothing allowed
    mask[2] = True  # row 2: everything allowed
    ours = masked_categorical(logits, mask)
    torchs = torch.distributions.Categorical(logits=torch.where(mask, logits, torch.full_like(logits, MASKED)))
    action = torchs.sample()
    assert torch.equal(ours.logits, torchs.logits) and torch.equal(ours.probs, torchs.probs)
    assert torch.equal(ours.log_prob(action), torchs.log_prob(action)) and torch.equal(ours.entropy(), torchs.entropy())
    ours_grad, = torch.autograd.grad(ours.log_prob(action).sum() + ours.entropy().sum(), logits)
    torchs_grad, = torch.autograd.grad(torchs.log_prob(action).sum() + torchs.entropy().sum(), logits)
    assert torch.equal(ours_grad, torchs_grad)


def test_independent_categoricals_score_as_one_categorical_per_dimension():
    nvec = [11, 32, 4]
    logits = torch.randn(64, sum(nvec), requires_grad=True)
    dimensions = MultiCategorical(nvec)
    log_probs = dimensions.log_probs(logits)
    actions = dimensions.sample(log_probs)
    each = [Categorical(part) for part in logits.split(nvec, dim=-1)]
    assert all(bool((actions[:, d] < n).all()) for d, n in enumerate(nvec))
    expected_log_prob = sum(c.log_prob(actions[:, d]) for d, c in enumerate(each))
    expected_entropy = sum(c.entropy() for c in each)
    assert torch.allclose(dimensions.log_prob(log_probs, actions), expected_log_prob, atol=1e-5)
    assert torch.allclose(dimensions.entropy(log_probs), expected_entropy, atol=1e-5)
    assert torch.equal(dimensions.sample(log_probs, deterministic=True), torch.stack([c.mode() for c in each], -1))
    grad, = torch.autograd.grad(dimensions.log_prob(log_probs, actions).sum() + dimensions.entropy(log_probs).sum(), logits)
    expected_grad, = torch.autograd.grad(expected_log_prob.sum() + expected_entropy.sum(), logits)
    assert torch.allclose(grad, expected_grad, atol=1e-5)


def test_independent_categoricals_draw_each_dimension_by_its_probabilities():
    torch.manual_seed(0)
    nvec = [3, 5]
    logits = torch.randn(1, sum(nvec)).expand(20000, -1)
    dimensions = MultiCategorical(nvec)
    actions = dimensions.sample(dimensions.log_probs(logits))
    for d, part in enumerate(logits[0].split(nvec)):
        frequencies = torch.bincount(actions[:, d], minlength=nvec[d]) / len(actions)
        assert torch.allclose(frequencies, part.softmax(-1), atol=0.015)


def test_independent_categoricals_never_draw_a_category_of_probability_zero():
    torch.manual_seed(0)
    logits = torch.tensor([[-200.0, 0.0, 0.0, -200.0, 5.0, 5.0, -200.0]]).expand(20000, -1)  # exp(-200) is 0 in float32
    dimensions = MultiCategorical([4, 3])
    actions = dimensions.sample(dimensions.log_probs(logits))
    assert set(actions[:, 0].tolist()) == {1, 2} and set(actions[:, 1].tolist()) == {0, 1}


def test_the_mlp_skips_all_zero_columns_of_a_wide_batch_with_the_full_products_outputs_and_gradients():
    torch.manual_seed(0)
    policy = MLPPolicy(SPARSE_INPUT_DIM + 44, [11, 32, 32])
    obs = torch.rand(SPARSE_MIN_ROWS, SPARSE_INPUT_DIM + 44) * (torch.rand(1, SPARSE_INPUT_DIM + 44) < 0.3)
    obs[:, 5] = 0.0
    obs[0, 5], obs[1, 5] = 2.0, -2.0  # a column whose values sum to zero is still used
    actions = torch.stack([torch.randint(0, n, (SPARSE_MIN_ROWS,)) for n in (11, 32, 32)], -1)

    def outputs_and_gradients(forward):
        policy.zero_grad()
        logits, values = forward(obs)
        (policy.dimensions.log_prob(policy.dimensions.log_probs(logits), actions).sum() + values.sum()).backward()
        return [logits, values] + [p.grad.clone() for p in policy.parameters()]

    compact = outputs_and_gradients(policy)
    full = outputs_and_gradients(lambda x: (policy.actor(x), policy.critic(x).squeeze(-1)))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(compact, full))
    assert not torch.equal(compact[2], torch.zeros_like(compact[2]))  # the critic's first-layer weights got gradients


@pytest.mark.parametrize("n_actions", [704, [11, 32, 32]])
@pytest.mark.parametrize("rows", [8, SPARSE_MIN_ROWS])  # the full product, and a wide batch's used columns
def test_an_actions_log_prob_alone_has_the_values_and_gradients_of_the_full_forward_pass(n_actions, rows):
    torch.manual_seed(0)
    policy = MLPPolicy(SPARSE_INPUT_DIM + 44, n_actions)
    obs = torch.rand(rows, SPARSE_INPUT_DIM + 44) * (torch.rand(1, SPARSE_INPUT_DIM + 44) < 0.3)
    discrete = isinstance(n_actions, int)
    masks = Masks(torch.rand(rows, n_actions) < 0.1, None) if discrete else None
    if discrete:
        masks.action[:, 0] = True
        actions = torch.stack([torch.multinomial(row.float(), 1)[0] for row in masks.action])
    else:
        actions = torch.stack([torch.randint(0, n, (rows,)) for n in n_actions], -1)

    def value_and_gradients(log_prob):
        policy.zero_grad()
        value = log_prob()
        value.mean().backward()
        return [value] + [p.grad for p in policy.actor.parameters()]

    alone = value_and_gradients(lambda: policy.log_prob(obs, masks, actions))
    full = value_and_gradients(lambda: policy.get_action_and_value(obs, masks, actions)[1])
    assert all(torch.equal(a, b) for a, b in zip(alone, full, strict=True))


@pytest.mark.parametrize("n_actions", [704, [11, 32, 32]])
def test_the_greedy_action_from_the_actor_alone_is_the_full_forward_passs(n_actions):
    torch.manual_seed(1)
    policy = MLPPolicy(40, n_actions)
    obs = torch.rand(16, 40)
    masks = Masks(torch.rand(16, n_actions) < 0.1, None) if isinstance(n_actions, int) else None
    assert torch.equal(policy.greedy_action(obs, masks), policy.get_action_and_value(obs, masks, deterministic=True)[0])


def test_the_bag_of_tokens_env_leaves_the_masks_out_of_info_and_token_ids_keep_them():
    base = lambda: make_env(CS, "train", {})  # noqa: E731
    _, bag_info = network_env(base, 64, 8, "bag").reset(seed=0)
    _, token_info = network_env(base, 64, 8, "tokens").reset(seed=0)
    assert "action_mask" not in bag_info and "argument_mask" not in bag_info and "task_id" in bag_info
    assert {"action_mask", "argument_mask", "task_tokens"} <= set(token_info)


def test_episode_stats_log_the_means_of_each_updates_episodes_readable_by_tensorboard(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    stats = EpisodeStats()
    stats.log_episode(3.0, {"success": 1.0, "tool_reliability": 0.5})
    stats.log_episode(-1.0, {"success": 0.0})
    write_scalars(writer, stats.update_means(), 10)
    stats.log_episode(2.0, {})
    write_scalars(writer, stats.update_means(), 20)
    assert stats.update_means() == []  # no episode finished since
    writer.close()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars(TRAINING_RETURN_TAG)] == [(10, 1.0), (20, 2.0)]
    assert [(e.step, e.value) for e in events.Scalars("metrics/success")] == [(10, 0.5)]
    assert [(e.step, e.value) for e in events.Scalars("metrics/tool_reliability")] == [(10, 0.5)]
    assert stats.mean(TRAINING_RETURN_TAG) == pytest.approx(4.0 / 3)  # the progress bar's: the last 100 episodes


def test_ppo_rollout_envs_leave_the_task_id_out_of_info():
    base = lambda: make_env(CS, "train", {})  # noqa: E731
    _, bag_info = network_env(base, 64, 8, "bag", ROLLOUT_INFO_KEYS).reset(seed=0)
    _, token_info = network_env(base, 64, 8, "tokens", ROLLOUT_INFO_KEYS).reset(seed=0)
    assert "task_id" not in bag_info and "task_id" not in token_info
    assert {"action_mask", "argument_mask", "task_tokens"} <= set(token_info)
