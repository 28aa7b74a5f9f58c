"""The curriculum wrapper: it moves up a level once the windowed success rate reaches the threshold."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy
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


class OneStep(gym.Env):
    """A one-step env whose episode succeeds when the action is 1: the curriculum's input, exactly."""

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int):
        return 0, float(action), True, False, {"metrics": {"success": float(action)}}


def levels_after(outcomes: list[int], threshold: float, window: int) -> tuple[list[float], int]:
    """The level each episode of ``outcomes`` (1: success) was played on, and the level the next reset starts."""
    env = Curriculum([OneStep, OneStep], threshold=threshold, window=window)
    played = []
    for outcome in outcomes:
        env.reset()
        played.append(env.step(outcome)[4]["metrics"][LEVEL_KEY])
    env.reset()
    return played, env.level


@pytest.mark.parametrize("threshold, window, needed", [(0.75, 4, 3), (0.5, 4, 2), (1.0, 3, 3), (0.6, 5, 3)])
def test_one_success_short_of_the_threshold_stays_and_reaching_it_moves_up(threshold, window, needed):
    short = [1] * (needed - 1) + [0] * (window - needed + 1)
    assert levels_after(short, threshold, window) == ([0.0] * window, 0)
    reached = [0] * (window - needed) + [1] * needed
    assert levels_after(reached, threshold, window) == ([0.0] * window, 1)


def test_the_rate_is_taken_over_the_latest_window_of_episodes():
    # 3 of the latest 4 succeed only after the fifth episode: the first success has left the window by then
    played, level = levels_after([1, 0, 0, 1, 1], threshold=0.75, window=4)
    assert played == [0.0] * 5 and level == 0
    played, level = levels_after([1, 0, 0, 1, 1, 1], threshold=0.75, window=4)
    assert played == [0.0] * 6 and level == 1
