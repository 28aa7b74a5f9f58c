"""Span export in a process of its own: the traced process only packs finished spans.

The SDK's batch processor encodes spans to OTLP protobuf in a thread of the traced process,
about 45 us per tool-call span of Python that holds the interpreter lock, as long as a step of
the faster envs takes. :class:`ProcessSpanProcessor` instead packs each finished span's fields
(numbers, strings and attribute dicts, ``marshal``-ed as they come and sent in batches) into a
pipe to a child process, which encodes them as OTLP (:mod:`.otlp_encoding`) and exports them
with the SDK's OTLP exporter. An episode's record holds its tool calls' values only
(:mod:`.records`); the exporter process makes their spans. The traced process spends a few
microseconds a span; encoding and sending run on another core.

Nothing is dropped on the way: a full pipe makes the traced process wait for the exporter (a
loop that makes spans faster than they can be encoded runs at the exporter's pace). An export
the collector does not take (after the exporter's own retries) is reported on standard error,
and the exporter drops the spans it is sent from then on, so a dead collector never holds up
the run. The child exits when the pipe closes: at shutdown, or when the traced process dies.
Spans carry no links (the project makes none).

Run as ``python -m agentgym_envs.observe.export_process``; the first frame on its standard
input is its configuration.
"""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import select
import struct
import subprocess
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SpanExportResult

from .otlp_encoding import Encoder
from .records import plain, spans_of

HEADER = struct.Struct("<I")  # the byte length of the marshalled frame that follows; 0: a flush request
BATCH = 1024  # spans packed into one frame (each wakes the exporter process: fewer, larger ones cost the steps less)
PIPE_BYTES = 1 << 20  # the pipe to the exporter holds this much where the system allows it
# marshal's format 2 writes no back-references: later ones keep a table of every object written,
# which costs the steps more than the bytes it saves
MARSHAL_VERSION = 2
SEND_EVERY_S = 1.0  # spans that wait for a full batch are sent after this long
START_TIMEOUT_S = 60.0  # for the exporter process to import the SDK and make its exporter
READY = b"R"  # the exporter process's first byte: it is ready for spans


def exporter_class(protocol: str) -> type:
    """The SDK's OTLP span exporter for ``protocol`` (``grpc`` or ``http/protobuf``)."""
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    return OTLPSpanExporter


# ------------------------------------------------------------------ the traced process
def span_record(span: Any) -> tuple:
    """The fields of a finished SDK span that its export needs, as plain values."""
    context, parent, status = span.context, span.parent, span.status
    return (span.name, context.trace_id, context.span_id, int(context.trace_flags),
            parent.span_id if parent is not None else 0, parent is not None and parent.is_remote, span.kind.value,
            span.start_time, span.end_time, dict(span.attributes or {}), status.status_code.value,
            status.description, tuple((event.name, event.timestamp, dict(event.attributes or {})) for event in span.events),
            span.instrumentation_scope.name if span.instrumentation_scope is not None else "")


