import pytest

from agentgym_envs.core import CallParseError, parse_tool_call


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
