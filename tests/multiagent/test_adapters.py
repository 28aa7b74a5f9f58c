"""The token-ids wrapper and the single-agent adapter for parameter-shared training."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_envs.core.agent import Turn, expert_action
from agentgym_envs.evaluation import evaluate
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import ExpertTeam
from agentgym_envs.multiagent.wrappers import ActiveAgentEnv, TeamTokenIds
from agentgym_envs.wrappers.tokens import PAD_ID, episode_token_ids


def adapter(**kwargs) -> ActiveAgentEnv:
    return ActiveAgentEnv(support_team_v0.parallel_env(**kwargs), context_len=64, entity_len=4)


def test_token_ids_are_the_single_agent_layout_for_the_holder_and_padding_for_the_others():
    env = TeamTokenIds(support_team_v0.parallel_env(), context_len=64, entity_len=4)
    observations, _ = env.reset(seed=2)
    base = env.unwrapped
    expected = episode_token_ids(base.episode, 64, 4)
    assert np.array_equal(observations["triage"]["observation"], expected)
    assert (observations["billing"]["observation"] == PAD_ID).all()
    assert observations["triage"]["observation"].shape == (64 + 36 * 4,)
    assert all(env.observation_space(a).contains(o) for a, o in observations.items())


def test_adapter_passes_the_gymnasium_env_checker():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(adapter(), skip_render_check=True)


def test_adapter_refuses_an_observation_that_does_not_fit_the_teams_action_mode():
    with pytest.raises(ValueError, match="action_mode=structured"):
        adapter(action_mode="text")
    with pytest.raises(ValueError, match="action_mode=text"):
        ActiveAgentEnv(support_team_v0.parallel_env(), observation="text")


def test_in_text_mode_one_language_model_plays_every_agent_with_the_holders_view_and_tools():
    env = gym.make("AgentGym/SupportTeam-L0-v1", action_mode="text", split="test")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)
    team = env.unwrapped.base
    for seed in range(5):
        observation, info = env.reset(seed=seed)
        done, acting = False, []
        while not done:
            holder = team.holder
            assert observation.startswith(team.header(holder)) and info["messages"][0]["role"] == "system"
            assert info["messages"][0]["content"].endswith(team.header(holder))
            names = [schema["function"]["name"] for schema in env.unwrapped.tool_schemas]
            assert names == [t for t in team.tool_names if t in team.scenario.holdings[holder]]
            observation, reward, terminated, truncated, info = env.step(expert_action(team.episode, "text"))
            acting.append(info["agent"])
            done = terminated or truncated
        assert info["metrics"]["success"] == 1.0 and len(set(acting)) == 2


def test_in_text_mode_a_call_of_a_tool_the_holder_lacks_is_an_error_result():
    env = gym.make("AgentGym/SupportTeam-L0-v1", action_mode="text")
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step('{"name": "send_reset_link", "arguments": {"user_id": "u1"}}')
    assert "not available to this agent" in info["error"] and not (terminated or truncated)


def test_in_text_mode_the_tools_before_a_reset_are_a_clear_error():
    env = gym.make("AgentGym/SupportTeam-L0-v1", action_mode="text")
    with pytest.raises(RuntimeError, match="reset"):
        _ = env.unwrapped.tool_schemas
    env.reset(seed=0)
    assert env.unwrapped.tool_schemas


def test_integrations_that_fix_one_tool_list_per_episode_refuse_the_team():
    from agentgym_envs.external_trainers.episode import TextEpisode
    from agentgym_envs.external_trainers.trl_env import environment_class

    with pytest.raises(ValueError, match="ticket holder"):
        environment_class("AgentGym/SupportTeam-L0-v1")
    with pytest.raises(ValueError, match="ticket holder"):
        TextEpisode("AgentGym/SupportTeam-L0-v1")
    assert TextEpisode("AgentGym/CustomerSupport-L0-v1").tool_schemas  # a single agent's tools are the episode's


def test_an_openenv_session_refuses_the_team_when_it_opens():
    pytest.importorskip("openenv", reason="the serve extra (openenv) is not installed")
    from agentgym_envs.external_trainers.openenv.sessions import AgentGymEnvironment, BadReset, ServeConfig

    with pytest.raises(BadReset, match="ticket holder"):
        AgentGymEnvironment(ServeConfig("AgentGym/SupportTeam-L0-v1"))


def test_adapter_presents_the_holder_with_its_agent_id_and_masks_and_the_expert_solves_tickets():
    env = adapter()
    expert = ExpertTeam(env.team)
    agents = env.base.possible_agents
    for seed in range(20):
        observation, info = env.reset(seed=seed)
        done, acting = False, []
        while not done:
            holder = env.base.holder
            assert observation["agent_id"] == agents.index(holder) and info["next_agent"] == holder
            masks = env.action_masks()
            held = np.flatnonzero(masks[: len(env.base.tool_names)])
            assert [env.base.tool_names[i] for i in held] == [t for t in env.base.tool_names if t in env.base.scenario.holdings[holder]]
            assert not info["argument_mask"][~env.base.holds_tools(holder)].any()
            action = expert(holder, None, {})
            offsets = np.cumsum([0, *env.action_space.nvec[:-1]])
            assert masks[offsets + action].all(), "the expert's action must be allowed by the mask"
            observation, reward, terminated, truncated, info = env.step(action)
            acting.append(info["agent"])
            done = terminated or truncated
        assert info["metrics"]["success"] == 1.0 and set(info["agent_metrics"]) == set(agents)
        assert acting[0] == "triage" and len(set(acting)) == 2


def test_adapter_rewards_count_the_team_outcome_once():
    env = adapter()
    env.reset(seed=4)
    expert, total = ExpertTeam(env.team), 0.0
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(expert(env.base.holder, None, {}))
        total += reward
        done = terminated or truncated
    team = info["metrics"]
    final = env.base.reward_config.final_reward(team["score"], True, team["cost_reduction"], team["time_savings"])
    assert total == pytest.approx(team["correct_calls"] * 10.0 + final)


def test_maskable_ppo_trains_one_shared_network_on_the_adapter():
    """A smoke loop: sb3-contrib's MaskablePPO (one network; the agent id is an input) runs
    on the adapter with its masks and finishes team episodes."""
    from sb3_contrib import MaskablePPO

    env = adapter()
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64
    observation, _ = env.reset(seed=0)
    action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[action[0]], "the predicted tool must be one the holder holds"


class HandingOff:
    """A batch policy that hands each ticket on (the first conversation of a batch to billing, the others to
    accounts) and records, per call, each conversation's holder and the tools it was given."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, tuple[str, ...]]]] = []

    def respond(self, conversations, tools):
        names = tuple(schema["function"]["name"] for schema in tools)
        holders = [conversation[0]["content"].rsplit("AGENT ", 1)[1].split(":")[0] for conversation in conversations]
        self.calls.append([(holder, names) for holder in holders])
        return [Turn(action=json.dumps({"name": "handoff", "arguments": {"to": "billing" if i == 0 else "accounts"}}))
                for i in range(len(conversations))]


def test_a_batch_policy_is_asked_once_per_tool_set_with_each_holders_tools():
    policy = HandingOff()
    evaluate("AgentGym/SupportTeam-L0-v1", policy, episodes=3, concurrency=3, action_mode="text")
    team = support_team_v0.parallel_env()
    held = {agent: tuple(schema["function"]["name"] for schema in team.tool_schemas(agent)) for agent in team.possible_agents}
    assert policy.calls[0] == [("triage", held["triage"])] * 3  # every ticket starts with triage: one batch
    assert [len(call) for call in policy.calls[1:3]] == [1, 2]  # then billing's ticket and accounts' two, apart
    assert all(tools == held[holder] for call in policy.calls for holder, tools in call)
