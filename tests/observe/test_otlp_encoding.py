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

from agentgym_envs.observe.export_process import span_record  # noqa: E402
from agentgym_envs.observe.otlp_encoding import Encoder  # noqa: E402

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
