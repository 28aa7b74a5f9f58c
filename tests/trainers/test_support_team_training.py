"""Parameter-shared PPO on the support team: the team env through the trainers' entry points,
the agent-id input of the token policy, and masks that keep agents to the tools they hold."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agentgym_envs.cli import main
from agentgym_envs.multiagent.policies import ExpertTeam
from trainers import common, ppo
from trainers.policy import Masks, TokenPolicyConfig, build_policy

TEAM = "support_team_v0"
TINY_CONFIG = TokenPolicyConfig(embed_dim=16, layers=1, heads=2, ff_dim=32)


def expert_states(episodes: int = 5):
    """The team env as trainers see it, a fresh shared policy, and the observations and masks
    along expert-team episodes (every agent holds the ticket at some point)."""
    env = common.make_env(TEAM, "train", context_len=64, entity_len=8)
    policy = common.new_policy(env, 64, 8, TINY_CONFIG)
    active = env.unwrapped
    expert = ExpertTeam(active.team)
    obs, action_masks, argument_masks = [], [], []
    for seed in range(episodes):
        observation, info = env.reset(seed=seed)
        done = False
        while not done:
            obs.append(observation)
            action_masks.append(info["action_mask"])
            argument_masks.append(info["argument_mask"])
            observation, _, terminated, truncated, info = env.step(expert(active.base.holder, None, {}))
            done = terminated or truncated
    masks = Masks(torch.as_tensor(np.stack(action_masks)), torch.as_tensor(np.stack(argument_masks)))
    return env, policy, torch.as_tensor(np.stack(obs)), masks


def test_team_names_resolve_and_observations_carry_the_agent_id_first():
    assert common.canonical_env_id("support_team") == TEAM == common.canonical_env_id(TEAM)
    assert common.is_tool_env(TEAM)
    env, policy, obs, _ = expert_states()
    agents = env.unwrapped.agents
    assert policy.spec["n_agents"] == len(agents) == 4
    assert set(obs[:, 0].tolist()) == set(range(len(agents))), "every agent held the ticket"
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert observation[0] == agents.index(env.unwrapped.base.holder)
    assert observation.shape == (1 + 64 + env.unwrapped.base.scenario.max_entities * 8,)


def test_unknown_env_name_is_a_clear_error():
    with pytest.raises(ValueError, match="team env"):
        common.canonical_env_id("support_tema")


def test_the_agent_id_changes_the_policy_output():
    _, policy, obs, masks = expert_states(episodes=1)
    state = obs[:1].repeat(4, 1)
    state[:, 0] = torch.arange(4)
    state_masks = Masks(masks.action[:1].expand(4, -1), masks.argument[:1].expand(4, -1, -1, -1))
    with torch.no_grad():
        cls, _ = policy.encode(state)
        action, log_prob, _, value = policy.get_action_and_value(state, state_masks, action=torch.zeros(4, 3, dtype=torch.long))
    assert torch.unique(cls, dim=0).shape[0] == 4, "each agent id gives its own summary vector"
    assert torch.unique(value).numel() == 4 and torch.unique(log_prob).numel() == 4


def test_the_shared_policy_never_samples_a_tool_or_entity_the_holder_may_not_use():
    _, policy, obs, masks = expert_states(episodes=5)
    repeats = 64
    batch_obs = obs.repeat_interleave(repeats, 0)
    batch_masks = Masks(masks.action.repeat_interleave(repeats, 0), masks.argument.repeat_interleave(repeats, 0))
    with torch.no_grad():
        action, *_ = policy.get_action_and_value(batch_obs, batch_masks)
    rows = torch.arange(action.shape[0])
    tools = action[:, 0]
    assert batch_masks.action[rows, tools].all(), "a tool the holder does not hold was sampled"
    assert len(set(tools.tolist())) > 3, "sampling explored several tools"
    arities = policy.arities[tools]
    for slot in range(policy.n_slots):
        active = slot < arities
        allowed = batch_masks.argument[rows, tools, slot, action[:, 1 + slot]]
        assert allowed[active].all(), f"an entity the argument mask forbids was sampled for slot {slot}"


def test_ppo_trains_the_team_and_reports_team_metrics(tmp_path, tiny_ppo):
    run_dir = tmp_path / "team"
    result = ppo.train(ppo.Config(env_id=TEAM, total_steps=256, run_dir=str(run_dir), **tiny_ppo))
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"charts/episodic_return", "losses/policy_loss", "metrics/success", "metrics/tool_reliability",
            "eval/test_success"} <= tags
    assert result.total_steps == 256
    assert {"success", "tool_reliability", "handoffs"} <= set(result.test_metrics) and result.test_metrics["episodes"] == 2
    payload = common.load_checkpoint(run_dir / common.CHECKPOINT_NAME)
    assert payload["policy_spec"]["n_agents"] == 4
    restored = build_policy(payload["policy_spec"])
    restored.load_state_dict(payload["policy"])


def test_training_envs_use_the_milder_training_reward():
    config = ppo.Config(env_id=TEAM)
    env = common.make_env(TEAM, env_kwargs=ppo.training_env_kwargs(config))
    rewards = env.unwrapped.base.reward_config
    assert rewards.incorrect_call == ppo.TRAINING_REWARD["incorrect_call"] and rewards.failure == ppo.TRAINING_REWARD["failure"]


def test_agentgym_train_support_team_reports_handoffs_on_both_splits(tmp_path, capsys):
    tiny = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "embed_dim=16", "--set", "layers=1", "--set", "heads=2",
            "--set", "ff_dim=32", "--set", "eval_every_steps=0", "--set", "progress=false", "--eval-episodes", "2"]
    assert main(["train", "support_team", "--total-steps", "32", "--device", "cpu", "--run-dir", str(tmp_path), *tiny]) == 0
    out = capsys.readouterr().out
    assert "support_team_v0, ppo" in out and "| test" in out and "| train" in out and "handoffs" in out
    checkpoint = tmp_path / "support_team_v0__ppo__seed0" / "checkpoint.pt"
    assert main(["eval", str(checkpoint), "--split", "test", "--episodes", "2"]) == 0
    assert "success" in capsys.readouterr().out


@pytest.mark.parametrize("algo", ["grpo", "bc", "sb3-ppo"])
def test_single_agent_algorithms_on_the_team_are_a_clear_error(tmp_path, capsys, algo):
    assert main(["train", "support_team", "--algo", algo, "--run-dir", str(tmp_path)]) == 2
    assert "team env trains with ppo" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["grpo", "bc"])
def test_single_agent_trainers_called_directly_reject_the_team(tmp_path, module):
    trainer = importlib.import_module(f"trainers.{module}")
    with pytest.raises(ValueError, match="single-agent"):
        trainer.train(trainer.Config(env_id="support_team_v0", run_dir=str(tmp_path), progress=False))
