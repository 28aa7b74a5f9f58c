"""Span records encoded as an OTLP ``ExportTraceServiceRequest``, in the protobuf wire format.

The SDK's encoder builds a protobuf message object per span, attribute and value (45 us or more
per tool-call span of ten attributes), so an exporter process using it could not keep pace with
the steps of the faster envs (50-60 us each, a span or more per step). This encoder writes the
same bytes directly (the fields of ``opentelemetry-proto``'s messages, by number) and keeps the
encoded form of the attributes that repeat from span to span (a tool's name, a status, the span
kind): several times less work. ``tests/observe/test_otlp_encoding.py`` checks that the request
it writes parses to the message the SDK's encoder makes from the same spans.

A record is :func:`~agentgym_envs.observe.export_process.span_record`'s tuple: name, trace id,
span id, trace flags, parent span id (0: none), whether the parent is remote, the SDK's
``SpanKind`` value, start and end (ns since the epoch), attributes (a mapping, or the span's
attribute fields already encoded: :meth:`Encoder.group`, :meth:`Encoder.unique`), the
``StatusCode`` value, the status's description, events ``(name, ns, attributes)`` and the
instrumentation scope's name.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

MAX_CACHED = 4096  # encoded attributes kept for reuse
MAX_CACHED_TEXT = 64  # characters of a string attribute worth keeping (longer ones rarely repeat)
_FLAGS_HAS_IS_REMOTE, _FLAGS_IS_REMOTE = 0x100, 0x200  # SpanFlags of the span's parent
_DOUBLE = struct.Struct("<d")
_FIXED64 = struct.Struct("<Q")
_FIXED32 = struct.Struct("<I")
_INT64 = 1 << 64
_ONE_BYTE = [bytes((value,)) for value in range(0x80)]  # the varints of 0-127
SPAN_ATTRIBUTE = b"\x4a"  # the tag of a Span's attributes field
_KINDS = [b"\x30" + bytes((kind + 1,)) for kind in range(5)]  # the SDK's SpanKind value: the kind field (OTLP's, one more)
_FLAGS_LOCAL = b"\x85\x01" + _FIXED32.pack(_FLAGS_HAS_IS_REMOTE)  # the flags field: parent in this process, or none
_FLAGS_REMOTE = b"\x85\x01" + _FIXED32.pack(_FLAGS_HAS_IS_REMOTE | _FLAGS_IS_REMOTE)


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf varint."""
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def utf8(text: str) -> bytes:
    """``text`` in UTF-8; a lone surrogate (JSON can hold one) becomes ``?`` rather than an error."""
    return text.encode("utf-8", "replace")


