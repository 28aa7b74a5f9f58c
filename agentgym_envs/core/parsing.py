"""Text-mode tool-call parsing: a tool call as language models write it in, a :class:`ToolCall`
(and which form it was written in) or an error that says what was found, where, and what to
write instead.

Accepted forms (:data:`FORMS`):

- ``json``: ``{"name": ..., "arguments": {...} | "<json>"}``, also as a Python dict;
- ``openai``: OpenAI's shapes, as JSON text or as a Python dict: an assistant message
  ``{"role": "assistant", "content": ..., "tool_calls": [<one tool call>]}`` (without
  ``tool_calls`` its ``content`` is parsed as text), or one tool call ``{"type": "function",
  "function": {"name": ..., "arguments": "<json>"}}``;
- ``fenced``: prose around one fenced block (```` ```json ... ``` ````) holding a call;
- ``hermes``: Hermes/Qwen style ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
  prose around it allowed;
- ``python``: a Python-style call ``lookup_user(email="a@b.com")`` (keyword arguments,
  Python literals as values);
- ``json_in_prose``: prose around one bare JSON call object.

Repairs (:data:`REPAIRS`) make near-misses parse and are recorded, so that format errors can
be measured: trailing commas, Python literals in JSON (single quotes, True/False/None), a
``<tool_call>`` or a fence left unclosed (a stop sequence cut it).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMS = ("json", "openai", "fenced", "hermes", "python", "json_in_prose")
REPAIRS = ("trailing_commas", "python_literals", "unclosed_tag", "unclosed_fence")
CALL_SHAPE = '{"name": "<tool>", "arguments": {...}}'

_WHOLE_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_FENCE_OPEN = re.compile(r"^[ \t]*```[\w+-]*[ \t]*$", re.MULTILINE)
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)
_HERMES = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.DOTALL)
_PYTHON_CALL = re.compile(r"^[A-Za-z_]\w*\s*\(")
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')  # strings are matched to be kept
_PROSE_OBJECTS_TRIED = 32  # bare JSON objects looked for in prose (bounds the work on hostile text)
_JSON_HINTS = (
    ("Expecting property name", "keys and strings need double quotes, and no comma may follow the last item"),
    ("Expecting ',' delimiter", "a comma or a closing bracket is missing, or a string holds an unescaped quote"),
    ("Expecting ':' delimiter", "each key needs a ':' and a value"),
    ("Unterminated string", "a string is not closed, or holds a raw line break (write \\n)"),
    ("Invalid control character", "a string holds a raw line break or tab (write \\n or \\t)"),
    ("Expecting value", "a value is missing or is not JSON (write true, false, null and double-quoted strings)"),
)


# json.dumps with arguments builds an encoder per call: these are built once (the same output)
_encode_string = json.encoder.encode_basestring  # a JSON string as the encoders below write it (ensure_ascii=False)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), default=str)
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def compact_json(value: Any) -> str:
    """One-line JSON as the conversation shows tool arguments and results."""
    if type(value) is dict:
        flat = _flat_json(value, False)
        if flat is not None:
            return flat
    return _COMPACT.encode(value)


def _flat_json(mapping: dict[Any, Any], sort_keys: bool) -> str | None:
    """``json.dumps(mapping, ensure_ascii=False, sort_keys=sort_keys)`` for a dict of string keys and string,
    finite float, int, bool or None values, written without building an encoder (tool arguments are such
    dicts, encoded on every call); None for any other dict."""
    items = sorted(mapping.items()) if sort_keys and len(mapping) > 1 else mapping.items()
    parts = []
    for key, value in items:
        if type(key) is not str:
            return None
        kind = type(value)
        if kind is str:
            text = _encode_string(value)
        elif kind is float and value - value == 0.0:  # finite: NaN and infinities are JSON's own words
            text = float.__repr__(value)
        elif kind is int:
            text = int.__repr__(value)
        elif kind is bool:
            text = "true" if value else "false"
        elif value is None:
            text = "null"
        else:
            return None
        parts.append(f"{_encode_string(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


class lazy_attribute:
    """``functools.cached_property`` without the lock Python 3.11 takes at each first access: the
    value computed once is stored on the instance (a frozen dataclass too), whose attribute then wins."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        self.compute, self.__doc__ = compute, compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


