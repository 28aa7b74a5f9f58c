"""Every env's constructor arguments: a value of the wrong type or range is refused by
``gym.make`` with a clear error, or the env it makes resets and steps (never a crash later)."""

from __future__ import annotations

import inspect
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
             for name in inspect.signature(cls.__init__).parameters if name not in ("self", "scenario", "kwargs", "render_mode")]
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("env_id", TOP_IDS)
def test_a_bad_argument_is_refused_at_make_or_harmless(env_id):
    for name in constructor_arguments(env_id):
        for value in BAD_VALUES:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    env = gym.make(env_id, **{name: value})
            except (ValueError, TypeError, FileNotFoundError):
                continue
            env.reset(seed=0)
            for _ in range(4):
                *_, terminated, truncated, _ = env.step(env.action_space.sample())
                if terminated or truncated:
                    env.reset()
            env.close()
