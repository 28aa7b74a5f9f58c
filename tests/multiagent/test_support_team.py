"""support_team_v0: tickets and seeds, turns, handoffs, errors, rewards, infos, reference teams."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import agentgym_envs
from agentgym_envs.cli import main as agentgym_main
from agentgym_envs.levels import family
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import ExpertTeam, RandomTeam, evaluate_team, run_team_episode
from agentgym_envs.multiagent.wrappers import ActiveAgentEnv
from agentgym_envs.scenarios.customer_support import generate_ticket, resolution_plan

AGENTS = ["triage", "billing", "technical", "accounts"]
KIND_SEEDS = {}  # ticket kind -> a train seed whose ticket has that kind, filled lazily


def seed_of_kind(kind: str) -> int:
    if not KIND_SEEDS:
        env = support_team_v0.parallel_env()
        for seed in range(200):
            env.reset(seed=seed)
            KIND_SEEDS.setdefault(env.episode.task.kind, seed)
    return KIND_SEEDS[kind]


def structured(env, name: str, *values) -> np.ndarray:
    """The structured action calling ``name`` with the entity rows holding ``values``."""
    tool = env.scenario.tools[env.tool_names.index(name)]
    action = np.zeros(len(env.nvec), dtype=np.int64)
    action[0] = env.tool_names.index(name)
    for position, (arg, value) in enumerate(zip(tool.args, values)):
        action[1 + position] = env.episode.entities.find(arg.entity, value)
    return action


def text(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


# ----------------------------------------------------------------- tickets and seeds
@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_seed_draws_the_same_ticket_as_the_single_agent_env(split):
    single = gym.make("AgentGym/CustomerSupport-v1", split=split)
    team = support_team_v0.parallel_env(split=split)
    for seed in range(20):
        ticket_text, _ = single.reset(seed=seed)
        team.reset(seed=seed)
        assert team.episode.task == single.unwrapped.episode.task
        assert team.episode.prompt in ticket_text


def test_task_id_option_picks_the_ticket():
    env = support_team_v0.parallel_env()
    env.reset(options={"task_id": "test-42"})
    assert env.episode.task == generate_ticket("test", 42, version=1)


def test_task_file_tickets_are_played(tmp_path):
    path = tmp_path / "tickets.jsonl"
    tickets = [generate_ticket("train", i) for i in range(3)]
    path.write_text("\n".join(json.dumps(t.to_dict()) for t in tickets))
    env = support_team_v0.parallel_env(task_file=path)
    _, infos = run_team_episode(env, ExpertTeam(env), options={"task_id": tickets[2].task_id})
    assert infos["triage"]["task_id"] == tickets[2].task_id
    assert infos["triage"]["team_metrics"]["success"] == 1.0


# ----------------------------------------------------------------- the team
def test_agents_hold_the_documented_tools_and_the_docstring_table_says_so():
    env = support_team_v0.parallel_env()
    assert env.possible_agents == AGENTS
    for agent, tools in support_team_v0.ROSTER.items():
        assert set(env.scenario.holdings[agent]) == {*tools, "handoff"}
        row = f"| `{agent}` | {', '.join(f'`{t}`' for t in tools)} |"
        assert row in support_team_v0.SupportTeamParallelEnv.__doc__
    held = set().union(*support_team_v0.ROSTER.values())
    assert held == {tool.name for tool in env.scenario.base.tools}


@pytest.mark.parametrize("kind", ["password_reset", "billing_inquiry", "api_integration", "refund_request", "data_migration"])
def test_every_ticket_kind_needs_a_handoff(kind):
    env = support_team_v0.parallel_env()
    env.reset(seed=seed_of_kind(kind))
    plan_tools = {call.name for call in resolution_plan(env.episode.task)}
    first = env.possible_agents[0]
    assert not plan_tools <= env.scenario.holdings[first], "the first holder alone could resolve it"
    _, infos = run_team_episode(env, ExpertTeam(env), seed=seed_of_kind(kind))
    assert infos[first]["team_metrics"]["success"] == 1.0
    assert infos[first]["team_metrics"]["handoffs"] >= 1


def test_handoff_passes_the_conversation_and_the_entity_table():
    env = support_team_v0.parallel_env()
    observations, _ = env.reset(seed=seed_of_kind("billing_inquiry"))
    email, user_id = env.episode.task.customer["email"], env.episode.task.customer["user_id"]
    assert email in observations["triage"]["text"] and email not in observations["billing"]["text"]
    env.step({"triage": structured(env, "lookup_user", email)})
    observations, rewards, _, _, infos = env.step({"triage": structured(env, "handoff", "billing")})
    assert env.holder == "billing" and infos["billing"]["holder"] == "billing"
    assert infos["triage"]["correct"] and rewards["triage"] == 10.0
    billing_view = observations["billing"]["text"]
    assert "you hold the ticket" in billing_view and user_id in billing_view and "lookup_user" in billing_view
    assert f"user_id: {user_id}" in billing_view  # the entity table came along
    assert "waiting; the ticket is with billing" in observations["triage"]["text"]
    tool_mask = observations["billing"]["action_mask"][0]
    assert [env.tool_names[i] for i in np.flatnonzero(tool_mask)] == [
        t for t in env.tool_names if t in env.scenario.holdings["billing"]
    ]
    assert not any(mask.any() for mask in observations["triage"]["action_mask"])


def test_handoff_is_judged_by_whether_the_receiver_holds_the_next_tool():
    env = support_team_v0.parallel_env(action_mode="text")
    env.reset(seed=seed_of_kind("password_reset"))
    _, rewards, _, _, infos = env.step({"triage": text("handoff", to="accounts")})
    assert not infos["triage"]["correct"] and rewards["triage"] == -20.0  # before the lookup triage can do
    _, _, _, _, infos = env.step({"accounts": text("handoff", to="accounts")})
    assert "already with accounts" in infos["accounts"]["error"] and not infos["accounts"]["correct"]
    assert env.holder == "accounts"


def test_handoff_to_an_unknown_agent_is_an_error_result():
    env = support_team_v0.parallel_env(action_mode="text")
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"triage": text("handoff", to="sales")})
    assert "must be one of ['triage', 'billing', 'technical', 'accounts']" in infos["triage"]["error"]
    assert env.holder == "triage"


# ----------------------------------------------------------------- errors, never exceptions
@pytest.mark.parametrize("action_mode", ["structured", "text"])
def test_a_tool_the_agent_does_not_hold_is_an_error_result(action_mode):
    env = support_team_v0.parallel_env(action_mode=action_mode)
    env.reset(seed=seed_of_kind("refund_request"))
    email = env.episode.task.customer["email"]
    env.step({"triage": structured(env, "lookup_user", email) if action_mode == "structured" else text("lookup_user", email=email)})
    user_id = env.episode.task.customer["user_id"]
    action = structured(env, "check_payment", user_id) if action_mode == "structured" else text("check_payment", user_id=user_id)
    _, rewards, terminations, _, infos = env.step({"triage": action})
    assert "not available to this agent" in infos["triage"]["error"] and not infos["triage"]["valid"]
    assert rewards["triage"] == -20.0 and not any(terminations.values())
    assert env.episode.world.inner.effects == []


@pytest.mark.parametrize("action_mode", ["structured", "text"])
def test_acting_out_of_turn_is_an_error_in_infos_and_is_ignored(action_mode):
    env = support_team_v0.parallel_env(action_mode=action_mode)
    env.reset(seed=seed_of_kind("password_reset"))
    user_id = env.episode.task.customer["user_id"]
    intruder = env.action_space("accounts").sample() if action_mode == "structured" else text("send_reset_link", user_id=user_id)
    calls_before = env.episode.calls
    _, rewards, _, _, infos = env.step({"triage": ExpertTeam(env)("triage", None, {}), "accounts": intruder})
    assert infos["accounts"]["error"].startswith("out of turn: the ticket is with triage")
    assert not infos["accounts"]["acted"] and infos["triage"]["acted"]
    assert rewards["accounts"] == 0.0 and env.episode.calls == calls_before + 1
    assert env.episode.world.inner.effects == []
    assert env.stats["accounts"].out_of_turn_actions == 1


def test_waiting_agents_sending_none_or_nothing_is_no_error():
    env = support_team_v0.parallel_env()
    env.reset(seed=3)
    _, _, _, _, infos = env.step({"triage": ExpertTeam(env)("triage", None, {}), "billing": None})
    assert all(infos[a]["error"] is None for a in AGENTS)


def test_a_holder_without_an_action_makes_an_invalid_turn():
    env = support_team_v0.parallel_env()
    env.reset(seed=3)
    _, rewards, _, _, infos = env.step({})
    assert "sent no action" in infos["triage"]["error"] and not infos["triage"]["valid"]
    assert rewards["triage"] == -20.0 and env.episode.invalid_calls == 1


@pytest.mark.parametrize("action", [[99, 0, 0], [0, 0], [0.5, 1, 1], "lookup_user", {"tool": 1}, [[1, 2], [3]], -1])
def test_structured_actions_outside_the_space_are_error_results(action):
    env = support_team_v0.parallel_env()
    env.reset(seed=3)
    _, rewards, terminations, truncations, infos = env.step({"triage": action})
    assert "outside the action space" in infos["triage"]["error"]
    assert rewards["triage"] == -20.0 and not terminations["triage"] and not truncations["triage"]


def test_stepping_a_finished_episode_raises_a_clear_error():
    env = support_team_v0.parallel_env()
    run_team_episode(env, ExpertTeam(env), seed=1)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({})


def test_max_cycles_truncates_every_agent_together():
    env = support_team_v0.parallel_env(max_cycles=3)
    env.reset(seed=0)
    for _cycle in range(3):
        _, rewards, terminations, truncations, infos = env.step({"triage": None})
    assert all(truncations.values()) and not any(terminations.values()) and env.agents == []
    assert infos["billing"]["team_metrics"]["turns"] == 3.0 and infos["billing"]["metrics"]["success"] == 0.0


# ----------------------------------------------------------------- rewards and infos
def test_rewards_are_own_tool_choice_plus_the_shared_team_outcome():
    env = support_team_v0.parallel_env()
    returns, infos = run_team_episode(env, ExpertTeam(env), seed=seed_of_kind("refund_request"))
    team = infos["triage"]["team_metrics"]
    config = env.reward_config
    final = config.final_reward(team["score"], True, team["cost_reduction"], team["time_savings"])
    for agent in AGENTS:
        own = infos[agent]["metrics"]["correct_calls"] * config.correct_call
        assert returns[agent] == pytest.approx(own + final)
    assert returns["triage"] == pytest.approx(2 * 10.0 + final)  # lookup_user, handoff
    assert returns["billing"] == pytest.approx(4 * 10.0 + final)  # payment, refund, email, close
    assert returns["technical"] == pytest.approx(final)


def test_infos_carry_agent_and_team_metrics_that_add_up():
    env = support_team_v0.parallel_env()
    _, infos = run_team_episode(env, RandomTeam(env, seed=0), seed=11)
    team = infos["triage"]["team_metrics"]
    per_agent = {a: infos[a]["metrics"] for a in AGENTS}
    for key in ("success", "tool_reliability", "handoffs", "tokens_used", "turns", "invalid_calls"):
        assert key in team and all(key in m for m in per_agent.values())
    for key in ("turns", "correct_calls", "invalid_calls", "handoffs", "tokens_used"):
        assert sum(m[key] for m in per_agent.values()) == team[key]
    assert all(m["success"] == team["success"] for m in per_agent.values())
    assert infos["triage"]["outcome"]["success"] == bool(team["success"])


def test_messages_name_the_agent_of_every_assistant_turn():
    env = support_team_v0.parallel_env()
    _, infos = run_team_episode(env, ExpertTeam(env), seed=seed_of_kind("billing_inquiry"))
    names = [m["name"] for m in infos["billing"]["messages"] if m["role"] == "assistant"]
    assert names == ["triage", "triage", "billing", "billing", "billing"]


# ----------------------------------------------------------------- APIs, modes, determinism
def test_aec_and_parallel_apis_play_the_same_episode():
    parallel = support_team_v0.parallel_env()
    _, parallel_infos = run_team_episode(parallel, ExpertTeam(parallel), seed=5)
    aec = support_team_v0.env()
    aec.reset(seed=5)
    expert = ExpertTeam(aec)
    for agent in aec.agent_iter():
        observation, _, termination, truncation, info = aec.last()
        aec.step(None if termination or truncation else expert(agent, observation, info))
    assert parallel_infos["triage"]["team_metrics"] == info["team_metrics"]
    assert parallel_infos["triage"]["messages"] == info["messages"]


def test_text_and_structured_modes_give_the_same_metrics():
    rows = []
    for action_mode in ("structured", "text"):
        env = support_team_v0.parallel_env(action_mode=action_mode)
        rows.append(evaluate_team(env, "expert", episodes=10, seed=100))
    assert rows[0] == rows[1]


@pytest.mark.parametrize("action_mode", ["structured", "text"])
def test_same_seed_same_trajectory_and_metrics(action_mode):
    def play():
        env = support_team_v0.parallel_env(action_mode=action_mode)
        trace = []
        for episode in range(3):
            team = RandomTeam(env, seed=episode)
            observations, infos = env.reset(seed=episode)
            while env.agents:
                actions = {a: team(a, observations[a], infos[a]) for a in env.agents}
                observations, rewards, terminations, truncations, infos = env.step(actions)
                trace.append((str(observations), rewards, terminations, truncations, json.dumps(infos, sort_keys=True)))
        return trace

    assert play() == play()


# ----------------------------------------------------------------- reference teams
@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_expert_team_solves_every_ticket(split):
    env = support_team_v0.parallel_env(split=split)
    result = evaluate_team(env, "expert", episodes=200, seed=0)
    assert result["success"] == 1.0 and result["tool_reliability"] == 1.0 and result["invalid_calls"] == 0.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_expert_team_solves_every_ticket_in_text_mode(split):
    env = support_team_v0.parallel_env(split=split, action_mode="text")
    assert evaluate_team(env, "expert", episodes=200, seed=0)["success"] == 1.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_random_team_is_far_below_the_expert(split):
    env = support_team_v0.parallel_env(split=split)
    result = evaluate_team(env, "random", episodes=200, seed=0)
    assert result["success"] <= 0.05 and result["tool_reliability"] < 0.2


# ----------------------------------------------------------------- registered for trainers only
def test_agentgym_list_and_the_gymnasium_registry_hold_only_the_training_adapter(capsys):
    assert not any("team" in entry.env_id.lower() or "team" in entry.name for entry in agentgym_envs.ENVIRONMENTS)
    ids = family("support_team", 0).ids() + family("support_team", 1).ids()  # the adapter and its levels
    assert sorted(env_id for env_id in gym.registry if "team" in env_id.lower()) == sorted(ids)
    assert isinstance(gym.make("AgentGym/SupportTeam-v0").unwrapped, ActiveAgentEnv)  # the single-agent adapter
    assert agentgym_main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "AgentGym/CustomerSupport-v1" in listing and "support_team" not in listing


def test_tool_schemas_and_ansi_render_follow_the_holder():
    env = support_team_v0.parallel_env(render_mode="ansi")
    env.reset(seed=seed_of_kind("password_reset"))
    names = [schema["function"]["name"] for schema in env.tool_schemas("accounts")]
    assert set(names) == env.scenario.holdings["accounts"] and "handoff" in names
    handoff = next(s for s in env.tool_schemas("triage") if s["function"]["name"] == "handoff")
    assert handoff["function"]["parameters"]["properties"]["to"]["enum"] == AGENTS
    assert env.render().startswith("HOLDER triage") and env.episode.prompt in env.render()


def test_a_bad_cycle_limit_is_a_clear_error_naming_it():
    with pytest.raises(ValueError, match="max_cycles must be None or an int >= 1, got 0"):
        support_team_v0.parallel_env(max_cycles=0)
