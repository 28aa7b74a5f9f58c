"""OpenTelemetry spans of runs, exported over OTLP to any collector (Phoenix, Jaeger, an
OpenTelemetry Collector).

A run span (``agentgym eval`` / ``agentgym train``) holds one episode span per episode, and an
episode span one span per tool call and per LLM call. The env makes the episode and tool-call
spans itself (:class:`EpisodeTrace`, from ``reset`` to the episode's end), so whatever steps it
gets them: the project's loops, a trainer, or a framework agent's own tool functions. LLM-call
spans come from where the project calls a model (:class:`~agentgym_envs.inference.chat_client.ChatClient`,
the local Hugging Face agent). Attribute names follow OpenTelemetry's GenAI semantic
conventions where they exist (``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.tool.name``...), plus ``agentgym.*`` for the rest and ``openinference.span.kind`` so
that Phoenix shows each span's kind.

Off by default. :func:`configure` turns it on for an endpoint, or for the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` variables; it needs the
``tracing`` extra, and ``opentelemetry`` is imported only then. While off, every hook returns at
its first line. A collector that does not answer is a warning, and the run goes on untraced.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import numbers
import os
import random
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from .records import episode_record, failed_call, tool_call_span_id, tool_call_values, tool_calls_record

PROTOCOLS = ("http/protobuf", "grpc")
SERVICE_NAME = "agentgym"
EXPORT_TIMEOUT_S = 30.0  # per export, unless OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT says otherwise

_NOOP: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
_PLAIN_NUMBERS = frozenset((float, int))  # metric values an episode's record holds as they are
CALLS_HELD = 64  # tool calls an episode holds before it sends them (else they go when it ends)


class _State:
    """What tracing holds in this process, in one object: :func:`configure` fills the exporting
    part, :func:`shutdown` empties it; while it is empty, tracing is off."""

    __slots__ = ("tracer", "provider", "collector", "processor", "open_episodes", "otel", "ids", "last_parent", "calls_lock")

    def __init__(self) -> None:
        self.tracer: Any = None  # the SDK tracer while tracing is on, else None
        self.provider: Any = None
        self.collector: tuple[str, str] | None = None  # (endpoint, protocol) while tracing is on
        self.processor: Any = None  # the span processor that exports every span (in a process of its own)
        self.open_episodes: set[EpisodeTrace] = set()  # not ended yet: ended as unfinished when tracing shuts down
        self.otel = SimpleNamespace()  # the opentelemetry functions the hooks use, imported by configure()
        # span and trace ids of episodes and tool calls: a generator of their own, so that tracing leaves the
        # stream of ``random`` that a user's code seeds as it is (reseeded in a forked child)
        self.ids = random.Random()
        self.last_parent: tuple[Any, tuple | None] = (None, None)  # an OpenTelemetry context and its current span's ids
        self.calls_lock = threading.Lock()  # an episode's calls are sent by the thread that steps it, or by flush()


_state = _State()
os.register_at_fork(after_in_child=lambda: _state.ids.seed())
# context variables are made once, at module level; each holds a value per thread and task:
# the tool call whose step is running here, (episode, its number): the parent of spans made in it
_running_call: contextvars.ContextVar[tuple[EpisodeTrace, int] | None] = contextvars.ContextVar(
    "agentgym_running_call", default=None)
# the episode contexts of the conversations a batch policy is answering (see conversations())
_parents: contextvars.ContextVar[tuple[Any, ...] | None] = contextvars.ContextVar("agentgym_llm_parents", default=None)


class TracingWarning(UserWarning):
    """Tracing was asked for but is off for this run (no collector answers, or no package)."""


def enabled() -> bool:
    """Whether spans are being made."""
    return _state.tracer is not None


# ------------------------------------------------------------------ setup
def configure(endpoint: str | None = None, protocol: str | None = None, service_name: str = SERVICE_NAME) -> bool:
    """Export spans to ``endpoint`` (None: the ``OTEL_EXPORTER_OTLP_*`` variables; neither: off).

    ``protocol`` is ``http/protobuf`` (default; a URL without a path gets ``/v1/traces``) or
    ``grpc`` (needs ``opentelemetry-exporter-otlp-proto-grpc``), else
    ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``. An endpoint that
    accepts no connection is a :class:`TracingWarning` and tracing stays off. Returns whether
    tracing is on. A missing package is a ``ValueError`` for an explicit endpoint, a warning
    for one from the environment."""
    shutdown()
    protocol = (protocol or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
    if protocol not in PROTOCOLS:
        raise ValueError(f"OTLP protocol must be one of {PROTOCOLS}, got {protocol!r}")
    explicit = endpoint is not None
    endpoint = endpoint_url(endpoint, protocol) if explicit else environment_endpoint(protocol)
    if endpoint is None:
        return False
    try:
        from .export_process import ProcessSpanProcessor, exporter_class

        exporter_class(protocol)
    except ImportError as exc:
        message = f'tracing to {endpoint} needs the tracing extra: pip install "agentgym-envs[tracing]" ({exc})'
        if explicit:
            raise ValueError(message) from None
        warnings.warn(f"{message}; tracing is off", TracingWarning, stacklevel=2)
        return False
    problem = unreachable(endpoint, protocol)
    if problem is not None:
        warnings.warn(f"no OTLP collector answers at {endpoint} ({problem}): this run is not traced", TracingWarning,
                      stacklevel=2)
        return False
    from opentelemetry import context, trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    resource = Resource.create({} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name})
    _state.otel.__dict__.update(attach=context.attach, detach=context.detach, in_context=trace.set_span_in_context,
                          CLIENT=trace.SpanKind.CLIENT, SpanContext=trace.SpanContext,
                          NonRecordingSpan=trace.NonRecordingSpan, current_span=trace.get_current_span,
                          current_context=context.get_current, Status=trace.Status, StatusCode=trace.StatusCode,
                          SAMPLED=trace.TraceFlags(trace.TraceFlags.SAMPLED))
    _state.provider = TracerProvider(resource=resource, id_generator=_private_ids(),
                                     shutdown_on_exit=False)  # shutdown() at exit: episodes end first
    timeout_set = any(os.environ.get(f"OTEL_EXPORTER_OTLP_{kind}TIMEOUT") for kind in ("TRACES_", ""))
    try:
        _state.processor = ProcessSpanProcessor(endpoint, protocol, resource.attributes,
                                                None if timeout_set else EXPORT_TIMEOUT_S)
    except RuntimeError as exc:
        warnings.warn(f"{exc}: this run is not traced", TracingWarning, stacklevel=2)
        return False
    _state.provider.add_span_processor(_state.processor)
    _state.tracer, _state.collector = _state.provider.get_tracer("agentgym"), (endpoint, protocol)
    return True


def exporter() -> Any:
    """The span processor that hands this process's spans to the exporter process while
    tracing is on (:class:`~.export_process.ProcessSpanProcessor`), else None."""
    return _state.processor


def flush(timeout_s: float = EXPORT_TIMEOUT_S) -> bool:
    """Wait (at most ``timeout_s``) until every span ended so far (the tool calls of episodes
    still running included) has reached the collector; whether it has (True while off: nothing
    is waiting)."""
    if _state.processor is None:
        return True
    for episode in list(_state.open_episodes):
        episode.send_calls()
    return _state.processor.force_flush(int(timeout_s * 1000))


def shutdown() -> None:
    """End the episodes still open (as left unfinished), export the spans still queued and
    turn tracing off; at the process's exit too."""
    for episode in list(_state.open_episodes):
        episode.abandon()
    provider = _state.provider
    _state.provider = _state.tracer = _state.processor = _state.collector = None
    if provider is not None:
        provider.shutdown()