@dataclass(frozen=True)
class ToolCall:
    """A parsed tool call: a tool name and its arguments (JSON values)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments}, ensure_ascii=False)

    @lazy_attribute
    def arguments_json(self) -> str:
        """The arguments as compact JSON, as the conversation writes them."""
        return compact_json(self.arguments)

    @lazy_attribute
    def key(self) -> str:
        """A canonical string, equal for equal calls (argument order ignored)."""
        arguments = _flat_json(self.arguments, True) if type(self.name) is str and type(self.arguments) is dict else None
        if arguments is None:
            return _CANONICAL.encode([self.name, self.arguments])
        return f"[{_encode_string(self.name)}, {arguments}]"


class CallParseError(ValueError):
    """The text action is not one well-formed tool call; the message says what was found."""


@dataclass(frozen=True)
class ParsedCall:
    """A call and how it was written: ``form`` (one of :data:`FORMS`), ``source`` (``"text"``,
    ``"dict"`` or ``"message"``: the content of an OpenAI assistant message) and the
    ``repairs`` (of :data:`REPAIRS`) it needed."""

    call: ToolCall
    form: str
    source: str
    repairs: tuple[str, ...] = ()

    def report(self) -> dict[str, Any]:
        """What ``info["parse"]`` holds."""
        return {"form": self.form, "source": self.source, "repaired": bool(self.repairs), "repairs": list(self.repairs)}


def parse_tool_call(action: Any) -> ToolCall:
    """The :class:`ToolCall` of a text action (see :func:`parse_action`)."""
    return parse_action(action).call


def parse_action(action: Any) -> ParsedCall:
    """Parse a text action written in any of :data:`FORMS` (a string, or a dict in the JSON or
    OpenAI shapes); raise :class:`CallParseError` saying what was found otherwise."""
    if hasattr(action, "model_dump") and not isinstance(action, (str, dict)):
        action = action.model_dump()  # an OpenAI SDK message or tool call object
    if isinstance(action, dict):
        return _parse_dict(action)
    if not isinstance(action, str):
        raise CallParseError(
            f"action must be a JSON string or a dict in the OpenAI message shape, got {type(action).__name__}"
        )
    return _parse_text(action, "text")


# --------------------------------------------------------------------------- dicts and payloads
def _parse_dict(message: dict[str, Any]) -> ParsedCall:
    if message.get("role") == "assistant" and not message.get("tool_calls"):
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise CallParseError("no tool call found: the assistant message has no 'tool_calls' and no text content")
        return _parse_text(content, "message")
    return ParsedCall(_from_payload(message), _payload_form(message), "dict")


def _payload_form(payload: dict[str, Any]) -> str:
    return "openai" if "tool_calls" in payload or "function" in payload else "json"


def _from_payload(payload: Any) -> ToolCall:
    """A call object (``json`` or ``openai`` shape, already decoded) -> :class:`ToolCall`."""
    if isinstance(payload, list) and any(isinstance(p, dict) for p in payload):
        raise _count_error([p for p in payload if isinstance(p, dict)], "a JSON array")
    if not isinstance(payload, dict):
        raise CallParseError(f"a tool call must be a JSON object like {CALL_SHAPE}, got {_kind(payload)}")
    if "tool_calls" in payload:
        calls = payload["tool_calls"]
        if not isinstance(calls, list):
            raise CallParseError(f"'tool_calls' must be a list holding one tool call, got {_kind(calls)}")
        if len(calls) != 1:
            raise _count_error(calls, "'tool_calls'")
        payload = calls[0]
        if not isinstance(payload, dict):
            raise CallParseError(f"a tool call must be a JSON object, got {_kind(payload)}")
    if "function" in payload:
        payload = payload["function"]
        if not isinstance(payload, dict):
            raise CallParseError("'function' must be an object with 'name' and 'arguments'")
    name = payload.get("name")
    if not isinstance(name, str) or not name:
        raise CallParseError(f"a tool call needs a non-empty string 'name': {CALL_SHAPE}")
    arguments = payload.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            raise CallParseError("'arguments' is a string but not valid JSON") from None
    if not isinstance(arguments, dict):
        raise CallParseError(f"'arguments' must be a JSON object, got {_kind(arguments)}")
    return ToolCall(name, _json_arguments(name, arguments))


def _json_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as JSON values (tuples become lists); a value JSON cannot hold (a set,
    bytes, an object) is a :class:`CallParseError` naming the argument."""
    try:
        return {_json_key(name, key): _json_value(name, key, value) for key, value in arguments.items()}
    except RecursionError:
        raise CallParseError(f"the arguments of {name} are nested too deeply") from None


