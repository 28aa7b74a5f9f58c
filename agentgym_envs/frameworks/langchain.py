"""LangChain / LangGraph: the env's tools as ``StructuredTool``s, and a LangChain agent
(``create_agent``, or LangGraph's ``create_react_agent``: any compiled graph with a
``messages`` state) played on the env. Needs ``pip install "agentgym[langchain]"``."""

from __future__ import annotations

import sys
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
    ``turns`` bounds the graph's steps (two per tool call)."""
    messages: list[Any] = []
    config = {"recursion_limit": 2 * turns + 5}

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