atexit.register(shutdown)


def _private_ids() -> Any:
    """An OpenTelemetry id generator drawing from :attr:`_State.ids`, as episodes do. The SDK's own
    draws from ``random``, the stream a user's code (and SB3's ``set_random_seed``) seeds: two runs
    after the same seed would share a trace id, and each span would shift the user's stream."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class PrivateIds(RandomIdGenerator):
        def generate_span_id(self) -> int:
            return _state.ids.getrandbits(64) or 1

        def generate_trace_id(self) -> int:
            return _state.ids.getrandbits(128) or 1

    return PrivateIds()


@contextlib.contextmanager
def session(endpoint: str | None = None, protocol: str | None = None) -> Iterator[bool]:
    """:func:`configure` for the length of a ``with`` block (yields whether tracing is on), then
    :func:`shutdown`."""
    try:
        yield configure(endpoint, protocol)
    finally:
        shutdown()


def propagation() -> dict[str, Any] | None:
    """What another process (a Ray worker) needs to trace its work as children of the span
    current here: the collector and the W3C trace context (None while off). Picklable."""
    if _state.tracer is None:
        return None
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    endpoint, protocol = _state.collector
    return {"endpoint": endpoint, "protocol": protocol, "carrier": carrier}


def continue_from(propagated: Mapping[str, Any] | None) -> Any:
    """In another process, turn tracing on for the collector :func:`propagation` named and
    return the context to make spans in (:func:`within`) as children of the span current
    there; None when ``propagated`` is None (tracing left as it is) or nothing answers (off)."""
    if propagated is None or not configure(propagated["endpoint"], propagated["protocol"]):
        return None
    from opentelemetry import propagate

    return propagate.extract(propagated["carrier"])


@contextlib.contextmanager
def continued(propagated: Mapping[str, Any] | None) -> Iterator[bool]:
    """:func:`continue_from` for a ``with`` block, made current in it (yields whether tracing
    is on); the block's spans are exported when it ends."""
    parent = continue_from(propagated)
    try:
        with within(parent):
            yield parent is not None
    finally:
        if parent is not None:
            shutdown()


