"""One call to an OpenAI-compatible chat endpoint, made robust: a timeout per attempt,
retries with exponential back-off on transient failures, the server's token usage, and every
failure turned into one exception type that says what went wrong.

Any agent or simulator that talks to a chat endpoint (vLLM, SGLang, ``transformers serve``,
hosted APIs) goes through :class:`ChatClient`; it needs the ``openai`` package
(``pip install "agentgym-envs[llm]"``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..observe import tracing

RETRYABLE_STATUS = {408, 409, 429}  # plus every 5xx


class EndpointError(RuntimeError):
    """The endpoint gave no usable answer: unreachable, timed out, a server error that outlived
    the retries, or a request it rejected. The message names the endpoint and the cause."""


@dataclass(frozen=True)
class ChatReply:
    """The assistant message (OpenAI shape: ``role``, ``content``, optional ``tool_calls``) and
    the token usage the server reported for it (0 where it reported none)."""

    message: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


@dataclass
class ChatClient:
    """A chat-completions client for one model on one endpoint.

    ``base_url``, ``api_key`` and ``model`` fall back to ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY`` and ``OPENAI_MODEL``; a server that checks no key gets ``"EMPTY"``.
    Each attempt may take ``timeout`` seconds; connection failures, timeouts, 5xx, 408, 409 and
    429 are retried ``max_retries`` times, waiting ``backoff``, ``2 * backoff``, ... seconds.
    ``request_options`` go into every request (``temperature``, ``max_tokens``, ...).
    The client is safe to share between threads.
    """

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 1.0
    request_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the dev install
            raise ImportError('the OpenAI-compatible client needs the openai package: pip install "agentgym-envs[llm]"') from exc
        self.model = self.model or os.environ.get("OPENAI_MODEL")
        if not self.model:
            raise ValueError("no model name: pass model= (--model) or set OPENAI_MODEL")
        self.base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        if self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0:
            raise ValueError("timeout must be positive, max_retries and backoff non-negative")
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                                     timeout=self.timeout, max_retries=0)

    def chat(self, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> ChatReply:
        """The model's reply to ``messages`` (with ``tools`` offered); raises :class:`EndpointError`.
        While tracing is on, the call (its retries included) is one LLM span."""
        with tracing.chat_span(self.model, self.base_url, self.request_options) as span:
            return self._chat(messages, tools, span)

    def _chat(self, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None, span: Any) -> ChatReply:
        openai = self._openai
        extra = {"tools": tools} if tools else {}
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=list(messages), **extra, **self.request_options)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                cause = f"timed out after {self.timeout:g} s" if isinstance(exc, openai.APITimeoutError) else f"unreachable ({exc.__cause__ or exc})"
            except openai.APIStatusError as exc:
                cause = f"HTTP {exc.status_code}: {_error_text(exc)}"
                if exc.status_code < 500 and exc.status_code not in RETRYABLE_STATUS:
                    raise EndpointError(f"{self.base_url} rejected the request, {cause}") from None
            else:
                reply = self._reply(response)
                tracing.record_usage(span, reply.prompt_tokens, reply.completion_tokens, reply.finish_reason, attempt + 1)
                return reply
            if attempt < self.max_retries:
                time.sleep(self.backoff * 2**attempt)
        attempts = self.max_retries + 1
        raise EndpointError(f"{self.base_url}: {cause} (after {attempts} attempt{'s' if attempts > 1 else ''})")

    def _reply(self, response: Any) -> ChatReply:
        if not getattr(response, "choices", None):
            raise EndpointError(f"{self.base_url} answered without choices: {str(response)[:200]}")
        choice = response.choices[0]
        message = choice.message.model_dump(exclude_none=True)
        message["role"] = "assistant"
        usage = response.usage
        return ChatReply(message, getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0,
                         choice.finish_reason)


def _error_text(exc: Any) -> str:
    """The server's own error message where it sent one, else the exception's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("error", body.get("detail", body))
        if isinstance(detail, dict):
            detail = detail.get("message", detail)
        return str(detail)[:300]
    return (body if isinstance(body, str) and body else str(exc))[:300]
