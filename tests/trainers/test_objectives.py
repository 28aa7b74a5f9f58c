"""The policy-gradient objectives with exact values on hand-made inputs: PPO's clipped
surrogate, value clipping, advantage normalisation and GAE, and GRPO's group advantage."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers.grpo import group_advantages
from trainers.ppo import gae, normalize_advantages, value_loss
from trainers.torch_policy import clipped_surrogate


def test_clipped_surrogate_takes_the_pessimistic_term_per_sample():
    ratio = torch.tensor([1.5, 0.5, 1.5, 0.5, 1.1])
    advantages = torch.tensor([1.0, 1.0, -1.0, -1.0, 2.0])
    # per sample, max(-A r, -A clip(r, 0.8, 1.2)):
    # A>0, r=1.5: max(-1.5, -1.2) = -1.2 (the gain is clipped)   A>0, r=0.5: max(-0.5, -0.8) = -0.5
    # A<0, r=1.5: max(1.5, 1.2) = 1.5 (the loss is not)          A<0, r=0.5: max(0.5, 0.8) = 0.8
    # inside the clip range, r=1.1: -2.2
    expected = (-1.2 - 0.5 + 1.5 + 0.8 - 2.2) / 5
    assert clipped_surrogate(ratio, advantages, 0.2).item() == pytest.approx(expected)


def test_clipped_surrogate_has_no_gradient_where_the_ratio_is_clipped():
    ratio = torch.tensor([1.5, 1.1], requires_grad=True)
    clipped_surrogate(ratio, torch.tensor([1.0, 1.0]), 0.2).backward()
    assert ratio.grad.tolist() == pytest.approx([0.0, -0.5])


def test_value_loss_clips_the_new_value_around_the_rollouts_estimate():
    new, old, returns = torch.tensor([2.0, 0.5]), torch.tensor([1.0, 1.0]), torch.tensor([3.0, 0.0])
    # sample 1: unclipped (2-3)^2 = 1, clipped 1.2 -> (1.2-3)^2 = 3.24: max 3.24
    # sample 2: unclipped 0.25, clipped 0.8 -> 0.64: max 0.64
    assert value_loss(new, old, returns, 0.2, clip=True).item() == pytest.approx(0.5 * (3.24 + 0.64) / 2)
    assert value_loss(new, old, returns, 0.2, clip=False).item() == pytest.approx(0.5 * (1.0 + 0.25) / 2)


def test_advantage_normalisation_uses_the_sample_standard_deviation():
    normalised = normalize_advantages(torch.tensor([1.0, 2.0, 3.0, 6.0]))
    # mean 3, sample std sqrt((4 + 1 + 0 + 9) / 3)
    std = (14 / 3) ** 0.5
    assert normalised.tolist() == pytest.approx([-2 / std, -1 / std, 0.0, 3 / std], abs=1e-6)


def test_gae_recursion_on_one_env_with_an_episode_boundary():
    gamma, lam = 0.9, 0.5
    rewards = torch.tensor([[1.0], [0.0], [2.0]])
    values = torch.tensor([[0.5], [1.0], [0.0]])
    dones = torch.tensor([[0.0], [0.0], [1.0]])  # the observation at t=2 starts a new episode
    next_value, next_done = torch.tensor([4.0]), torch.tensor([0.0])
    # t=2: delta = 2 + 0.9*4 - 0 = 5.6;                   A2 = 5.6
    # t=1: next obs starts an episode: delta = 0 - 1 = -1; A1 = -1 (nothing flows back)
    # t=0: delta = 1 + 0.9*1.0 - 0.5 = 1.4;              A0 = 1.4 + 0.9*0.5*(-1) = 0.95
    advantages = gae(rewards, values, dones, next_value, next_done, gamma, lam)
    assert advantages[:, 0].tolist() == pytest.approx([0.95, -1.0, 5.6])


def test_gae_stops_at_a_terminal_last_step():
    advantages = gae(torch.tensor([[1.0]]), torch.tensor([[0.25]]), torch.tensor([[0.0]]), torch.tensor([100.0]),
                     torch.tensor([1.0]), 0.99, 0.95)
    assert advantages.item() == pytest.approx(0.75)


def test_group_advantage_normalises_returns_within_the_group_with_the_population_std():
    advantages = group_advantages(np.array([0.0, 0.0, 1.0, 3.0]))
    # mean 1, population std sqrt((1 + 1 + 0 + 4) / 4)
    std = 1.5 ** 0.5
    assert advantages.tolist() == pytest.approx([-1 / std, -1 / std, 0.0, 2 / std], abs=1e-6)
    assert group_advantages(np.array([4.0, 4.0, 4.0])).tolist() == [0.0, 0.0, 0.0]
