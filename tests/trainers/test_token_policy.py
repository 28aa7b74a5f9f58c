"""The token policy: masks are honoured, log-probabilities are those of the sampled actions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from agentgym_envs.core.tokens import encode
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.wrappers import PAD_ID
from trainers.policy import Masks, TokenPolicy, TokenPolicyConfig
from trainers.run import make_env
from trainers.torch_policy import frozen_copy, kl_to_reference, network_env, new_policy

CS = "AgentGym/CustomerSupport-v0"


def collect_states(n_episodes: int = 6):
    """Token observations and masks along expert episodes (entity tables of every size)."""
    env = network_env(lambda: make_env(CS, "train", {}), context_len=64, entity_len=8)
    expert = ExpertPolicy(env)
    obs, action_masks, argument_masks = [], [], []
    for seed in range(n_episodes):
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            obs.append(observation)
            action_masks.append(info["action_mask"])
            argument_masks.append(info["argument_mask"])
            observation, _, terminated, truncated, info = env.step(expert(observation, info))
            done = terminated or truncated
    policy = new_policy(env, TokenPolicyConfig(embed_dim=16, layers=1, heads=2, ff_dim=32))
    return policy, torch.as_tensor(np.stack(obs)), Masks(torch.as_tensor(np.stack(action_masks)), torch.as_tensor(np.stack(argument_masks)))


def random_submask(masks: Masks, generator: torch.Generator) -> Masks:
    """Forbid a random half of the allowed choices too (keeping the env's masks as the upper bound)."""
    keep_action = torch.rand(masks.action.shape, generator=generator) < 0.5
    keep_argument = torch.rand(masks.argument.shape, generator=generator) < 0.5
    return Masks(masks.action & keep_action, masks.argument & keep_argument)


def test_sampled_actions_never_use_a_masked_tool_or_entity():
    torch.manual_seed(0)
    policy, obs, masks = collect_states()
    generator = torch.Generator().manual_seed(1)
    for _ in range(30):
        sub = random_submask(masks, generator)
        with torch.no_grad():
            action, _, _, _ = policy.get_action_and_value(obs, sub)
        tool_allowed = policy.tool_mask(sub)
        slot_allowed = policy.slot_masks(sub)
        for b, (tool, *slots) in enumerate(action.tolist()):
            if tool_allowed[b].any() and sub.action[b, : policy.n_tools].any():
                assert sub.action[b, tool], "sampled a tool the action mask forbids"
                assert tool_allowed[b, tool]
            for k, slot in enumerate(slots):
                if k < policy.arities[tool] and slot_allowed[b, tool, k].any():
                    assert slot_allowed[b, tool, k, slot], f"slot {k} of tool {tool} points at a forbidden row {slot}"
                    assert sub.argument[b, tool, k, slot]
                elif k >= policy.arities[tool]:
                    assert slot == 0, "slots past a tool's arity must be row 0"


def test_sampled_arguments_always_fit_the_tool_under_the_env_masks():
    torch.manual_seed(0)
    policy, obs, masks = collect_states()
    for _ in range(20):
        with torch.no_grad():
            action, _, _, _ = policy.get_action_and_value(obs, masks)
        for b, (tool, *slots) in enumerate(action.tolist()):
            for k in range(int(policy.arities[tool])):
                assert masks.argument[b, tool, k, slots[k]]


def test_log_prob_of_a_sampled_action_equals_its_rescored_log_prob():
    torch.manual_seed(0)
    policy, obs, masks = collect_states()
    with torch.no_grad():
        action, logprob, entropy, value = policy.get_action_and_value(obs, masks)
        _, rescored, entropy2, value2 = policy.get_action_and_value(obs, masks, action)
    torch.testing.assert_close(logprob, rescored)
    torch.testing.assert_close(value, value2)
    assert torch.isfinite(entropy).all()


def test_kl_to_reference_is_zero_for_equal_weights_and_its_gradient_pulls_towards_the_reference():
    torch.manual_seed(0)
    policy, obs, masks = collect_states()
    reference = frozen_copy(policy, "cpu")
    with torch.no_grad():
        action, logprob, _, _ = policy.get_action_and_value(obs, masks)
    assert kl_to_reference(reference, obs, masks, action, logprob).item() == pytest.approx(0.0, abs=1e-6)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.3 * torch.randn_like(parameter))
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.01)  # small enough not to overshoot, whatever the draw
    kls = []
    for _ in range(3):
        _, logprob, _, _ = policy.get_action_and_value(obs, masks, action)
        kl = kl_to_reference(reference, obs, masks, action, logprob)
        kls.append(kl.item())
        optimizer.zero_grad()
        kl.backward()
        optimizer.step()
    assert kls[0] > 0 and kls[2] < kls[1] < kls[0]


