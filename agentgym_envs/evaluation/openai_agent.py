"""An agent for any OpenAI-compatible chat endpoint (vLLM, SGLang, ``transformers serve``,
hosted APIs): it sends the conversation and the env's tools and plays the returned tool call."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..inference.chat_client import ChatClient, EndpointError
from ..observe import tracing
from .agents import Turn


class OpenAIChatAgent:
    """Asks ``model`` at ``base_url`` (or ``OPENAI_BASE_URL``) for each turn.

    ``concurrency`` requests are in flight at once when several environments wait. A call that
    fails for good (see :class:`ChatClient`) ends its episode with the error recorded. Each turn
    reports the server's ``llm_prompt_tokens`` and ``llm_completion_tokens``.
    ``temperature`` and ``max_tokens`` go into every request; ``None`` leaves the server's default.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, *,
                 concurrency: int = 1, timeout: float = 60.0, max_retries: int = 3, backoff: float = 1.0,
                 temperature: float | None = None, max_tokens: int | None = 256) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        options = {key: value for key, value in (("temperature", temperature), ("max_tokens", max_tokens)) if value is not None}
        self.client = ChatClient(model, base_url, api_key, timeout=timeout, max_retries=max_retries, backoff=backoff,
                                 request_options=options)
        self.concurrency = concurrency
        self.settings = {"name": "openai", "model": self.client.model, "base_url": self.client.base_url, **options}
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="chat") if concurrency > 1 else None

    def respond(self, conversations: Sequence[Sequence[dict[str, Any]]], tools: list[dict[str, Any]] | None) -> list[Turn]:
        parents = tracing.conversation_parents(len(conversations))  # each request's span under its episode's
        if self._pool is None or len(conversations) == 1:
            return [self._turn(messages, tools, parent) for messages, parent in zip(conversations, parents)]
        return list(self._pool.map(lambda messages, parent: self._turn(messages, tools, parent), conversations, parents))

    def _turn(self, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None, parent: Any = None) -> Turn:
        try:
            with tracing.within(parent):
                reply = self.client.chat(messages, tools)
        except EndpointError as exc:
            return Turn(error=str(exc))
        return Turn(dict(reply.message),  # the env's text mode reads tool_calls or the content
                    {"llm_prompt_tokens": reply.prompt_tokens, "llm_completion_tokens": reply.completion_tokens})

    def close(self) -> None:
        """Stop the request threads."""
        if self._pool is not None:
            self._pool.shutdown()
