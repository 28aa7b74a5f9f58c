"""LangChain / LangGraph: the env's tools as ``StructuredTool``s, and a LangChain agent
(``create_agent``, or LangGraph's ``create_react_agent``: any compiled graph with a
``messages`` state) played on the env. Needs ``pip install "agentgym-envs[langchain]"``."""

from __future__ import annotations

import sys
import time
from typing import Any

from .runner import converse
from .session import EnvSession, EpisodeEnded

REQUIRES = ("langchain", "langchain_openai", "langgraph")  # what the built-in agent imports (the extra installs them)


def langchain_tools(session: EnvSession) -> list[Any]:
    """One ``StructuredTool`` per env tool, with the env's JSON schema as its arguments; a call
    steps the env and returns its result text. The call that ends the episode raises
    :class:`EpisodeEnded`, which stops the graph (its ``ToolNode`` re-raises it)."""
    from langchain_core.tools import StructuredTool

    def tool(schema: dict[str, Any]) -> StructuredTool:
        function = schema["function"]

        def call(**arguments: Any) -> str:
            result = session.call_tool(function["name"], arguments)
            if session.ended:
                raise EpisodeEnded(result)
            return result

        return StructuredTool.from_function(call, name=function["name"], description=function["description"],
                                            args_schema=function["parameters"])

    return [tool(schema) for schema in session.tool_schemas]


def default_agent(session: EnvSession) -> Any:
    """The built-in agent: ``create_agent`` with ``ChatOpenAI`` on the session's endpoint,
    the env's instructions as the system prompt and :func:`langchain_tools`."""
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    endpoint = session.endpoint
    if endpoint is None:
        raise ValueError("the built-in LangChain agent needs an endpoint (--model, --base-url)")
    model = ChatOpenAI(model=endpoint.model, base_url=endpoint.base_url, api_key=endpoint.api_key or "none",
                       temperature=endpoint.temperature, max_tokens=endpoint.max_tokens, timeout=endpoint.timeout,
                       max_retries=endpoint.max_retries)
    return create_agent(model, langchain_tools(session), system_prompt=session.instructions)


def owns(agent: Any) -> bool:
    """Whether ``agent`` is a LangGraph graph (what ``create_agent`` and ``create_react_agent`` build)."""
    pregel = sys.modules.get("langgraph.pregel")
    return pregel is not None and isinstance(agent, pregel.Pregel)


def play(agent: Any, session: EnvSession, turns: int) -> None:
    """Invoke ``agent`` on the task (and on the env's replies, see :func:`~.runner.converse`);
    ``turns`` bounds the graph's steps (two per tool call). Each call of its chat model is a
    ``chat`` span of the episode (a LangChain callback, :func:`model_calls`)."""
    messages: list[Any] = []
    config = {"recursion_limit": 2 * turns + 5, "callbacks": [model_calls(session)]}

    def ask(text: str) -> str:
        messages.append({"role": "user", "content": text})
        try:
            state = agent.invoke({"messages": messages}, config)
        except EpisodeEnded:
            return ""
        messages[:] = state["messages"]
        return _text(messages[-1].content) if messages else ""

    converse(ask, session)


def _text(content: Any) -> str:
    """A message's text (LangChain content may be a list of blocks)."""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in content)


def model_calls(session: EnvSession) -> Any:
    """A LangChain callback handler that reports each chat model call (model, settings, token
    usage, finish reason, or the error) to :meth:`EnvSession.model_call`."""
    from langchain_core.callbacks import BaseCallbackHandler

    class ModelCalls(BaseCallbackHandler):
        def __init__(self) -> None:
            self.started: dict[Any, tuple[int, dict[str, Any]]] = {}

        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any, **kwargs: Any) -> None:
            self.started[run_id] = (time.time_ns(), kwargs.get("metadata") or {})

        def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
            if run_id not in self.started:
                return
            start, metadata = self.started.pop(run_id)
            generation = response.generations[0][0] if response.generations and response.generations[0] else None
            message = getattr(generation, "message", None)
            usage = getattr(message, "usage_metadata", None) or {}
            info = {**(getattr(message, "response_metadata", None) or {}), **(getattr(generation, "generation_info",
                                                                                       None) or {})}
            session.model_call(metadata.get("ls_model_name"), start, options=_options(metadata),
                               provider=metadata.get("ls_provider"), input_tokens=usage.get("input_tokens"),
                               output_tokens=usage.get("output_tokens"), finish_reason=info.get("finish_reason"))

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
            if run_id in self.started:
                start, metadata = self.started.pop(run_id)
                session.model_call(metadata.get("ls_model_name"), start, options=_options(metadata),
                                   provider=metadata.get("ls_provider"), error=error)

    return ModelCalls()


def _options(metadata: dict[str, Any]) -> dict[str, Any]:
    """The request settings LangChain's ``ls_*`` metadata names."""
    return {"temperature": metadata.get("ls_temperature"), "max_tokens": metadata.get("ls_max_tokens")}
