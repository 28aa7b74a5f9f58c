"""Records of the spans the env makes (episodes and tool calls), from the traced process to the
exporter process, and the spans made of them there.

The traced process packs only values, as little as a step can spend on them: a tool call is a
tuple of its clock and the step's values (:func:`tool_call_values`), an episode's record holds
its tool calls not sent yet (:func:`episode_record`, or :func:`tool_calls_record` for those of
an episode still running). The exporter process makes the spans of them (:func:`spans_of`),
their attributes encoded once per combination where many spans share them. Every value is of a
type ``marshal`` takes, or as :func:`plain` makes it; marshal writes a NumPy number as its bytes,
which the exporter reads back (:func:`flag`, :func:`integer`) where a bool or an int is due.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping
from typing import Any

from .otlp_encoding import SPAN_ATTRIBUTE, Encoder

MAX_TEXT = 1000  # characters of a tool call's arguments, result or error kept on its span
TOOL_CALLS, EPISODE = 0, 1  # the first field of a tool_calls_record, an episode_record (a span record's: a name)
STATUS_UNSET, STATUS_ERROR = 0, 2  # OpenTelemetry's StatusCode values, as OTLP's Status.code writes them
_ID_STRIDE, _ID_MASK = 0x9E3779B97F4A7C15, (1 << 64) - 1  # tool-call span ids (tool_call_span_id)


def tool_call_span_id(episode_span_id: int, number: int) -> int:
    """The span id of tool call ``number`` (0, 1, ...) of the episode whose span id is
    ``episode_span_id``: distinct for each call of an episode and from the episode's own, and
    as random across episodes as the episode's id."""
    return (episode_span_id ^ (number + 1) * _ID_STRIDE) & _ID_MASK or 1


def tool_call_values(start: int, info: Mapping[str, Any], reward: float) -> tuple:
    """What the span of a tool call that ends now needs, from the step's ``info``: its clock and
    values only (text cut to :data:`MAX_TEXT`), so that the step spends as little as it can on
    it; the exporter process makes the span of it (:func:`tool_call_span`)."""
    try:  # the info of a ToolUseEnv step
        turn, valid, correct, call, error = info["turn"], info["valid"], info["correct"], info["tool_call"], info["error"]
        reply = info["messages"][-1]
    except (KeyError, IndexError, TypeError):
        call, error, messages = info.get("tool_call"), info.get("error"), info.get("messages")
        turn, valid, correct = info.get("turn", 0), info.get("valid", True), info.get("correct", False)
        reply = messages[-1] if messages else {}
    if error is not None:
        error = str(error)[:MAX_TEXT]
    if call is None:
        return (start, time.time_ns(), turn, reward, valid, correct, None, None, None, None, error, None)
    if reply.get("role") != "tool":
        return (start, time.time_ns(), turn, reward, valid, correct, call.name, call.arguments_json[:MAX_TEXT], None, None,
                error, None)
    return (start, time.time_ns(), turn, reward, valid, correct, call.name, call.arguments_json[:MAX_TEXT],
            str(reply.get("tool_call_id")), str(reply.get("content"))[:MAX_TEXT], error, None)


def failed_call(start: int, exc: BaseException) -> tuple:
    """:func:`tool_call_values`' form of a step that raised ``exc``."""
    return (start, time.time_ns(), 0, 0.0, False, False, None, None, None, None, f"{type(exc).__name__}: {exc}",
            type(exc).__name__)


def tool_calls_record(trace_id: int, episode_span_id: int, first: int, calls: list[tuple]) -> tuple:
    """The record of tool calls (:func:`tool_call_values`) of an episode still running, the
    first of them its call number ``first``; the exporter process makes their spans."""
    return (TOOL_CALLS, trace_id, episode_span_id, first, calls)


def episode_record(trace_id: int, span_id: int, parent_id: int, parent_remote: bool, start: int,
                   identity: tuple, total: float, ending: tuple | None, first: int, calls: list[tuple]) -> tuple:
    """The record of an episode span that ends now, with its tool calls not sent yet (``calls``,
    the first of them its call number ``first``): ``identity`` is ``(env id, task id, split,
    seed)``; ``ending`` is ``(truncated, turns, outcome, metrics)`` (the env's ``outcome`` dict,
    with its ``success`` and ``reason``, and the metrics as floats or ints), None for an episode
    left before its end. The exporter process makes the spans of it (:func:`episode_span`,
    :func:`tool_call_span`)."""
    return (EPISODE, trace_id, span_id, parent_id, parent_remote, start, time.time_ns(), identity, total, ending, first,
            calls)


def episode_span(record: tuple, encoder: Encoder) -> tuple:
    """:func:`~.export_process.span_record`'s form of an :func:`episode_record`, its attributes
    encoded by ``encoder``: the ``episode`` span with the env, task, split and seed, the return, and (for an
    episode that ended) its turns, success, outcome and metrics."""
    _, trace_id, span_id, parent_id, parent_remote, start, end, (env_id, task_id, split, seed), total, ending = record[:10]
    truncated, turns, outcome, metrics = ending if ending is not None else (None, None, {}, {})
    success = None if ending is None else flag(outcome.get("success", metrics.get("success", 0.0) >= 1.0))
    reason, turns = str(outcome["reason"]) if "reason" in outcome else None, integer(turns)
    outline = encoder.group((env_id, split, ending is None, truncated, turns, success, reason),
                            lambda: _episode_outline(env_id, split, ending is not None, truncated, turns, success, reason))
    values = {"agentgym.episode.return": total, **{f"agentgym.metric.{name}": float(value)
                                                  for name, value in metrics.items()}}
    if task_id is not None:
        values["agentgym.task.id"] = task_id
    attributes = outline + encoder.attributes(SPAN_ATTRIBUTE, values)
    if seed is not None:
        attributes += encoder.unique({"agentgym.seed": seed})
    return ("episode", trace_id, span_id, 1, parent_id, parent_remote, 0, start, end, attributes, STATUS_UNSET, None, (),
            "agentgym")


