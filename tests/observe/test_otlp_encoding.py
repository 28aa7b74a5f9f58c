"""The exporter process's OTLP encoding: the request it writes is the one the SDK's encoder makes."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from agentgym_envs.core.parsing import ToolCall  # noqa: E402
from agentgym_envs.observe.export_process import span_record  # noqa: E402
from agentgym_envs.observe.otlp_encoding import Encoder  # noqa: E402
from agentgym_envs.observe.records import (  # noqa: E402
    episode_record,
    failed_call,
    plain,
    spans_of,
    tool_call_span_id,
    tool_call_values,
    tool_calls_record,
)

RESOURCE = {"service.name": "agentgym", "host.cpus": 2}


def sdk_spans() -> list:
    """Finished SDK spans with every kind of value, status, event and parent the project makes."""
    provider = TracerProvider(resource=Resource(RESOURCE), shutdown_on_exit=False)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agentgym")
    remote = trace.set_span_in_context(trace.NonRecordingSpan(trace.SpanContext(
        0xABC, 0xDEF, is_remote=True, trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED))))
    with tracer.start_as_current_span("agentgym eval", context=remote, attributes={"agentgym.run.kind": "eval"}):
        with tracer.start_as_current_span("chat model", kind=trace.SpanKind.CLIENT, attributes={
                "gen_ai.usage.input_tokens": 300, "gen_ai.request.temperature": 0.7, "agentgym.delta": -5,
                "gen_ai.response.finish_reasons": ("stop", "length"), "agentgym.flags": (True, False),
                "agentgym.text": "héllo → 世界 " * 20, "agentgym.big": 2**62}) as span:
            span.add_event("retry", {"attempt": 2})
            span.set_status(trace.Status(trace.StatusCode.ERROR, "timed out"))
        with tracer.start_as_current_span("execute_tool refund", attributes={"agentgym.reward": 10.0}):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def test_a_request_parses_to_the_sdk_encoders_message_for_the_same_spans():
    spans = sdk_spans()
    encoder = Encoder(RESOURCE)
    for _ in range(2):  # the second time, repeating attributes come from the encoder's cache
        written = ExportTraceServiceRequest.FromString(encoder.request([span_record(span) for span in spans]))
        assert written == encode_spans(spans)


def test_no_spans_make_an_empty_request():
    assert ExportTraceServiceRequest.FromString(Encoder(RESOURCE).request([])) == ExportTraceServiceRequest()


def written_spans(encoder: Encoder, spans: list[tuple]) -> list:
    """The spans of the request ``encoder`` writes, as parsed protobuf messages."""
    request = ExportTraceServiceRequest.FromString(encoder.request(spans))
    return [span for resource in request.resource_spans for scope in resource.scope_spans for span in scope.spans]


def attributes_of(span) -> dict:
    """A parsed span's attributes as Python values."""
    return {item.key: getattr(item.value, item.value.WhichOneof("value")) for item in span.attributes}


def span_id(value: int) -> bytes:
    return value.to_bytes(8, "big")


def test_tool_calls_are_written_with_their_attributes_status_and_ids():
    ok = tool_call_values(10, {"turn": 2, "valid": True, "correct": True, "error": None,
                               "tool_call": ToolCall("refund", {"amount": 5}),
                               "messages": [{"role": "tool", "tool_call_id": "c1", "content": "done"}]}, 1.5)
    invalid = tool_call_values(20, {"turn": 3, "valid": False, "correct": False, "error": "unknown tool 'x'",
                                    "messages": []}, -1.0)
    raised = failed_call(30, RuntimeError("boom"))
    encoder = Encoder(RESOURCE)
    for _ in range(2):  # the second time, each call's shared attributes come from the encoder's cache
        first, second, third = written_spans(encoder, spans_of([tool_calls_record(0xA, 0xC, 4, [ok, invalid, raised])],
                                                               encoder))
        assert first.name == "execute_tool refund" and first.parent_span_id == span_id(0xC)
        assert [s.span_id for s in (first, second, third)] == [span_id(tool_call_span_id(0xC, n)) for n in (4, 5, 6)]
        assert attributes_of(first) == {
            "gen_ai.operation.name": "execute_tool", "openinference.span.kind": "TOOL", "agentgym.turn": 2,
            "agentgym.tool.status": "ok", "agentgym.tool.correct": True, "gen_ai.tool.name": "refund",
            "agentgym.reward": 1.5, "gen_ai.tool.call.arguments": ToolCall("refund", {"amount": 5}).arguments_json, "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.result": "done"}
        assert second.name == "execute_tool" and second.status.message == "unknown tool 'x'"
        assert second.status.code == second.status.STATUS_CODE_ERROR
        assert attributes_of(second) == {
            "gen_ai.operation.name": "execute_tool", "openinference.span.kind": "TOOL", "agentgym.turn": 3,
            "agentgym.tool.status": "invalid", "agentgym.tool.correct": False, "error.type": "invalid_call",
            "agentgym.reward": -1.0}
        assert third.status.message == "RuntimeError: boom" and third.status.code == third.status.STATUS_CODE_ERROR
        assert attributes_of(third) == {"openinference.span.kind": "TOOL", "error.type": "RuntimeError"}