def delimited(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: its tag, the payload's length and the payload."""
    return tag + varint(len(payload)) + payload


def any_value(value: Any) -> bytes:
    """An ``AnyValue`` message's bytes, as the SDK encodes each value type (any other as text)."""
    if isinstance(value, str):  # the usual kind first
        return delimited(b"\x0a", utf8(value))
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        return b"\x18" + varint(value % _INT64)
    if isinstance(value, float):
        return b"\x21" + _DOUBLE.pack(value)
    if isinstance(value, bytes):
        return delimited(b"\x3a", value)
    if isinstance(value, Sequence):
        return delimited(b"\x2a", b"".join(delimited(b"\x0a", any_value(item)) for item in value))
    if isinstance(value, Mapping):
        return delimited(b"\x32", b"".join(delimited(b"\x0a", key_value(str(key), item))
                                           for key, item in value.items()))
    return any_value(str(value))  # a type OTLP has no value for (a set, say): as its text


def key_value(key: str, value: Any) -> bytes:
    """A ``KeyValue`` message's bytes."""
    return delimited(b"\x0a", utf8(key)) + delimited(b"\x12", any_value(value))


class Encoder:
    """Writes requests of one resource; remembers the encoded form of repeating attributes, and
    of attribute keys and span names."""

    def __init__(self, resource: Mapping[str, Any]) -> None:
        self._cache: dict[tuple, bytes] = {}  # (key, value) of a text, (key, type, value) of a number: its KeyValue
        self._groups: dict[tuple, bytes] = {}  # a group's key: its span attribute fields
        self._keys: dict[str, bytes] = {}  # a key: its KeyValue's key field
        self._names: dict[str, bytes] = {}  # a span name: its Span's name field
        self._resource = delimited(b"\x0a", self.attributes(b"\x0a", resource))

    def request(self, records: Iterable[tuple]) -> bytes:
        """The ``ExportTraceServiceRequest`` of ``records`` (grouped by scope, in order of appearance)."""
        by_scope: dict[str, list[bytes]] = {}
        for record in records:
            by_scope.setdefault(record[13], []).append(self.span(record))
        scope_spans = b"".join(
            delimited(b"\x12", delimited(b"\x0a", delimited(b"\x0a", utf8(scope)) if scope else b"")
                      + b"".join(delimited(b"\x12", span) for span in spans))
            for scope, spans in by_scope.items())
        return delimited(b"\x0a", self._resource + scope_spans) if scope_spans else b""

    def span(self, record: tuple) -> bytes:
        """A ``Span`` message's bytes."""
        (name, trace_id, span_id, _, parent_id, parent_remote, kind, start, end, attributes, code, description,
         events, _) = record
        name_field = self._names.get(name)
        if name_field is None:
            name_field = self._names[name] = delimited(b"\x2a", utf8(name))
        out = [b"\x0a\x10", trace_id.to_bytes(16, "big"), b"\x12\x08", span_id.to_bytes(8, "big")]
        if parent_id:
            out += (b"\x22\x08", parent_id.to_bytes(8, "big"))
        out += (name_field, _KINDS[kind], b"\x39", _FIXED64.pack(start), b"\x41", _FIXED64.pack(end),
                attributes if type(attributes) is bytes else self.attributes(SPAN_ATTRIBUTE, attributes))
        for event_name, timestamp, event_attributes in events:
            out.append(delimited(b"\x5a", b"\x09" + _FIXED64.pack(timestamp) + delimited(b"\x12", utf8(event_name))
                                 + self.attributes(b"\x1a", event_attributes)))
        if description or code:
            out.append(delimited(b"\x7a", (delimited(b"\x12", utf8(description)) if description else b"")
                                 + (b"\x18" + varint(code) if code else b"")))
        else:
            out.append(b"\x7a\x00")
        out.append(_FLAGS_REMOTE if parent_remote else _FLAGS_LOCAL)
        return b"".join(out)

    def attributes(self, tag: bytes, attributes: Mapping[str, Any]) -> bytes:
        """Each attribute as a ``KeyValue`` field with ``tag``; repeating ones from the cache."""
        cache, out = self._cache, []
        for key, value in attributes.items():
            kind = type(value)
            if kind is str and len(value) <= MAX_CACHED_TEXT:
                entry: tuple = (key, value)
            elif kind is bool or kind is int or kind is float:
                entry = (key, kind, value)
            else:  # long text and sequences rarely repeat: encoded as they come
                out.append(self._key_value(tag, key, any_value(value)))
                continue
            encoded = cache.get(entry)
            if encoded is None:
                if len(cache) >= MAX_CACHED:
                    cache.clear()
                encoded = cache[entry] = self._key_value(tag, key, any_value(value))
            out.append(encoded)
        return b"".join(out)

    def group(self, key: tuple, attributes: Callable[[], Mapping[str, Any]]) -> bytes:
        """The span attribute fields of ``attributes()``, made once per ``key``: for attributes
        that repeat as a whole (``key`` holds their values, each in its own place)."""
        encoded = self._groups.get(key)
        if encoded is None:
            if len(self._groups) >= MAX_CACHED:
                self._groups.clear()
            encoded = self._groups[key] = self.attributes(SPAN_ATTRIBUTE, attributes())
        return encoded

    def unique(self, attributes: Mapping[str, Any]) -> bytes:
        """The span attribute fields of ``attributes`` that rarely repeat (ids, texts), past the
        cache, which they would only churn."""
        return b"".join([self._key_value(SPAN_ATTRIBUTE, key, any_value(value)) for key, value in attributes.items()])

    def _key_value(self, tag: bytes, key: str, value: bytes) -> bytes:
        """A ``KeyValue`` field with ``tag`` of ``key`` and an encoded ``AnyValue``."""
        key_field = self._keys.get(key)
        if key_field is None:
            key_field = self._keys[key] = delimited(b"\x0a", utf8(key))
        message = key_field + b"\x12" + varint(len(value)) + value
        return tag + varint(len(message)) + message
