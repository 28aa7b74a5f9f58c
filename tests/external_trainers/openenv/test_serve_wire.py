"""The wire's fast paths give what the plain ones give: a client's message reads as
``json.loads`` reads it, and ``jsonable`` makes plain JSON of plain and other values."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest

from agentgym_envs.core.parsing import ToolCall
from agentgym_envs.external_trainers.openenv.sessions import jsonable
from agentgym_envs.external_trainers.openenv.ws import parse

MESSAGES = [
    '{"type": "step", "data": {"text": "{\\"name\\": \\"add\\", \\"arguments\\": {\\"a\\": 1.5, \\"b\\": -2}}"}}',
    '{"type": "reset", "data": {"seed": 123456789012345678901234567890}}',  # beyond 64 bits: still an int
    '{"type": "reset", "data": {"seed": -9999999999999999999}}',
    '{"a": NaN, "b": Infinity, "c": 1e400}',  # json reads these, orjson refuses them
    '{"a": 1, "a": 2, "t": "\\ud800 \\u00e9", "f": [0.1, 1e22, 5e-324, -0.0]}',
]


@pytest.mark.parametrize("raw", MESSAGES)
def test_a_message_reads_as_json_loads_reads_it(raw):
    assert repr(parse(raw)) == repr(json.loads(raw))


@pytest.mark.parametrize("raw", ["{", '{"a":}', "", '{"type": "step", "data": nan}'])
def test_a_malformed_message_raises_json_loads_own_error(raw):
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(raw)
    with pytest.raises(json.JSONDecodeError, match=raised.value.msg):
        parse(raw)


class Label(str):
    """A str subclass: jsonable returns it as it is, and makes it a plain str as a key."""


@dataclass
class Odd:
    items: set[int] = field(default_factory=lambda: {3})


def test_jsonable_makes_plain_json_of_plain_and_other_values():
    value = {"turn": 3, "valid": True, "error": None, "score": 0.5, "task_id": Label("t-1"), Label("k"): 1,
             7: "seven", (1, 2): [np.float64(1.5), np.int64(2), (True, None)],
             "tool_call": ToolCall("add", {"a": np.int32(1), "b": [1, {"c": np.bool_(True)}]}),
             "nested": [{"x": [1, "y", {2: Odd()}]}], "odd": Odd()}
    answer = jsonable(value)
    assert json.dumps(answer) == json.dumps(
        {"turn": 3, "valid": True, "error": None, "score": 0.5, "task_id": "t-1", "k": 1, "7": "seven",
         "(1, 2)": [1.5, 2, [True, None]], "tool_call": {"name": "add", "arguments": {"a": 1, "b": [1, {"c": True}]}},
         "nested": [{"x": [1, "y", {"2": "Odd(items={3})"}]}], "odd": "Odd(items={3})"})
    assert [type(k) for k in answer] == [str] * len(answer)
    assert type(answer["task_id"]) is Label  # a str subclass stays as it is, as the isinstance chain left it
    assert type(answer["(1, 2)"][1]) is int and type(answer["tool_call"]["arguments"]["b"][1]["c"]) is bool