def test_tool_call_span_ids_differ_within_an_episode_and_from_the_episodes():
    ids = {tool_call_span_id(0xB, number) for number in range(10_000)}
    assert len(ids) == 10_000 and 0xB not in ids and 0 not in ids


def test_a_tool_call_whose_info_holds_numpy_values_crosses_to_the_exporter_as_plain_ones():
    import marshal

    import numpy as np

    values = tool_call_values(10, {"turn": np.int64(2), "valid": np.bool_(True), "correct": np.bool_(False),
                                   "messages": []}, 1.5)
    record = marshal.loads(marshal.dumps(tool_calls_record(0xA, 0xC, 0, [values])))
    (span,) = written_spans(Encoder(RESOURCE), spans_of([record], Encoder(RESOURCE)))
    attributes = attributes_of(span)
    assert attributes["agentgym.turn"] == 2 and attributes["agentgym.tool.correct"] is False


def test_episode_records_are_written_with_their_outcome_metrics_and_seed():
    identity = ("AgentGym/Math-v0", "math-7", "test", 3)
    ended = episode_record(0xA, 0xB, 0, False, 10, identity, 2.0, (False, 4, {"success": True, "reason": "solved"},
                                                                     {"score": 1.0, "steps": 4}),
                           0, [])
    call = tool_call_values(12, {"turn": 1, "messages": []}, 0.0)
    unfinished = episode_record(0xA, 0xC, 0, False, 10, ("AgentGym/Math-v0", "math-8", None, None), 0.0, None, 3, [call])
    encoder = Encoder(RESOURCE)
    for _ in range(2):
        first, tool, second = written_spans(encoder, spans_of([ended, unfinished], encoder))
        assert tool.parent_span_id == span_id(0xC) and tool.span_id == span_id(tool_call_span_id(0xC, 3))
        assert attributes_of(first) == {
            "agentgym.env.id": "AgentGym/Math-v0", "openinference.span.kind": "AGENT", "agentgym.split": "test",
            "agentgym.episode.truncated": False, "agentgym.episode.turns": 4, "agentgym.episode.success": True,
            "agentgym.episode.outcome_reason": "solved", "agentgym.episode.return": 2.0, "agentgym.metric.score": 1.0,
            "agentgym.metric.steps": 4.0, "agentgym.task.id": "math-7", "agentgym.seed": 3}
        assert attributes_of(second) == {
            "agentgym.env.id": "AgentGym/Math-v0", "openinference.span.kind": "AGENT",
            "agentgym.episode.outcome_reason": "left unfinished", "agentgym.episode.return": 0.0,
            "agentgym.task.id": "math-8"}


def test_a_record_holding_a_value_marshal_refuses_crosses_as_plain_values():
    import marshal

    import numpy as np

    class Reason:
        def __str__(self) -> str:
            return "solved"

    outcome = {"success": np.bool_(True), "reason": Reason()}
    record = episode_record(0xA, 0xB, 0, False, 10, ("AgentGym/Math-v0", "math-7", "test", 3), 2.0,
                            (False, np.int64(4), outcome, {"score": 1.0}), 0, [])
    with pytest.raises(ValueError):
        marshal.dumps(record)
    (span,) = written_spans(Encoder(RESOURCE), spans_of([marshal.loads(marshal.dumps(plain(record)))], Encoder(RESOURCE)))
    attributes = attributes_of(span)
    assert attributes["agentgym.episode.outcome_reason"] == "solved" and attributes["agentgym.episode.success"] is True
    assert attributes["agentgym.episode.turns"] == 4
