"""BC's augmentation hides words of the task prompt only."""

from __future__ import annotations

import torch

from agentgym_envs.core.tokens import encode
from agentgym_envs.policies import tool_env
from agentgym_envs.wrappers import PAD_ID
from trainers import bc, common


def test_hiding_task_tokens_touches_only_the_task_prompt():
    obs = torch.arange(20).repeat(3, 1)
    task_len = torch.tensor([0, 5, 10])
    hidden = bc.hide_task_tokens(obs, task_len, p=1.0)
    for b, n in enumerate(task_len.tolist()):
        assert (hidden[b, :n] == PAD_ID).all() and torch.equal(hidden[b, n:], obs[b, n:])


def test_no_token_is_hidden_without_dropout():
    obs = torch.arange(20).repeat(2, 1)
    assert torch.equal(bc.hide_task_tokens(obs, torch.tensor([20, 20]), p=0.0), obs)


def test_expert_dataset_records_how_many_leading_ids_are_the_task_prompt():
    config = bc.Config(total_steps=12, context_len=64, entity_len=8)
    env = common.make_env(config.env_id, "train", config.context_len, config.entity_len)
    data = bc.expert_dataset(config, env)
    env.reset(seed=0)
    prompt = encode(tool_env(env).episode.prompt)
    first = int(data["task_len"][0])
    assert first == min(len(prompt), config.context_len // 2)
    assert data["obs"][0][:first].tolist() == list(prompt[:first])