def _json_key(name: str, key: Any) -> str:
    if not isinstance(key, str):
        raise CallParseError(f"{name}: argument names must be strings, got {key!r}")
    return key


def _json_value(name: str, key: str, value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(name, key, v) for v in value]
    if isinstance(value, dict):
        return {_json_key(name, k): _json_value(name, key, v) for k, v in value.items()}
    raise CallParseError(f"argument '{key}' of {name} holds a {type(value).__name__}, which is not a JSON value")


def _count_error(calls: list[Any], where: str) -> CallParseError:
    """The error for a number of calls other than one found in ``where``."""
    if not calls:
        return CallParseError(f"no tool call found: {where} is empty; send exactly one tool call per step")
    names = [_call_name(c) for c in calls]
    return CallParseError(f"found {len(calls)} tool calls ({', '.join(names)}) in {where}; send exactly one tool call per step")


def _call_name(call: Any) -> str:
    if isinstance(call, dict):
        inner = call.get("function") if isinstance(call.get("function"), dict) else call
        if isinstance(inner.get("name"), str):
            return inner["name"]
    return "?"


# --------------------------------------------------------------------------- text
def _parse_text(text: str, source: str) -> ParsedCall:
    stripped = text.strip()
    if not stripped:
        raise CallParseError(f"no tool call found: the action is empty; write {CALL_SHAPE}")
    whole = _loads(stripped)
    if whole is not None:
        payload, repairs = whole
        return ParsedCall(_from_payload(payload), _payload_form(payload) if isinstance(payload, dict) else "json", source, repairs)
    fence = _WHOLE_FENCE.match(text)
    if fence and _loads(fence.group(1)) is not None:
        payload, repairs = _loads(fence.group(1))  # type: ignore[misc]
        return ParsedCall(_from_payload(payload), "fenced", source, repairs)
    for finder in (_hermes_blocks, _fenced_blocks):
        found = finder(text)
        if found is not None:
            form, blocks, repairs = found
            if len(blocks) > 1:
                raise CallParseError(
                    f"found {len(blocks)} {_FORM_NAMES[form]} ({', '.join(_block_name(b) for b in blocks)}); "
                    "send exactly one tool call per step"
                )
            call, inner_repairs = _parse_block(blocks[0], form)
            return ParsedCall(call, form, source, (*repairs, *inner_repairs))
    if _PYTHON_CALL.match(stripped):
        return ParsedCall(_python_call(stripped), "python", source)
    objects = _json_objects_in_prose(text)
    if len(objects) > 1:
        raise _count_error(objects, "the text")
    if objects:
        return ParsedCall(_from_payload(objects[0]), "json_in_prose", source)
    raise _nothing_found(stripped)


_FORM_NAMES = {"hermes": "<tool_call> blocks", "fenced": "fenced blocks holding a call"}


def _loads(text: str) -> tuple[Any, tuple[str, ...]] | None:
    """``text`` as JSON, or repaired into JSON, with the repairs; None if it is neither."""
    try:
        return json.loads(text), ()
    except (ValueError, RecursionError):
        pass
    if not text.lstrip().startswith(("{", "[")):
        return None
    without_commas = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)
    if without_commas != text:
        try:
            return json.loads(without_commas), ("trailing_commas",)
        except (ValueError, RecursionError):
            pass
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None
    return (value, ("python_literals",)) if isinstance(value, (dict, list)) else None


def _hermes_blocks(text: str) -> tuple[str, list[str], tuple[str, ...]] | None:
    if "<tool_call>" not in text:
        return None
    matches = list(_HERMES.finditer(text))
    repairs = ("unclosed_tag",) if matches and not matches[-1].group(2) else ()
    return "hermes", [m.group(1).strip() for m in matches], repairs


