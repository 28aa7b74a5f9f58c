"""Property tests: a tool call written in any form language models use parses back to the same
call, records its form, and several calls or none are clear errors."""

from __future__ import annotations

import json
import keyword

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.core import CallParseError, ToolCall, parse_action

NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))
SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20).filter(
    lambda s: "</tool_call>" not in s and "<tool_call>" not in s
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | SAFE_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(SAFE_TEXT, children, max_size=3),
    max_leaves=6,
)
CALLS = st.builds(ToolCall, NAMES, st.dictionaries(NAMES, VALUES, max_size=4))
PROSE = st.text(st.sampled_from("abcdefgh XYZ.,!?:\n"), max_size=60)


def as_json(call: ToolCall) -> str:
    return json.dumps({"name": call.name, "arguments": call.arguments})


def as_python(call: ToolCall) -> str:
    return f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"


def openai_tool_call(call: ToolCall) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}


RENDERINGS = {
    "json": (lambda call, prose: as_json(call), "json", "text"),
    "json dict": (lambda call, prose: {"name": call.name, "arguments": call.arguments}, "json", "dict"),
    "openai message dict": (
        lambda call, prose: {"role": "assistant", "content": prose or None, "tool_calls": [openai_tool_call(call)]},
        "openai", "dict",
    ),
    "openai tool call dict": (lambda call, prose: openai_tool_call(call), "openai", "dict"),
    "openai message string": (lambda call, prose: json.dumps({"tool_calls": [openai_tool_call(call)]}), "openai", "text"),
    "fenced in prose": (lambda call, prose: f"{prose}\n```json\n{as_json(call)}\n```\n{prose}", "fenced", "text"),
    "hermes in prose": (lambda call, prose: f"{prose}<tool_call>\n{as_json(call)}\n</tool_call>{prose}", "hermes", "text"),
    "python": (lambda call, prose: as_python(call), "python", "text"),
    "python in a fence": (lambda call, prose: f"{prose}\n```python\n{as_python(call)}\n```", "fenced", "text"),
    "message content": (lambda call, prose: {"role": "assistant", "content": f"{prose}<tool_call>{as_json(call)}</tool_call>"}, "hermes", "message"),
    "json in prose": (lambda call, prose: f"Calling {prose} {as_json(call)} {prose}", "json_in_prose", "text"),
}


@pytest.mark.parametrize("rendering", list(RENDERINGS))
@settings(max_examples=25, deadline=None)
@given(call=CALLS, prose=PROSE)
def test_every_form_parses_back_to_the_same_call_and_names_its_form(rendering, call, prose):
    render, form, source = RENDERINGS[rendering]
    parsed = parse_action(render(call, prose))
    assert parsed.call == call
    assert parsed.report() == {"form": form, "source": source, "repaired": False, "repairs": []}


@settings(max_examples=25, deadline=None)
@given(call=CALLS)
def test_near_misses_parse_and_record_the_repair(call):
    trailing_comma = parse_action(as_json(call)[:-1] + ",}")
    assert trailing_comma.call == call and trailing_comma.report()["repairs"] == ["trailing_commas"]
    unclosed = parse_action(f"<tool_call>{as_json(call)}")
    assert unclosed.call == call and unclosed.repairs == ("unclosed_tag",)
    unclosed_fence = parse_action(f"Here:\n```json\n{as_json(call)}\n")
    assert unclosed_fence.call == call and unclosed_fence.repairs == ("unclosed_fence",)


def test_python_literals_in_json_are_repaired():
    parsed = parse_action("{'name': 'refund', 'arguments': {'invoice_id': 'INV-1', 'full': True, 'note': None}}")
    assert parsed.call == ToolCall("refund", {"invoice_id": "INV-1", "full": True, "note": None})
    assert parsed.repairs == ("python_literals",)


@pytest.mark.parametrize("join", [
    lambda a, b: f"<tool_call>{as_json(a)}</tool_call><tool_call>{as_json(b)}</tool_call>",
    lambda a, b: f"```json\n{as_json(a)}\n```\nthen\n```json\n{as_json(b)}\n```",
    lambda a, b: f"{as_python(a)}\n{as_python(b)}",
    lambda a, b: f"first {as_json(a)} then {as_json(b)}",
    lambda a, b: {"role": "assistant", "tool_calls": [openai_tool_call(a), openai_tool_call(b)]},
    lambda a, b: json.dumps([{"name": a.name}, {"name": b.name}]),
], ids=["hermes", "fenced", "python", "prose", "openai", "array"])
@settings(max_examples=10, deadline=None)
@given(first=CALLS, second=CALLS)
def test_several_calls_in_one_action_are_an_error_naming_them(join, first, second):
    with pytest.raises(CallParseError, match=r"found 2 .*send exactly one tool call per step") as error:
        parse_action(join(first, second))
    assert first.name in str(error.value) and second.name in str(error.value)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=50).map(lambda b: b.decode("latin-1")))
def test_any_text_parses_or_raises_call_parse_error_only(text):
    try:
        parse_action(text)
    except CallParseError as error:
        assert str(error)


@pytest.mark.parametrize("action, message", [
    ("", "no tool call found: the action is empty"),
    ("I cannot help with that.", "no tool call found in 24 characters of text starting 'I cannot help"),
    ({"role": "assistant", "content": None}, "no 'tool_calls' and no text content"),
    ('{"name": "a", "arguments": {"x": 1}', "malformed JSON at line 1, column 36: Expecting ',' delimiter; hint: a comma"),
    ("{'name': 'a', 'arguments': {'x': undefined}}", "malformed JSON at line 1, column 2: Expecting property name"),
    ('lookup_user(email="a@b.c"', "invalid Python-style call at line 1, column 12"),
    ("lookup_user(email=a@b.c)", "argument 'email' of lookup_user(...) at column 19 is not a literal"),
    ('lookup_user("a@b.c")', "has positional arguments; name every argument"),
    ("lookup_user(email={1, 2})", "argument 'email' of lookup_user holds a set"),
])
def test_parse_errors_say_where_and_what_to_write(action, message):
    with pytest.raises(CallParseError, match=None) as error:
        parse_action(action)
    assert message in str(error.value)


def test_text_env_records_the_form_of_each_step():
    env = gym.make("AgentGym/CustomerSupport-v0", action_mode="text")
    _, info = env.reset(seed=0)
    assert info["parse"] is None
    email = env.unwrapped.episode.task.customer["email"]
    _, _, _, _, info = env.step(f'Let me look that up.\n<tool_call>{{"name": "lookup_user", "arguments": {{"email": "{email}"}}}}')
    assert info["valid"] and info["parse"] == {"form": "hermes", "source": "text", "repaired": True, "repairs": ["unclosed_tag"]}
    _, _, _, _, info = env.step("no call here")
    assert not info["valid"] and info["parse"]["form"] is None
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "search_kb", "arguments": '{"topic": "billing"}'}}]}
    _, _, _, _, info = env.step(message)
    assert info["valid"] and info["parse"]["form"] == "openai" and info["tool_call"] == ToolCall("search_kb", {"topic": "billing"})


def test_openai_sdk_message_objects_are_accepted_as_they_are():
    chat = pytest.importorskip("openai.types.chat")
    message = chat.ChatCompletionMessage(role="assistant", content=None, tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "search_kb", "arguments": '{"topic": "billing"}'}}])
    parsed = parse_action(message)
    assert parsed.call == ToolCall("search_kb", {"topic": "billing"}) and (parsed.form, parsed.source) == ("openai", "dict")
