import json

import pytest

from agentgym_envs.core import CallParseError, parse_tool_call
from agentgym_envs.core.parsing import ToolCall, compact_json


def test_plain_name_arguments_shape_parses():
    call = parse_tool_call('{"name": "lookup_user", "arguments": {"email": "a@b.c"}}')
    assert call.name == "lookup_user" and call.arguments == {"email": "a@b.c"}


def test_openai_tool_calls_shape_with_string_arguments_parses():
    text = '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "escalate", "arguments": "{\\"team\\": \\"billing\\"}"}}]}'
    call = parse_tool_call(text)
    assert call.name == "escalate" and call.arguments == {"team": "billing"}


def test_fenced_json_block_parses():
    assert parse_tool_call('```json\n{"name": "x", "arguments": {}}\n```').name == "x"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"arguments": {}}', "non-empty string 'name'"),
        ('{"name": "x", "arguments": [1]}', "'arguments' must be a JSON object"),
        ('{"name": "x", "arguments": "{oops"}', "not valid JSON"),
        ('{"tool_calls": []}', "exactly one tool call"),
        ("[" * 100_000, "malformed JSON"),
    ],
)
def test_malformed_text_names_the_problem(text, problem):
    with pytest.raises(CallParseError, match=problem):
        parse_tool_call(text)


def test_action_neither_string_nor_dict_is_rejected_with_its_type():
    with pytest.raises(CallParseError, match="got int"):
        parse_tool_call(42)


class _Count(int):
    """An int subclass: JSON writes it as its int value, the fast path leaves it to the encoder."""


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"email": "ana@example.com"},
        {"z": 1, "a": 2.5, "m": True, "b": None, "c": False},
        {"text": 'quote " backslash \\ newline \n tab \t nul \x00 line sep \u2028 accents é 日本'},
        {"x": -0.0, "y": 1e300, "w": 1e-300, "v": 10**20, "u": 0.1},
        {"nan": float("nan"), "inf": float("inf"), "ninf": -float("inf")},
        {"nested": {"b": 1, "a": [1, "x"]}, "count": _Count(3)},
        {1: "int key"},
    ],
)
def test_call_json_and_key_are_what_the_json_module_writes(arguments):
    assert compact_json(arguments) == json.dumps(arguments, ensure_ascii=False, default=str)
    assert ToolCall("tool", arguments).key == json.dumps(["tool", arguments], ensure_ascii=False, sort_keys=True)
