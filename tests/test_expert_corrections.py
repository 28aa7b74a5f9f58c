"""ExpertCorrections: the scripted expert's next call on the states an agent reaches (DAgger's labels)."""

import json

import gymnasium as gym
import pytest

from agentgym_envs.evaluation import ExpertPolicy, run_episode
from agentgym_envs.wrappers import ExpertCorrections

CS = "AgentGym/CustomerSupport-v0"


def corrections_env(tmp_path, **kwargs):
    return ExpertCorrections(gym.make(CS, action_mode="text"), tmp_path / "corrections.jsonl", **kwargs)


def read(tmp_path):
    return [json.loads(line) for line in (tmp_path / "corrections.jsonl").read_text().splitlines()]


def called(message):
    function = message["tool_calls"][0]["function"]
    return function["name"], json.loads(function["arguments"])


def test_a_miscopied_lookup_is_labelled_with_the_expert_lookup_and_so_is_every_later_state(tmp_path):
    env = corrections_env(tmp_path)
    expert = ExpertPolicy(env)
    observation, info = env.reset(seed=3)
    right = json.loads(expert(observation, info))
    miscopied = {**right, "arguments": {"email": "x" + right["arguments"]["email"]}}
    env.step(json.dumps(miscopied))
    later = expert(observation, info)
    env.step(later)
    first, second = read(tmp_path)
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    assert called(first["messages"][-1]) == (right["name"], right["arguments"])
    assert first["messages"][-1]["tool_calls"][0]["id"] == "call_1"
    context, label = second["messages"][:-1], second["messages"][-1]
    assert [m.get("weight") for m in context if m["role"] == "assistant"] == [0]
    assert called(context[2]) == (miscopied["name"], miscopied["arguments"])
    assert context[3]["content"].startswith("Error: no user with email")
    assert called(label) == (right["name"], right["arguments"])  # the lookup, again, with the address as written
    assert label["tool_calls"][0]["id"] == "call_2" and "weight" not in label
    assert first["task_id"] == second["task_id"] == info["task_id"] and first["tools"] == env.unwrapped.tool_schemas
    assert env.records == 2 and env.labelled_episodes == 1


def test_an_unreadable_reply_is_a_slip(tmp_path):
    env = corrections_env(tmp_path)
    env.reset(seed=0)
    env.step("I will look the customer up now.")
    (record,) = read(tmp_path)
    assert record["messages"][-1]["role"] == "assistant" and record["messages"][-1]["tool_calls"]


def test_the_experts_own_episodes_leave_no_corrections(tmp_path):
    env = corrections_env(tmp_path)
    expert = ExpertPolicy(env)
    for seed in range(5):
        _, metrics = run_episode(env, expert, seed=seed)
        assert metrics["success"] == 1.0
    assert env.records == 0 and not (tmp_path / "corrections.jsonl").exists()


def test_all_states_labels_every_step_with_the_call_the_expert_then_makes(tmp_path):
    env = corrections_env(tmp_path, all_states=True)
    run_episode(env, ExpertPolicy(env), seed=1)
    records = read(tmp_path)
    made = [m for m in records[-1]["messages"] if m["role"] == "assistant"]
    assert len(records) == len(made) == env.unwrapped.episode.calls
    assert [called(r["messages"][-1]) for r in records] == [called(m) for m in made]
    assert env.labelled_episodes == 1


def test_a_step_before_reset_is_refused(tmp_path):
    with pytest.raises(gym.error.ResetNeeded):
        corrections_env(tmp_path).step("{}")
