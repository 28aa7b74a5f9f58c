"""The tau2 ladders: each level id builds, passes the env checker, the expert solves it on
both splits, and its test tasks share no user (generated) or task (real) with train."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_envs.levels import level_ids
from agentgym_envs.policies import evaluate
from agentgym_envs.scenarios.tau2.scenario import reference_actions

from .conftest import DATA_DIR, require_data

LEVEL_IDS = [env_id for name in ("tau2_retail", "tau2_airline", "tau2_telecom") for env_id in level_ids(name)[:-1]]


def make(env_id: str, **kwargs) -> gym.Env:
    if "Telecom" not in env_id:
        require_data(DATA_DIR / "retail" / "db.json")
        kwargs["data_dir"] = DATA_DIR
    return gym.make(env_id, **kwargs)


def identities(env_id: str, split: str) -> set[str]:
    """Who the tasks' customers are (generated), or the task ids (real)."""
    tasks = make(env_id, split=split).unwrapped.tasks
    if "Telecom" in env_id:
        return {task.id for task in tasks.tasks}
    rng = np.random.default_rng(0)
    return {tasks.sample(rng).user_scenario["instructions"]["known_info"] for _ in range(20)}


@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_level_passes_the_env_checker_and_splits_are_disjoint(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make(env_id).unwrapped, skip_render_check=True)
    assert not identities(env_id, "train") & identities(env_id, "test")


@pytest.mark.parametrize("split", ["train", "test"])
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
    assert make("AgentGym/Tau2Telecom-L0-v0", max_turns=30).unwrapped.max_turns == 30
    with pytest.raises(ValueError, match="kinds must be a non-empty subset of"):
        make("AgentGym/Tau2Telecom-v0", kinds=("roaming",))
    with pytest.raises(ValueError, match="kinds selects generated tasks"):
        make("AgentGym/Tau2Retail-L0-v0", source="real")
