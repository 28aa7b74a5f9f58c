"""Fuzzing text actions: Math-v0 never raises, and bad calls are error results."""

from __future__ import annotations

import json

import gymnasium as gym
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentgym_envs  # noqa: F401

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
TOOL_NAMES = st.sampled_from(["calculator", "evaluate_expression", "sum_1_to_n", "submit_answer", "eval", ""])
ARGUMENT_NAMES = st.sampled_from(["operation", "a", "b", "expression", "n", "value", "x"])
CALLS = st.builds(
    lambda name, arguments: json.dumps({"name": name, "arguments": arguments}),
    TOOL_NAMES,
    st.dictionaries(ARGUMENT_NAMES, JSON_VALUES | st.sampled_from(["add", "power", "divide", "1 + 2"]), max_size=4),
)
HUGE_NUMBERS = st.sampled_from(["9" * 400, "9" * 5000, "1e400", "-1e400", "NaN", "Infinity"]).map(
    lambda number: f'{{"name": "calculator", "arguments": {{"operation": "add", "a": {number}, "b": 1}}}}'
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _env() -> gym.Env:
    env = gym.make("AgentGym/Math-v0", action_mode="text")
    env.reset(seed=0)
    return env


def _step_never_raises(env: gym.Env, action: str) -> dict:
    _, reward, terminated, truncated, info = env.step(action)
    assert isinstance(reward, float)
    if terminated or truncated:
        assert "metrics" in info
        env.reset(seed=0)
    return info


@SETTINGS
@given(st.lists(st.text(max_size=200), min_size=1, max_size=5))
def test_arbitrary_text_never_raises(actions):
    env = _env()
    for action in actions:
        info = _step_never_raises(env, action)
        assert not info["valid"] and info["error"]


@SETTINGS
@given(st.lists(CALLS | HUGE_NUMBERS, min_size=1, max_size=5))
def test_arbitrary_tool_calls_never_raise(actions):
    env = _env()
    for action in actions:
        _step_never_raises(env, action)


@SETTINGS
@given(
    st.sampled_from(["add", "subtract", "multiply", "divide", "power", "floor_divide", "modulo", "sqrt", 3, None]),
    JSON_VALUES,
    JSON_VALUES,
)
def test_ill_formed_calculator_input_gives_an_error_result(operation, a, b):
    env = _env()
    action = json.dumps({"name": "calculator", "arguments": {"operation": operation, "a": a, "b": b}})
    info = _step_never_raises(env, action)
    well_typed = (
        isinstance(operation, str) and operation in ("add", "subtract", "multiply", "divide", "power", "floor_divide", "modulo")
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    )
    if not well_typed:
        assert info["error"], f"{action} should be an error result"


@SETTINGS
@given(st.text(max_size=250))
def test_any_expression_is_a_result_or_an_error_result(expression):
    env = _env()
    info = _step_never_raises(env, json.dumps({"name": "evaluate_expression", "arguments": {"expression": expression}}))
    assert info["valid"]
    assert info["error"] is None or info["error"].startswith("Error: ")