class ProcessSpanProcessor(SpanProcessor):
    """An OpenTelemetry span processor whose export runs in a child process (module docstring).

    ``add`` takes a :func:`span_record` directly; ``on_end`` (the SDK's hook) makes one. Batches
    of :data:`BATCH` spans are sent as they fill, and every :data:`SEND_EVERY_S` by a timer
    thread, so a slow trickle of spans reaches the collector too."""

    def __init__(self, endpoint: str, protocol: str, resource: Mapping[str, Any], timeout_s: float | None) -> None:
        self._config = {"endpoint": endpoint, "protocol": protocol, "resource": dict(resource), "timeout_s": timeout_s}
        self._lock = threading.Lock()
        self._pending: list[bytes] = []  # marshalled records
        self._spans = 0  # the spans they hold
        self._child: subprocess.Popen | None = None
        self._unanswered = 0  # flush requests the exporter has not answered yet
        self._closed = False
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self._start()
        _live.add(self)

    @property
    def pid(self) -> int | None:
        """The exporter process's id (None once it has stopped)."""
        return None if self._child is None else self._child.pid

    # --- the SDK's SpanProcessor interface
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        pass

    def on_end(self, span: Any) -> None:
        self.add(span_record(span))

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Send every span ended so far and wait (at most ``timeout_millis``) until the exporter
        has handed them to the collector; False if it has not, or drops them."""
        with self._lock:
            if not self._send(flush=True):
                return False
            self._unanswered += 1
            deadline = time.monotonic() + timeout_millis / 1000
            answer = b""
            while self._unanswered:  # the answers to earlier requests that timed out come first
                assert self._child is not None and self._child.stdout is not None
                ready, _, _ = select.select([self._child.stdout], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return False
                answer = os.read(self._child.stdout.fileno(), self._unanswered)
                if not answer:
                    return False
                self._unanswered -= len(answer)
            return answer.endswith(b"1")

    def shutdown(self) -> None:
        """Send what is pending, close the pipe and wait for the exporter to finish."""
        self._stop.set()
        with self._lock:
            self._send()
            self._closed = True
            child, self._child = self._child, None
        if child is None:
            return
        assert child.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            child.stdin.close()
        timeout = (self._config["timeout_s"] or 10.0) + 5.0
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            warnings.warn(f"the span exporter did not finish within {timeout:.0f} s; its spans are lost", stacklevel=2)
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()

    # --- packing and sending
    def add(self, record: tuple, spans: int = 1) -> None:
        """Queue a record of ``spans`` finished spans, marshalled at once, so that its objects
        are freed now rather than held with the batch; a full batch is sent now (waiting while the
        pipe is full)."""
        try:
            data = marshal.dumps(record, MARSHAL_VERSION)
        except ValueError:  # a value of a type marshal does not take
            data = marshal.dumps(plain(record), MARSHAL_VERSION)
        with self._lock:
            self._pending.append(data)
            self._spans += spans
            if self._spans >= BATCH:
                self._send()

    def _send(self, flush: bool = False) -> bool:
        """Write the pending spans (and a flush request) to the pipe; the lock is held."""
        if self._closed:
            self._pending, self._spans = [], 0
            return False
        if self._child is None:
            try:
                self._start()
            except RuntimeError as exc:
                self._closed = True
                warnings.warn(f"{exc}; this process's spans are dropped", stacklevel=3)
                return False
        frame = b""
        if self._pending:
            data = marshal.dumps(self._pending, MARSHAL_VERSION)
            self._pending, self._spans = [], 0
            frame = HEADER.pack(len(data)) + data
        if flush:
            frame += HEADER.pack(0)
        if not frame:
            return True
        try:
            assert self._child is not None and self._child.stdin is not None
            self._child.stdin.write(frame)
            self._child.stdin.flush()
            return True
        except (BrokenPipeError, ValueError):
            self._closed = True
            warnings.warn("the span exporter process has exited; this run's spans from now on are dropped",
                          stacklevel=3)
            return False

    def _start(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self._child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       env=env)
        config = marshal.dumps(self._config)
        assert self._child.stdin is not None and self._child.stdout is not None
        _widen(self._child.stdin)
        self._child.stdin.write(HEADER.pack(len(config)) + config)
        self._child.stdin.flush()
        # its imports take a few tenths of a second: wait for them here rather than in the first steps
        ready, _, _ = select.select([self._child.stdout], [], [], START_TIMEOUT_S)
        if not ready or os.read(self._child.stdout.fileno(), 1) != READY:
            self._child.kill()
            self._child.wait()
            raise RuntimeError(f"the span exporter process did not start within {START_TIMEOUT_S:.0f} s")
        self._stop.clear()
        self._timer = threading.Thread(target=self._send_periodically, name="agentgym-span-sender", daemon=True)
        self._timer.start()

    def _send_periodically(self) -> None:
        while not self._stop.wait(SEND_EVERY_S):
            with self._lock:
                if self._pending:
                    self._send()

    def _forget_parent_child(self) -> None:
        """In a forked child: the exporter and the pipe are the parent's; start an own exporter
        on the first span."""
        self._lock = threading.Lock()
        self._pending, self._spans, self._child, self._timer, self._unanswered = [], 0, None, None, 0
        self._stop = threading.Event()


_live: weakref.WeakSet[ProcessSpanProcessor] = weakref.WeakSet()
os.register_at_fork(after_in_child=lambda: [processor._forget_parent_child() for processor in list(_live)])


def _widen(pipe: BinaryIO) -> None:
    """Let ``pipe`` hold a whole frame (Linux; up to the system's limit for a pipe), so that
    sending one rarely waits for the exporter to read the part before."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    try:
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(pipe.fileno(), set_size, min(PIPE_BYTES, limit))
    except (OSError, ValueError):
        pass  # the default size: frames are sent in parts


# ------------------------------------------------------------------ the exporter process
def _read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's bytes (b"" for a flush request); None at the end of the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    data = stream.read(size) if size else b""
    return data if len(data) == size else None


def otlp_exporter(protocol: str, encoder: Encoder, **options: Any) -> Any:
    """The SDK's OTLP exporter for ``protocol``, made to take span records and encode them with
    ``encoder`` (in place of the SDK's encoder of ``ReadableSpan``s, which cannot keep pace with
    a fast env: see :mod:`.otlp_encoding`); it sends, retries and reports as it always does."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    exporter = exporter_class(protocol)
    module = sys.modules[exporter.__module__]
    if not hasattr(module, "encode_spans"):
        raise RuntimeError(f"{module.__name__} no longer encodes through encode_spans: this agentgym needs an update")
    if protocol == "grpc":  # its stub serializes the message itself
        module.encode_spans = lambda records: ExportTraceServiceRequest.FromString(encoder.request(records))
    else:  # the HTTP exporter only serializes it: the bytes as they are
        module.encode_spans = lambda records: _Serialized(encoder.request(records))
    return exporter(**options)


class _Serialized:
    """A request already encoded, for an exporter that only asks for its bytes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def SerializePartialToString(self) -> bytes:  # noqa: N802 (protobuf's name)
        return self.data


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Export the spans of every frame on ``stdin`` until it closes; answer each flush request
    with one byte on ``stdout`` (``1``: everything so far was taken, ``0``: spans are dropped)."""
    first = _read_frame(stdin)
    if not first:
        return
    config = marshal.loads(first)
    timeout = {"timeout": config["timeout_s"]} if config["timeout_s"] else {}
    encoder = Encoder(config["resource"])
    exporter = otlp_exporter(config["protocol"], encoder, endpoint=config["endpoint"], **timeout)
    dropping = False
    stdout.write(READY)
    stdout.flush()
    while (frame := _read_frame(stdin)) is not None:
        if not frame:
            stdout.write(b"0" if dropping else b"1")
            stdout.flush()
            continue
        if dropping:
            continue
        records = [marshal.loads(record) for record in marshal.loads(frame)]
        if exporter.export(spans_of(records, encoder)) is not SpanExportResult.SUCCESS:
            dropping = True
            print(f"agentgym tracing: the OTLP collector at {config['endpoint']} did not take an export; the spans "
                  "of this run are dropped from now on", file=sys.stderr, flush=True)
    exporter.shutdown()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