def _fenced_blocks(text: str) -> tuple[str, list[str], tuple[str, ...]] | None:
    """Fenced blocks whose content looks like a call (fences at line starts only: a fence in a
    JSON string argument, such as a program, is never at a line start)."""
    blocks, repairs, position = [], (), 0
    while (opening := _FENCE_OPEN.search(text, position)) is not None:
        closing = _FENCE_CLOSE.search(text, opening.end())
        end = closing.start() if closing else len(text)
        content = text[opening.end() : end].strip()
        if content.startswith(("{", "[")) or _PYTHON_CALL.match(content):
            blocks.append(content)
            if closing is None:
                repairs = ("unclosed_fence",)
        position = closing.end() if closing else len(text)
    return ("fenced", blocks, repairs) if blocks else None


def _parse_block(block: str, form: str) -> tuple[ToolCall, tuple[str, ...]]:
    if _PYTHON_CALL.match(block):
        return _python_call(block), ()
    loaded = _loads(block)
    if loaded is None:
        raise CallParseError(f"the {form} block is not a tool call: {_json_problem(block)}")
    payload, repairs = loaded
    return _from_payload(payload), repairs


def _block_name(block: str) -> str:
    if _PYTHON_CALL.match(block):
        return block.split("(", 1)[0].strip()
    loaded = _loads(block)
    return _call_name(loaded[0]) if loaded is not None else "?"


def _json_objects_in_prose(text: str) -> list[dict[str, Any]]:
    """Bare JSON objects in prose that look like calls (they have a name or tool calls)."""
    decoder, found, position = json.JSONDecoder(), [], 0
    for _ in range(_PROSE_OBJECTS_TRIED):
        start = text.find("{", position)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        if isinstance(value, dict) and ("name" in value or "tool_calls" in value or "function" in value):
            found.append(value)
        position = end
    return found


def _python_call(text: str) -> ToolCall:
    """``name(arg=value, ...)`` with Python literals as values."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        statements = _python_statements(text)
        if len(statements) > 1:
            raise CallParseError(
                f"found {len(statements)} Python-style calls ({', '.join(statements)}); send exactly one tool call per step"
            ) from None
        raise CallParseError(
            f"invalid Python-style call at line {exc.lineno}, column {exc.offset}: {exc.msg}; "
            "write name(arg=value, ...) with quoted strings"
        ) from None
    except (ValueError, RecursionError, MemoryError):
        raise CallParseError("invalid Python-style call: too deeply nested or too long") from None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallParseError("a Python-style call must be a single call name(arg=value, ...)")
    name = node.func.id
    if node.args:
        raise CallParseError(f"{name}(...) has positional arguments; name every argument: {name}(arg=value, ...)")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError(f"{name}(...) uses **; name every argument: {name}(arg=value, ...)")
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            raise CallParseError(
                f"argument '{keyword.arg}' of {name}(...) at column {keyword.value.col_offset + 1} is not a literal "
                "(write strings in quotes, numbers, lists or dicts)"
            ) from None
    return ToolCall(name, _json_arguments(name, arguments))


def _python_statements(text: str) -> list[str]:
    """The call names of a multi-statement text of Python calls (else [])."""
    try:
        module = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    calls = [s.value for s in module.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    if len(calls) != len(module.body):
        return []
    return [c.func.id if isinstance(c.func, ast.Name) else "?" for c in calls]


def _nothing_found(text: str) -> CallParseError:
    """The error for text holding no recognisable call: a JSON problem with its position and a
    hint when the text tries JSON, else what the text starts with."""
    if text.startswith(("{", "[")):
        return CallParseError(f"malformed JSON {_json_problem(text)}")
    preview = text[:40] + ("..." if len(text) > 40 else "")
    return CallParseError(
        f"no tool call found in {len(text)} characters of text starting {preview!r}; write {CALL_SHAPE}, "
        'a ```json block, <tool_call>{...}</tool_call> or name(arg="value")'
    )


def _json_problem(text: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        hint = next((h for prefix, h in _JSON_HINTS if exc.msg.startswith(prefix)), f"a tool call is {CALL_SHAPE}")
        return f"at line {exc.lineno}, column {exc.colno}: {exc.msg}; hint: {hint}"
    except RecursionError:
        return "(nesting too deep)"
    except ValueError:  # an integer past Python's digit limit
        return "(a number is too long)"
    return f"(not a tool call; write {CALL_SHAPE})"


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null", dict: "an object"}.get(
        type(value), "a number"
    )
