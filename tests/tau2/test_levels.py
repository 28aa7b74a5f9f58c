"""The tau2 ladders: each -v1 id builds, passes the env checker (gymnasium's, and SB3's through
the features observation), and the expert solves it on its three splits (the splits' disjointness:
test_versions.py)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family
from agentgym_envs.scenarios.tau2.scenario import reference_actions

from .conftest import DATA_DIR, require_data

LEVEL_IDS = [env_id for name in ("tau2_retail", "tau2_airline", "tau2_telecom") for env_id in family(name, 1).ids()]


def make(env_id: str, **kwargs) -> gym.Env:
    if "Telecom" not in env_id:
        require_data(DATA_DIR / "retail" / "db.json")
        kwargs["data_dir"] = DATA_DIR
    return gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_level_passes_the_env_checkers(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make(env_id).unwrapped, skip_render_check=True)
        sb3_check_env(make(env_id, split="validation", observation="features"), warn=False)


@pytest.mark.parametrize("split", ["train", "validation", "test"])
@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_expert_solves_the_level(env_id, split):
    assert evaluate(make(env_id, split=split), "expert", episodes=5, split=split)["success"] == 1.0


def test_levels_select_kinds_and_calls():
    rng = np.random.default_rng(0)
    retail = make("AgentGym/Tau2Retail-L0-v0").unwrapped
    assert retail.scenario.solo and all(
        retail.tasks.sample(rng).description["purpose"] == "generated cancel task" for _ in range(5))
    telecom = make("AgentGym/Tau2Telecom-L0-v0", split="test").unwrapped
    assert telecom.max_turns == 6 and max(reference_actions(t) for t in telecom.tasks.tasks) <= 2
    assert {task.id.split("]")[0] for task in telecom.tasks.tasks} == {"[service_issue"}
    telecom = make("AgentGym/Tau2Telecom-L0-v1", split="test").unwrapped
    assert telecom.max_turns == 12 and max(reference_actions(t) for t in telecom.tasks.tasks) == 3
    assert len(telecom.tasks.tasks) == 21
    airline = make("AgentGym/Tau2Airline-L1-v1").unwrapped
    assert {airline.tasks.sample(rng).description["purpose"] for _ in range(20)} == {
        "generated cancel task", "generated compensation task"}
    assert make("AgentGym/Tau2Telecom-L0-v0", max_turns=30).unwrapped.max_turns == 30
    with pytest.raises(ValueError, match="kinds must be a non-empty subset of"):
        make("AgentGym/Tau2Telecom-v0", kinds=("roaming",))
    with pytest.raises(ValueError, match="kinds selects generated tasks"):
        make("AgentGym/Tau2Retail-L0-v0", source="real")
