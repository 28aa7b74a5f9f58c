"""Parameter-shared PPO on the support team: the team env through the trainers' entry points,
the agent-id input of the token policy, and masks that keep agents to the tools they hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from agentgym_envs.cli import main
from agentgym_envs.multiagent.policies import ExpertTeam
from trainers import checkpoints
from trainers.lifecycle import start
from trainers.policy import Masks, TokenPolicyConfig, build_policy
from trainers.run import TrainRequest, canonical_env_id, make_env
from trainers.torch_policy import TRAINING_RETURN_TAG, network_env, new_policy

TEAM = "AgentGym/SupportTeam-v1"
TINY_CONFIG = TokenPolicyConfig(embed_dim=16, layers=1, heads=2, ff_dim=32)


def expert_states(episodes: int = 5):
    """The team env as trainers see it, a fresh shared policy, and the observations and masks
    along expert-team episodes (every agent holds the ticket at some point)."""
    env = network_env(lambda: make_env(TEAM, "train", {"context_len": 64, "entity_len": 8}), 320, 12)  # the env's layout wins
    policy = new_policy(env, TINY_CONFIG)
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
    assert canonical_env_id("support_team") == TEAM == canonical_env_id("SupportTeam-v1")
    env, policy, obs, _ = expert_states()
    agents = env.unwrapped.agents
    assert policy.spec["n_agents"] == len(agents) == 4
    assert set(obs[:, 0].tolist()) == set(range(len(agents))), "every agent held the ticket"
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert observation[0] == agents.index(env.unwrapped.base.holder)
    assert observation.shape == (1 + 64 + env.unwrapped.base.scenario.max_entities * 8,)


def test_unknown_env_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown environment 'support_tema'"):
        canonical_env_id("support_tema")


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


def test_ppo_trains_the_team_and_reports_team_metrics(train_tiny, tiny_ppo):
    result = train_tiny("ppo", 256, env="support_team", **tiny_ppo)
    run_dir = Path(result.run_dir)
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {TRAINING_RETURN_TAG, "losses/policy_loss", "metrics/success", "metrics/tool_reliability",
            "eval/validation_success"} <= tags
    assert result.total_steps == 256 and run_dir.name == "SupportTeam-v1__ppo__seed0"
    assert {"success", "tool_reliability", "handoffs"} <= set(result.test_metrics) and result.test_metrics["episodes"] == 2
    payload = checkpoints.load(run_dir / "checkpoint.pt")
    assert payload["policy_spec"]["n_agents"] == 4
    restored = build_policy(payload["policy_spec"])
    restored.load_state_dict(payload["policy"])


def test_training_envs_use_the_scenarios_training_reward(tmp_path):
    run = start(TrainRequest("support_team", run_root=str(tmp_path)))
    rewards = run.make_env("train", training=True).unwrapped.base.reward_config
    declared = make_env(TEAM, "train", {}).unwrapped.training_reward
    assert declared and all(getattr(rewards, name) == value for name, value in declared.items())


def test_agentgym_train_support_team_reports_handoffs_on_both_splits(tmp_path, capsys):
    tiny = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "embed_dim=16", "--set", "layers=1", "--set", "heads=2",
            "--set", "ff_dim=32", "--set", "eval_every_steps=0", "--no-progress", "--eval-episodes", "2"]
    assert main(["train", "support_team", "--total-steps", "32", "--device", "cpu", "--run-dir", str(tmp_path), *tiny]) == 0
    out = capsys.readouterr().out
    assert "SupportTeam-v1, ppo" in out and "| test" in out and "| train" in out and "handoffs" in out
    checkpoint = tmp_path / "SupportTeam-v1__ppo__seed0" / "checkpoint.pt"
    assert main(["eval", str(checkpoint), "--split", "test", "--episodes", "2"]) == 0
    assert "success" in capsys.readouterr().out


def test_behaviour_cloning_clones_the_expert_team(tmp_path, capsys):
    tiny = ["--set", "epochs=20", "--set", "eval_every_epochs=20", "--set", "learning_rate=0.01", "--set", "embed_dim=16",
            "--set", "layers=1", "--set", "heads=2", "--set", "ff_dim=32", "--set", "eval_curve_episodes=2", "--no-progress",
            "--eval-episodes", "2"]
    assert main(["train", "support_team", "--algo", "bc", "--total-steps", "64", "--device", "cpu", "--run-dir", str(tmp_path),
                 *tiny]) == 0
    assert "SupportTeam-v1, bc" in capsys.readouterr().out
    events = EventAccumulator(str(tmp_path / "SupportTeam-v1__bc__seed0")).Reload()
    accuracy = [event.value for event in events.Scalars("losses/bc_accuracy")]
    loss = [event.value for event in events.Scalars("losses/bc_loss")]
    # it learns the expert team's calls (measured: loss 2.44 -> 0.83, accuracy 0.19 -> 0.78)
    assert len(loss) == 20 and loss[-1] < loss[0] / 2 and accuracy[-1] > 0.5 > accuracy[0]