def test_log_probs_of_all_choices_sum_to_one_for_a_single_argument_tool():
    torch.manual_seed(0)
    policy, obs, masks = collect_states(1)
    obs, masks = obs[:1], Masks(masks.action[:1], masks.argument[:1])
    tool = 2  # lookup_user(email): one argument
    rows = torch.arange(policy.max_entities)
    actions = torch.stack([torch.full_like(rows, tool), rows, torch.zeros_like(rows)], 1)
    allowed = policy.slot_masks(masks)[0, tool, 0]
    with torch.no_grad():
        _, logprob, _, _ = policy.get_action_and_value(obs.expand(len(rows), -1), Masks(masks.action.expand(len(rows), -1),
                                                       masks.argument.expand(len(rows), -1, -1, -1)), actions)
        tool_logprob = torch.distributions.Categorical(logits=policy.tool_head(policy.encode(obs)[0])
                                                       .masked_fill(~policy.tool_mask(masks), -1e9)).log_prob(torch.tensor([tool]))
    total = (logprob[allowed] - tool_logprob).exp().sum()
    assert total == pytest.approx(1.0, abs=1e-4)


def test_one_network_serves_any_entity_table_size():
    torch.manual_seed(0)
    small = TokenPolicy(32, 4, max_entities=5, arities=[1, 2], config=TokenPolicyConfig(16, 1, 2, 32))
    obs = torch.randint(0, 1000, (3, 32 + 5 * 4))
    masks = Masks(torch.ones(3, 2 + 2 * 5, dtype=torch.bool), torch.ones(3, 2, 2, 5, dtype=torch.bool))
    action, logprob, _, _ = small.get_action_and_value(obs, masks)
    assert action.shape == (3, 3) and torch.isfinite(logprob).all()


def train_briefly(policy: TokenPolicy, obs: torch.Tensor, masks: Masks) -> None:
    """A few gradient steps on ``obs``: the embeddings of their tokens move away from zero."""
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for _ in range(3):
        _, logprob, _, value = policy.get_action_and_value(obs, masks)
        optimizer.zero_grad()
        (value.pow(2).mean() - logprob.mean()).backward()
        optimizer.step()


def encode_with_token_appended(policy: TokenPolicy, obs: torch.Tensor, token: int):
    """Encodings of an observation with room in its last context chunk, without and with ``token`` appended."""
    used = (obs[:, : policy.context_len] != PAD_ID).sum(1)
    b = int(torch.nonzero(used % policy.chunk)[0])
    novel = obs[b : b + 1].clone()
    novel[0, used[b]] = token
    with torch.no_grad():
        return policy.encode(obs[b : b + 1]), policy.encode(novel)


def test_a_token_sharing_no_feature_with_training_leaves_the_output_unchanged():
    torch.manual_seed(0)
    policy, obs, masks = collect_states(1)
    train_briefly(policy, obs, masks)
    seen_ids = obs[obs != PAD_ID].unique()
    seen_words = set((seen_ids % policy.vocab_buckets).tolist())
    seen_subwords = set(policy.subword_features[seen_ids].flatten().tolist())
    unseen = next(t for t in range(1000, 100_000) if t % policy.vocab_buckets not in seen_words
                  and not seen_subwords & set(policy.subword_features[t].tolist()) - {policy.subword_embedding.padding_idx})
    (cls, entities), (novel_cls, novel_entities) = encode_with_token_appended(policy, obs, unseen)
    assert torch.allclose(cls, novel_cls) and torch.allclose(entities, novel_entities)


def test_an_unseen_token_sharing_ngrams_with_a_trained_one_changes_the_output():
    torch.manual_seed(0)
    policy, obs, masks = collect_states(1)
    train_briefly(policy, obs, masks)
    (password,) = encode(" password")
    (passphrase,) = encode(" passphrase")
    assert password in obs and passphrase not in obs
    (cls, _), (novel_cls, _) = encode_with_token_appended(policy, obs, passphrase)
    assert not torch.allclose(cls, novel_cls)


def test_tokens_after_a_hidden_token_are_still_read():
    torch.manual_seed(0)
    policy, obs, _ = collect_states(1)
    nn.init.normal_(policy.token_embedding.weight)
    used = int((obs[0, : policy.context_len] != PAD_ID).sum())
    holed = obs[:1].clone()
    holed[0, 0] = PAD_ID  # a hidden token (as BC's augmentation makes) before the last one
    changed = holed.clone()
    changed[0, used - 1] = (int(changed[0, used - 1]) + 1) % PAD_ID
    with torch.no_grad():
        assert not torch.allclose(policy.encode(holed)[0], policy.encode(changed)[0])
