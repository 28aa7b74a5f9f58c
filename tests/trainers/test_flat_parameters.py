import copy

import pytest
import torch
from torch import nn

from trainers.flat_parameters import FlatParameters
from trainers.policy import MLPPolicy


def policy() -> MLPPolicy:
    torch.manual_seed(0)
    return MLPPolicy(300, [5, 7])


def loss(network: MLPPolicy, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    _, log_prob, entropy, value = network.get_action_and_value(obs, None, actions)
    return (log_prob * torch.linspace(-1, 1, len(obs))).mean() - 0.01 * entropy.mean() + (value**2).mean()


def test_flat_parameters_train_to_the_per_tensor_weights_to_the_last_bit_with_a_frozen_group():
    obs = torch.rand(64, 300) * (torch.rand(64, 300) < 0.2)
    actions = torch.stack([torch.randint(0, 5, (64,)), torch.randint(0, 7, (64,))], 1)
    plain, flat_policy = policy(), policy()
    plain_optimizer = torch.optim.Adam(plain.parameters(), lr=1e-2, eps=1e-5, foreach=True)
    flat = FlatParameters(flat_policy.parameters(), [list(flat_policy.critic.parameters()), list(flat_policy.actor.parameters())])
    flat_optimizer = torch.optim.Adam(flat.tensors, lr=1e-2, eps=1e-5, foreach=True)
    for step in range(30):
        frozen = step < 5  # the actor learns nothing at first, then starts its own Adam steps
        for parameter in plain.actor.parameters():
            parameter.requires_grad_(not frozen)
        flat.set_trainable(1, not frozen)
        rows = torch.randint(0, 64, (16,))
        plain_optimizer.zero_grad()
        loss(plain, obs[rows], actions[rows]).backward()
        plain_norm = nn.utils.clip_grad_norm_(plain.parameters(), 0.05, foreach=True)
        plain_optimizer.step()
        flat.zero_grad()
        loss(flat_policy, obs[rows], actions[rows]).backward()
        assert torch.equal(flat.clip_grad_norm_(0.05), plain_norm)
        flat_optimizer.step()
        if step == 4:
            assert all(torch.equal(a, b) for a, b in zip(plain.actor.parameters(), policy().actor.parameters()))
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), flat_policy.state_dict().values()))
    assert not torch.equal(flat_policy.actor[0].weight, policy().actor[0].weight)


def test_flat_parameters_refuse_groups_that_do_not_split_the_parameters():
    network = policy()
    with pytest.raises(ValueError, match="exactly once"):
        FlatParameters(network.parameters(), [list(network.critic.parameters())])


def test_an_optimizer_state_saved_per_parameter_resumes_on_the_flat_tensors_to_the_last_bit():
    obs = torch.rand(64, 300) * (torch.rand(64, 300) < 0.2)
    actions = torch.stack([torch.randint(0, 5, (64,)), torch.randint(0, 7, (64,))], 1)
    plain = policy()
    plain_optimizer = torch.optim.Adam(plain.parameters(), lr=1e-2, eps=1e-5, foreach=True)

    def step(network, optimizer, rows, zero, clip):
        zero()
        loss(network, obs[rows], actions[rows]).backward()
        clip()
        optimizer.step()

    batches = [torch.randint(0, 64, (16,)) for _ in range(6)]
    for rows in batches[:3]:  # an old checkpoint: weights and a per-parameter Adam state
        step(plain, plain_optimizer, rows, plain_optimizer.zero_grad,
             lambda: nn.utils.clip_grad_norm_(plain.parameters(), 0.05, foreach=True))
    saved = copy.deepcopy({"policy": plain.state_dict(), "optimizer": plain_optimizer.state_dict()})  # as a checkpoint holds them
    resumed = policy()
    flat = FlatParameters(resumed.parameters(), [list(resumed.critic.parameters()), list(resumed.actor.parameters())])
    resumed_optimizer = torch.optim.Adam(flat.tensors, lr=1e-2, eps=1e-5, foreach=True)
    resumed.load_state_dict(saved["policy"])
    resumed_optimizer.load_state_dict(flat.optimizer_state(saved["optimizer"]))
    for rows in batches[3:]:
        step(plain, plain_optimizer, rows, plain_optimizer.zero_grad,
             lambda: nn.utils.clip_grad_norm_(plain.parameters(), 0.05, foreach=True))
        step(resumed, resumed_optimizer, rows, flat.zero_grad, lambda: flat.clip_grad_norm_(0.05))
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), resumed.state_dict().values()))
    assert flat.optimizer_state(resumed_optimizer.state_dict()) == resumed_optimizer.state_dict()  # flat states pass as saved
