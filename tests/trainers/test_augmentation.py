"""The augmentation against paraphrase swaps and hides words of the task prompt only; BC and PPO use it."""

from __future__ import annotations

import pytest
import torch

from agentgym_envs.core.tokens import encode
from agentgym_envs.evaluation import tool_env
from agentgym_envs.wrappers import PAD_ID
from trainers import augment, bc
from trainers.policy import TokenPolicy
from trainers.run import make_env
from trainers.torch_policy import network_env


def test_hiding_task_tokens_touches_only_the_task_prompt():
    obs = torch.arange(1, 21).repeat(3, 1)
    task_len = torch.tensor([0, 5, 10])
    hidden = augment.perturb_task_tokens(obs, task_len, swap=0.0, hide=1.0)
    for b, n in enumerate(task_len.tolist()):
        assert (hidden[b, :n] == PAD_ID).all() and torch.equal(hidden[b, n:], obs[b, n:])


def test_swapped_tokens_come_from_the_task_prompts_of_the_batch():
    torch.manual_seed(0)
    obs = torch.stack([torch.arange(100, 120), torch.arange(200, 220)])
    task_len = torch.tensor([6, 4])
    swapped = augment.perturb_task_tokens(obs, task_len, swap=1.0, hide=0.0)
    prompt_ids = set(obs[0, :6].tolist()) | set(obs[1, :4].tolist())
    assert set(swapped[0, :6].tolist()) | set(swapped[1, :4].tolist()) <= prompt_ids
    assert torch.equal(swapped[0, 6:], obs[0, 6:]) and torch.equal(swapped[1, 4:], obs[1, 4:])
    assert not torch.equal(swapped, obs)


def test_padding_in_a_prompt_is_neither_swapped_in_nor_replaced():
    obs = torch.tensor([[5, PAD_ID, 7, 8], [9, 10, PAD_ID, 11]])
    swapped = augment.perturb_task_tokens(obs, torch.tensor([3, 3]), swap=1.0, hide=0.0)
    assert torch.equal(swapped == PAD_ID, obs == PAD_ID)


def test_prompt_dropout_hides_whole_prompts_of_some_rows_and_nothing_else():
    torch.manual_seed(0)
    obs = torch.arange(1, 21).repeat(200, 1)
    blanked = augment.perturb_task_tokens(obs, torch.full((200,), 8), swap=0.0, hide=0.0, blank=0.5)
    whole = (blanked[:, :8] == PAD_ID).all(1)
    assert torch.equal(blanked[~whole], obs[~whole])  # a row is either blanked entirely or untouched
    assert torch.equal(blanked[whole, 8:], obs[whole, 8:])
    assert 60 < int(whole.sum()) < 140


def test_no_token_changes_without_augmentation():
    obs = torch.arange(1, 21).repeat(2, 1)
    assert torch.equal(augment.perturb_task_tokens(obs, torch.tensor([20, 20]), swap=0.0, hide=0.0), obs)


def test_expert_dataset_records_how_many_leading_ids_are_the_task_prompt():
    config = bc.Config(context_len=64, entity_len=8)
    env = network_env(lambda: make_env("AgentGym/CustomerSupport-v0", "train", {}), config.context_len, config.entity_len)
    data = bc.expert_dataset(env, 12, seed=0)
    env.reset(seed=0)
    prompt = encode(tool_env(env).episode.prompt)
    first = int(data["task_len"][0])
    assert first == min(len(prompt), config.context_len // 2)
    assert data["obs"][0][:first].tolist() == list(prompt[:first])


def test_ppo_rollouts_act_on_perturbed_task_prompts(train_tiny, tiny_ppo, monkeypatch):
    calls, perturb = [], augment.perturb_task_tokens

    def spy(obs, task_len, swap, hide, blank):
        calls.append((task_len.clone(), swap, hide))
        return perturb(obs, task_len, swap, hide, blank)

    monkeypatch.setattr(augment, "perturb_task_tokens", spy)
    train_tiny("ppo", 32, task_token_swap=0.2, task_token_dropout=0.1, context_len=64, **tiny_ppo)
    assert len(calls) == tiny_ppo["num_steps"]  # once per rollout step, for every env at once
    for task_len, swap, hide in calls:
        assert (swap, hide) == (0.2, 0.1)
        assert task_len.shape == (tiny_ppo["num_envs"],) and ((task_len > 0) & (task_len <= 32)).all()


def test_ppo_without_augmentation_leaves_observations_alone(train_tiny, tiny_ppo, monkeypatch):
    monkeypatch.setattr(augment, "perturb_task_tokens", lambda *args: pytest.fail("perturbed without augmentation"))
    train_tiny("ppo", 32, task_token_swap=0.0, task_token_dropout=0.0, **tiny_ppo)


def test_ppo_on_an_env_without_a_task_prompt_trains_on_plain_observations(train_tiny, tiny_ppo, monkeypatch):
    monkeypatch.setattr(augment, "perturb_task_tokens", lambda *args: pytest.fail("CartPole has no task prompt"))
    assert train_tiny("ppo", 32, env="CartPole-v1", task_token_swap=0.1, **tiny_ppo).total_steps == 32


def test_ppo_acts_and_updates_on_the_perturbed_prompt_but_evaluates_on_the_plain_one(train_tiny, tiny_ppo, monkeypatch):
    seen = {True: [], False: []}  # deterministic (evaluation) or not (rollouts and updates) -> first ids
    score = TokenPolicy.get_action_and_value

    def record(self, obs, masks, action=None, deterministic=False):
        seen[deterministic].append(obs[:, 0].clone())
        return score(self, obs, masks, action, deterministic)

    monkeypatch.setattr(TokenPolicy, "get_action_and_value", record)
    train_tiny("ppo", 32, task_token_swap=0.0, task_token_dropout=1.0, **tiny_ppo)
    assert seen[False] and all((first == PAD_ID).all() for first in seen[False])  # the prompt's "TICKET" hidden
    assert seen[True] and all((first != PAD_ID).all() for first in seen[True])
