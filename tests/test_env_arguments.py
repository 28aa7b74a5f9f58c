"""Every env's constructor arguments: a value of the wrong type or range is refused by
``gym.make`` with a ValueError naming the argument, or the env it makes resets and steps within
its spaces (never a crash later)."""

from __future__ import annotations

import inspect
import math
import warnings

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the env ids)

TOP_IDS = sorted(i for i in gym.registry if i.startswith("AgentGym/") and "-L" not in i)
BAD_VALUES = ["x", -1, 1.5, True]


def constructor_arguments(env_id: str) -> list[str]:
    """The named arguments of the env class behind ``env_id`` and of the classes it builds on
    (not ``render_mode``: gymnasium's ``make`` reads it first)."""
    env = gym.make(env_id)
    classes = type(env.unwrapped).__mro__
    env.close()
    names = [name for cls in classes if "__init__" in cls.__dict__
             for name in inspect.signature(cls.__init__).parameters
             if name not in ("self", "scenario", "args", "kwargs", "render_mode")]
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("env_id", TOP_IDS)
def test_a_bad_argument_is_refused_at_make_naming_it_or_the_env_stays_in_its_spaces(env_id):
    for name in constructor_arguments(env_id):
        for value in BAD_VALUES:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    env = gym.make(env_id, **{name: value})
            except ValueError as error:  # TaskFormatError is a ValueError
                assert name in str(error) or name.replace("_", " ") in str(error), (name, value, str(error))
                continue
            except TypeError as error:  # an argument a subclass sets itself
                assert f"unexpected keyword argument '{name}'" in str(error), (name, value, str(error))
                continue
            observation, _ = env.reset(seed=0)
            assert env.observation_space.contains(observation), (name, value)
            for _ in range(4):
                observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                assert env.observation_space.contains(observation) and math.isfinite(float(reward)), (name, value)
                if terminated or truncated:
                    env.reset()
            env.close()


@pytest.mark.parametrize(("env_id", "argument", "value"), [
    ("AgentGym/CustomerSupport-v0", "max_turns", 0), ("AgentGym/CustomerSupport-v0", "mask_repeats", "False"),
    ("AgentGym/Math-v0", "history_turns", -1), ("AgentGym/Coding-v0", "distractors", True),
    ("AgentGym/Coding-v0", "cache_results", "x"), ("AgentGym/Coding-v0", "level", True),
    ("AgentGym/SupportTeam-v0", "entity_len", -1), ("AgentGym/SupportTeam-v0", "context_len", True),
])
def test_a_checked_argument_is_refused_with_an_error_naming_it(env_id, argument, value):
    with pytest.raises(ValueError, match=f"{argument} must be"):
        gym.make(env_id, **{argument: value})
