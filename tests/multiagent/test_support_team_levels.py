"""support_team_v0's levels at every version: PettingZoo's API tests, the expert team on every
split, and the single-agent adapter's level ids."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

from agentgym_envs.levels import family
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import evaluate_team

LEVELS = [(version, level) for version in (0, 1) for level in range(len(family("support_team", version).levels))]
SPLITS = {0: ("train", "test"), 1: ("train", "validation", "test")}


@pytest.fixture(autouse=True)
def quiet_pettingzoo_advice():
    """PettingZoo's checkers warn about Text spaces, tuple masks and agent names; only errors count."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize(("version", "level"), LEVELS)
def test_level_passes_the_pettingzoo_api_tests(version, level):
    api_test(support_team_v0.env(level=level, version=version), num_cycles=30)
    parallel_api_test(support_team_v0.parallel_env(level=level, version=version), num_cycles=30)


@pytest.mark.parametrize(("version", "level"), LEVELS)
def test_expert_team_solves_the_level(version, level):
    for split in SPLITS[version]:
        env = support_team_v0.parallel_env(level=level, split=split, version=version)
        assert evaluate_team(env, "expert", episodes=5)["success"] == 1.0, split


def test_level_zero_holds_password_resets_only():
    env = support_team_v0.parallel_env(level=0)
    for seed in range(5):
        env.reset(seed=seed)
        assert env.episode.task.kind == "password_reset"


@pytest.mark.parametrize(("version", "level"), LEVELS)
def test_single_agent_level_id_passes_the_env_checker(version, level):
    check_env(gym.make(f"AgentGym/SupportTeam-L{level}-v{version}").unwrapped, skip_render_check=True)
