"""The curriculum wrapper: it moves up a level once the windowed success rate reaches the threshold."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.policies import ExpertPolicy, RandomPolicy
from agentgym_envs.wrappers import LEVEL_KEY, Curriculum

make_support = functools.partial(gym.make, "AgentGym/CustomerSupport-v0")


def play(env: Curriculum, agent, episodes: int, seed: int = 0) -> list[float]:
    """The level each episode was played on, from its end metrics."""
    levels = []
    for episode in range(episodes):
        observation, info = env.reset(seed=seed + episode)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(agent(observation, info))
            done = terminated or truncated
        levels.append(info["metrics"][LEVEL_KEY])
    return levels


def expert_for(env: Curriculum):
    return lambda observation, info: ExpertPolicy(env.unwrapped)(observation, info)


def test_a_solved_level_moves_the_curriculum_up_after_a_full_window():
    env = Curriculum([make_support, make_support], threshold=1.0, window=3)
    assert play(env, expert_for(env), 5) == [0.0, 0.0, 0.0, 1.0, 1.0]


def test_the_last_level_is_kept():
    env = Curriculum([make_support], threshold=0.5, window=1)
    assert play(env, expert_for(env), 3) == [0.0, 0.0, 0.0]


def test_failures_keep_the_curriculum_on_its_level():
    env = Curriculum([make_support, make_support], threshold=0.5, window=2)
    assert set(play(env, lambda observation, info: RandomPolicy(env.unwrapped, seed=0)(observation, info), 6)) == {0.0}


def test_levels_with_other_spaces_are_refused_when_reached():
    env = Curriculum([make_support, functools.partial(gym.make, "AgentGym/Math-v0")], threshold=1.0, window=1)
    with pytest.raises(ValueError, match="other spaces than level 0"):
        play(env, expert_for(env), 2)


def test_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="at least one level"):
        Curriculum([])
    with pytest.raises(ValueError, match="threshold must be in"):
        Curriculum([make_support], threshold=0.0)