def _episode_outline(env_id: str, split: str | None, ended: bool, truncated: bool, turns: int, success: bool,
                     reason: str | None) -> dict[str, Any]:
    """The attributes of an episode span that many episodes share."""
    attributes: dict[str, Any] = {"agentgym.env.id": env_id, "openinference.span.kind": "AGENT"}
    if split is not None:
        attributes["agentgym.split"] = split
    if not ended:
        attributes["agentgym.episode.outcome_reason"] = "left unfinished"
        return attributes
    attributes.update({"agentgym.episode.truncated": truncated, "agentgym.episode.turns": turns,
                       "agentgym.episode.success": success})
    if reason is not None:
        attributes["agentgym.episode.outcome_reason"] = reason
    return attributes


def tool_call_span(trace_id: int, episode_span_id: int, number: int, values: tuple, encoder: Encoder) -> tuple:
    """:func:`~.export_process.span_record`'s form of tool call ``number`` of an episode
    (:func:`tool_call_values`), its attributes encoded by ``encoder``: the ``execute_tool`` span with the GenAI attributes of
    the call, its result and status, and the step's reward (a step that raised: the exception's
    type and message)."""
    start, end, turn, reward, valid, correct, tool, arguments, call_id, result, error, raised = values
    turn, valid, correct = integer(turn), flag(valid), flag(correct)
    span_id = tool_call_span_id(episode_span_id, number)
    if raised is not None:
        attributes = encoder.attributes(SPAN_ATTRIBUTE, {"openinference.span.kind": "TOOL", "error.type": raised})
        return ("execute_tool", trace_id, span_id, 1, episode_span_id, False, 0, start, end, attributes, STATUS_ERROR, error,
                (), "agentgym")
    status = "ok" if error is None else "error" if valid else "invalid"
    texts = {} if tool is None else {"gen_ai.tool.call.arguments": arguments}
    if call_id is not None:
        texts.update({"gen_ai.tool.call.id": call_id, "gen_ai.tool.call.result": result})
    attributes = (encoder.group((turn, status, correct, tool), lambda: _tool_call_outline(turn, status, correct, tool))
                  + encoder.attributes(SPAN_ATTRIBUTE, {"agentgym.reward": reward}) + encoder.unique(texts))
    return ("execute_tool" if tool is None else f"execute_tool {tool}", trace_id, span_id, 1, episode_span_id, False, 0,
            start, end, attributes, STATUS_UNSET if error is None else STATUS_ERROR, error, (), "agentgym")


def _tool_call_outline(turn: int, status: str, correct: bool, tool: str | None) -> dict[str, Any]:
    """The attributes of a tool-call span that many calls share."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "openinference.span.kind": "TOOL",
                                  "agentgym.turn": turn, "agentgym.tool.status": status, "agentgym.tool.correct": correct}
    if tool is not None:
        attributes["gen_ai.tool.name"] = tool
    if status != "ok":
        attributes["error.type"] = "tool_error" if status == "error" else "invalid_call"
    return attributes


def flag(value: Any) -> bool:
    """A record's truth value: a NumPy bool (or number) arrives as the bytes marshal wrote of it."""
    return any(value) if type(value) is bytes else bool(value)


def integer(value: Any) -> int | None:
    """A record's int: a NumPy int arrives as the bytes marshal wrote of it (little-endian)."""
    if value is None:
        return None
    return int.from_bytes(value, "little", signed=True) if type(value) is bytes else int(value)


def plain(value: Any) -> Any:
    """``value`` made of the types marshal takes: containers as tuples and dicts, NumPy scalars
    as the Python values they hold, other numbers as ints or floats, anything else as its text."""
    if value is None or type(value) in _MARSHAL_TYPES:
        return value
    if isinstance(value, (tuple, list)):
        return tuple(plain(item) for item in value)
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    item = getattr(value, "item", None)  # a NumPy scalar: its bool, int or float
    if callable(item) and type(held := item()) in _MARSHAL_TYPES:
        return held
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


_MARSHAL_TYPES = frozenset((bool, int, float, str, bytes))


def spans_of(records: list[tuple], encoder: Encoder) -> list[tuple]:
    """:func:`~.export_process.span_record`'s form of each record (tool calls' and episodes' made into spans, their
    attributes encoded by ``encoder``)."""
    spans: list[tuple] = []
    for record in records:
        if record[0] == TOOL_CALLS:
            _, trace_id, episode_span_id, first, calls = record
        elif record[0] == EPISODE:
            trace_id, episode_span_id, first, calls = record[1], record[2], record[10], record[11]
        else:
            spans.append(record)
            continue
        spans += [tool_call_span(trace_id, episode_span_id, first + offset, values, encoder)
                  for offset, values in enumerate(calls)]
        if record[0] == EPISODE:
            spans.append(episode_span(record, encoder))
    return spans