def endpoint_url(endpoint: str, protocol: str) -> str:
    """``endpoint`` as the exporter takes it: OTLP/HTTP's ``/v1/traces`` added to a bare URL."""
    if "://" not in endpoint:
        raise ValueError(f"an OTLP endpoint is a URL such as http://127.0.0.1:4318/v1/traces, got {endpoint!r}")
    if protocol != "grpc" and urlsplit(endpoint).path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/traces"
    return endpoint


def environment_endpoint(protocol: str) -> str | None:
    """The endpoint the standard variables name (a signal-specific one is used as it is)."""
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return endpoint_url(base, protocol) if base else None


def unreachable(endpoint: str, protocol: str) -> str | None:
    """Why nothing accepts a TCP connection at ``endpoint`` (None: something does)."""
    parts = urlsplit(endpoint)
    default_port = 4317 if protocol == "grpc" else 443 if parts.scheme == "https" else 80
    try:
        with socket.create_connection((parts.hostname or "localhost", parts.port or default_port), timeout=2):
            return None
    except OSError as exc:
        return str(exc) or type(exc).__name__


# ------------------------------------------------------------------ runs
def run_span(kind: str, attributes: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
    """The span of a whole run (``kind``: ``eval``, ``train``), current inside the ``with``
    block, so that the episodes played there are its children; yields None while off."""
    if _state.tracer is None:
        return _NOOP
    return _state.tracer.start_as_current_span(f"agentgym {kind}", attributes={
        "agentgym.run.kind": kind, "openinference.span.kind": "CHAIN", **_clean(attributes)})


def span_ids(span: Any) -> tuple[str | None, str | None]:
    """``(trace id, span id)`` in hex, as collectors show them; ``(None, None)`` without a span."""
    if span is None:
        return None, None
    context = span.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes OpenTelemetry accepts: scalars kept, None dropped, anything else as text."""
    return {key: value if isinstance(value, (str, bool, int, float)) else str(value)
            for key, value in attributes.items() if value is not None}


# ------------------------------------------------------------------ episodes and tool calls
class EpisodeTrace:
    """The spans of one episode: the episode span (open from ``reset`` to the step that ends the
    episode, a child of the span current at ``reset``) and one ``execute_tool`` span per step.

    Both are on the env's hot path, so neither is a live SDK span: each has its ids from the
    start, and a step only notes its clock and values in :attr:`calls`; the episode's calls go to
    the exporting processor in one record when it ends (or when :data:`CALLS_HELD` wait, or at
    :func:`flush`), without the live span's locking and attribute checks. A tool call's span id
    follows from the episode's and the call's number (:func:`tool_call_span_id`). While a step
    runs, its tool call is the parent of the spans this module makes (a model the env calls, such
    as a simulated user, nests under it: :func:`_running_call_context`); the episode's
    :attr:`context` is the parent of the agent's LLM calls. An episode is traced when the span
    current at ``reset`` is sampled, or when there is none."""

    __slots__ = ("trace_id", "span_id", "parent_id", "parent_remote", "flags", "sampled", "identity", "start", "total",
                 "open", "calls", "steps", "sent", "_context")

    def __init__(self, identity: tuple) -> None:
        call = _running_call.get()
        if call is not None:  # reset inside another env's step: a child of that tool call
            episode, number = call
            trace_id, self.parent_id, self.parent_remote = episode.trace_id, tool_call_span_id(episode.span_id, number), False
            flags = _state.otel.SAMPLED
        else:
            parent = _parent_at_reset()
            if parent is not None:
                trace_id, self.parent_id, self.parent_remote, flags = parent
            else:
                trace_id, flags = _state.ids.getrandbits(128) or 1, _state.otel.SAMPLED
                self.parent_id, self.parent_remote = 0, False
        self.trace_id, self.span_id, self.flags, self.sampled = trace_id, _state.ids.getrandbits(64) or 1, flags, flags.sampled
        self.identity = identity  # (env id, task id, split, seed)
        self.start = time.time_ns()
        self.total = 0.0
        self.open = True
        self.calls: list[tuple] = []  # the tool calls ended and not sent yet (:func:`.records.tool_call_values`)
        self.steps = 0  # the tool calls started
        self.sent = 0  # the tool calls sent
        self._context: Any = None
        _state.open_episodes.add(self)

    @property
    def context(self) -> Any:
        """The OpenTelemetry context whose current span is this episode's."""
        if self._context is None:
            otel = _state.otel
            self._context = otel.in_context(otel.NonRecordingSpan(otel.SpanContext(self.trace_id, self.span_id, False,
                                                                                      self.flags)))
        return self._context

    def step(self, play: Callable[[Any], tuple], action: Any) -> tuple:
        """``play(action)`` (the env's step) as a tool call of this episode; ends the episode span
        when the step ends the episode."""
        if _state.processor is None or not self.sampled:
            return play(action)
        start = time.time_ns()
        token = _running_call.set((self, self.steps))
        self.steps += 1
        try:
            result = play(action)
        except BaseException as exc:
            self.calls.append(failed_call(start, exc))
            raise
        finally:
            _running_call.reset(token)
        _, reward, terminated, truncated, info = result
        reward = float(reward)
        self.calls.append(tool_call_values(start, info, reward))
        self.total += reward
        if terminated or truncated:
            self.finish(info, bool(truncated))
        elif len(self.calls) >= CALLS_HELD:
            self.send_calls()
        return result

    def finish(self, info: Mapping[str, Any], truncated: bool) -> None:
        """End the episode span with the return, the outcome and the end-of-episode metrics (the
        exporter process reads the success and the reason from them)."""
        metrics = info.get("metrics") or {}
        if not _PLAIN_NUMBERS.issuperset(map(type, metrics.values())):  # NumPy's numbers as floats, the rest dropped
            metrics = {name: float(value) for name, value in metrics.items() if isinstance(value, numbers.Real)}
        self._end((truncated, info.get("turn", 0), info.get("outcome") or {}, metrics))

    def abandon(self) -> None:
        """End the span of an episode left before its end (a new reset, the env closed)."""
        if self.open:
            self._end(None)

    def send_calls(self) -> None:
        """Hand the tool calls ended so far to the exporting processor (a step may be adding one
        meanwhile, in another thread: it is sent next time)."""
        with _state.calls_lock:
            first, calls = self._take_calls()
            if calls and _state.processor is not None and self.sampled:
                _state.processor.add(tool_calls_record(self.trace_id, self.span_id, first, calls), len(calls))

    def _end(self, ending: tuple | None) -> None:
        self.open = False
        _state.open_episodes.discard(self)
        if _state.processor is None or not self.sampled:
            return
        with _state.calls_lock:
            first, calls = self._take_calls()
            _state.processor.add(episode_record(self.trace_id, self.span_id, self.parent_id, self.parent_remote, self.start,
                                          self.identity, self.total, ending, first, calls), 1 + len(calls))

    def _take_calls(self) -> tuple[int, list[tuple]]:
        """The number of the first tool call not sent yet and those calls, taken from
        :attr:`calls` (``_state.calls_lock`` held)."""
        first, count = self.sent, len(self.calls)
        calls = self.calls[:count]
        del self.calls[:count]
        self.sent += count
        return first, calls


def _parent_at_reset() -> tuple[int, int, bool, Any] | None:
    """The trace id, span id, remoteness and flags of the span current here (None: none), from
    the last lookup while the OpenTelemetry context is the same object (episodes are reset in
    the same context again and again)."""
    context = _state.otel.current_context()
    seen, parent = _state.last_parent
    if seen is not context:
        span = _state.otel.current_span(context).get_span_context()
        parent = (span.trace_id, span.span_id, span.is_remote, span.trace_flags) if span.is_valid else None
        _state.last_parent = (context, parent)
    return parent


def start_episode(env_id: str, split: str | None, seed: int | None, task_id: Any,
                  previous: EpisodeTrace | None = None) -> EpisodeTrace | None:
    """The trace of an episode that ``reset`` just started (None while off); ``previous``, the
    env's last one, is ended if it was left unfinished."""
    if previous is not None and previous.open:
        previous.abandon()
    if _state.tracer is None:
        return None
    return EpisodeTrace((env_id, task_id if type(task_id) in (str, int) else str(task_id), split,
                         None if seed is None else int(seed)))


def episode_trace(env: Any) -> EpisodeTrace | None:
    """The trace of the episode ``env`` (any wrapper of an agentgym env) is playing, if any."""
    return getattr(getattr(env, "unwrapped", env), "episode_trace", None)


def episode_span_ids(env: Any) -> tuple[str | None, str | None]:
    """:func:`span_ids` of the episode ``env`` is playing; ``(None, None)`` when it is not traced."""
    trace = episode_trace(env)
    return (None, None) if trace is None else (format(trace.trace_id, "032x"), format(trace.span_id, "016x"))


def _running_call_context() -> Any:
    """The OpenTelemetry context of the tool call whose step is running here (None outside a step)."""
    call = _running_call.get()
    if call is None:
        return None
    episode, number = call
    span_id = tool_call_span_id(episode.span_id, number)
    otel = _state.otel
    return otel.in_context(otel.NonRecordingSpan(otel.SpanContext(episode.trace_id, span_id, False, otel.SAMPLED)),
                            episode.context)


# ------------------------------------------------------------------ LLM calls
def within_episode(env: Any) -> contextlib.AbstractContextManager[None]:
    """Make ``env``'s episode span current in a ``with`` block: the LLM calls an agent makes
    there become its children."""
    if _state.tracer is None:
        return _NOOP
    return within(getattr(episode_trace(env), "context", None))


def within(parent: Any) -> contextlib.AbstractContextManager[None]:
    """Make ``parent`` (an OpenTelemetry context, from :func:`conversation_parents`) current in
    a ``with`` block; None leaves the current context as it is."""
    if _state.tracer is None or parent is None:
        return _NOOP
    return _attached(parent)


@contextlib.contextmanager
def _attached(parent: Any) -> Iterator[None]:
    token = _state.otel.attach(parent)
    try:
        yield
    finally:
        _state.otel.detach(token)


def conversations(envs: Sequence[Any]) -> contextlib.AbstractContextManager[None]:
    """Tell a batch policy, for a ``with`` block around its ``respond``, which episode each
    conversation belongs to (``envs``, in the conversations' order): its LLM spans, made in
    whatever thread answers, take the episodes' spans as parents (:func:`conversation_parents`)."""
    if _state.tracer is None:
        return _NOOP
    return _bound_parents(tuple(getattr(episode_trace(env), "context", None) for env in envs))


@contextlib.contextmanager
def _bound_parents(parents: tuple[Any, ...]) -> Iterator[None]:
    token = _parents.set(parents)
    try:
        yield
    finally:
        _parents.reset(token)


def conversation_parents(count: int) -> tuple[Any, ...]:
    """The parent context of each of ``count`` conversations being answered (None: the current
    context), as :func:`conversations` bound them."""
    parents = _parents.get()
    return parents if parents is not None and len(parents) == count else (None,) * count


def chat_span(model: str | None, base_url: str | None, options: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
    """The span of one chat-completions call (retries included: its duration is the latency
    the caller saw), current in the ``with`` block; yields None while off. An exception leaving
    the block marks it failed; :func:`record_usage` adds what the server answered."""
    if _state.tracer is None:
        return _NOOP
    server = urlsplit(base_url or "")
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model,
                  "server.address": server.hostname, "server.port": server.port, "openinference.span.kind": "LLM",
                  "llm.model_name": model}
    attributes.update({f"gen_ai.request.{key}": options[key] for key in ("temperature", "max_tokens", "top_p")
                       if key in options})
    return _state.tracer.start_as_current_span(f"chat {model}", context=_running_call_context(), kind=_state.otel.CLIENT,
                                         attributes=_clean(attributes))


def record_usage(span: Any, input_tokens: int, output_tokens: int, finish_reason: str | None = None,
                 attempts: int = 1) -> None:
    """Token usage (GenAI names, and OpenInference's for Phoenix) on an LLM span (None: nothing)."""
    if span is None:
        return
    span.set_attributes(_clean({
        "gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens,
        "gen_ai.response.finish_reasons": (finish_reason,) if finish_reason else None, "agentgym.llm.attempts": attempts,
        "llm.token_count.prompt": input_tokens, "llm.token_count.completion": output_tokens,
        "llm.token_count.total": input_tokens + output_tokens}))


def record_generations(parents: Sequence[Any], model: str, start_ns: int, end_ns: int,
                       usage: Sequence[tuple[int, int]], provider: str = "transformers") -> None:
    """One LLM span per conversation of a batched local generation (all share its start and end
    times, in ns since the epoch); ``usage``: ``(input tokens, output tokens)`` per conversation."""
    if _state.tracer is None:
        return
    attributes = _clean({"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                         "gen_ai.request.model": model, "openinference.span.kind": "LLM", "llm.model_name": model,
                         "agentgym.llm.batch_size": len(usage)})
    for parent, (input_tokens, output_tokens) in zip(parents, usage, strict=True):
        span = _state.tracer.start_span(f"chat {model}", context=parent if parent is not None else _running_call_context(),
                                  kind=_state.otel.CLIENT, start_time=start_ns, attributes=attributes)
        record_usage(span, input_tokens, output_tokens)
        span.end(end_time=end_ns)


def record_chat(parent: Any, model: str | None, start_ns: int, end_ns: int | None = None, *,
                base_url: str | None = None, options: Mapping[str, Any] | None = None,
                input_tokens: int | None = None, output_tokens: int | None = None, finish_reason: str | None = None,
                error: BaseException | str | None = None, provider: str | None = None) -> None:
    """One ``chat`` span, after the fact, for a model call an agent framework made (its own hook
    reports the call): the attributes of :func:`chat_span`, the usage of :func:`record_usage`
    where the framework gives it, and ``error`` (the call failed) as its status. ``parent``: an
    OpenTelemetry context (an episode's, :func:`episode_context`; None: the current one);
    times in ns since the epoch (``end_ns`` None: now); ``provider`` None: ``openai``."""
    if _state.tracer is None:
        return
    server = urlsplit(base_url or "")
    options = options or {}
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider or "openai",
                  "gen_ai.request.model": model, "server.address": server.hostname, "server.port": server.port,
                  "openinference.span.kind": "LLM", "llm.model_name": model}
    attributes.update({f"gen_ai.request.{key}": options[key] for key in ("temperature", "max_tokens", "top_p")
                       if options.get(key) is not None})
    span = _state.tracer.start_span(f"chat {model}", context=parent, kind=_state.otel.CLIENT, start_time=start_ns,
                              attributes=_clean(attributes))
    if input_tokens is not None and output_tokens is not None:
        record_usage(span, int(input_tokens), int(output_tokens), finish_reason)
    elif finish_reason:
        span.set_attribute("gen_ai.response.finish_reasons", (finish_reason,))
    if error is not None:
        span.set_status(_state.otel.Status(_state.otel.StatusCode.ERROR, str(error)))
        if isinstance(error, BaseException):
            span.record_exception(error)
    span.end(end_time=end_ns or time.time_ns())


def episode_context(env: Any) -> Any:
    """The OpenTelemetry context of the episode ``env`` is playing (None: tracing is off or the
    episode is not traced): the parent to give :func:`record_chat`."""
    if _state.tracer is None:
        return None
    return getattr(episode_trace(env), "context", None)
