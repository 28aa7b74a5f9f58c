"""Strands Agents: the env's tools as Strands tools (tool specs), and a Strands ``Agent``
played on the env. Needs ``pip install "agentgym-envs[strands]"``."""

from __future__ import annotations

import sys
import time
from typing import Any

from .runner import converse
from .session import EnvSession

REQUIRES = ("strands", "openai")  # what the built-in agent imports (the extra installs them)


def strands_tools(session: EnvSession) -> list[Any]:
    """One Strands tool per env tool, its spec's input schema the env's JSON schema; a call
    steps the env and returns its result text. The call that ends the episode stops the
    agent's loop after the current tools (``agent.cancel(after_current_tools=True)``)."""
    from strands.tools.tools import PythonAgentTool

    def tool(schema: dict[str, Any]) -> PythonAgentTool:
        function = schema["function"]

        def call(tool_use: dict[str, Any], **invocation_state: Any) -> dict[str, Any]:
            result = session.call_tool(function["name"], tool_use.get("input") or {})
            if session.ended and "agent" in invocation_state:
                invocation_state["agent"].cancel(after_current_tools=True)
            return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": result}]}

        spec = {"name": function["name"], "description": function["description"],
                "inputSchema": {"json": function["parameters"]}}
        return PythonAgentTool(function["name"], spec, call)

    return [tool(schema) for schema in session.tool_schemas]


def default_agent(session: EnvSession) -> Any:
    """The built-in agent: Strands' OpenAI model provider on the session's endpoint, the env's
    instructions as the system prompt and :func:`strands_tools`; nothing printed."""
    from strands import Agent
    from strands.models.openai import OpenAIModel

    endpoint = session.endpoint
    if endpoint is None:
        raise ValueError("the built-in Strands agent needs an endpoint (--model, --base-url)")
    params = {key: value for key, value in (("temperature", endpoint.temperature), ("max_tokens", endpoint.max_tokens))
              if value is not None}
    model = OpenAIModel(client_args={"base_url": endpoint.base_url, "api_key": endpoint.api_key or "none",
                                     "timeout": endpoint.timeout, "max_retries": endpoint.max_retries},
                        model_id=endpoint.model, params=params)
    return Agent(model=model, tools=strands_tools(session), system_prompt=session.instructions, callback_handler=None)


def owns(agent: Any) -> bool:
    """Whether ``agent`` is a Strands ``Agent``."""
    strands = sys.modules.get("strands")
    return strands is not None and isinstance(agent, getattr(strands, "Agent", ()))


def play(agent: Any, session: EnvSession, turns: int) -> None:
    """Call ``agent`` on the task (and on the env's replies, see :func:`~.runner.converse`);
    the agent keeps its own conversation between calls. ``turns`` is the env's limit, which
    ends the episode and so the loop. Each model call is a ``chat`` span of the episode (the
    agent's model-call hooks, :func:`trace_model_calls`)."""
    trace_model_calls(agent, session)

    def ask(text: str) -> str:
        result = agent(text)
        return "" if session.ended else str(result)

    converse(ask, session)


def trace_model_calls(agent: Any, session: EnvSession) -> None:
    """Report each of ``agent``'s model calls (model, settings, endpoint, token usage, stop
    reason, or the error) to :meth:`EnvSession.model_call`, through Strands' hooks
    (``BeforeModelCallEvent`` / ``AfterModelCallEvent``)."""
    from strands.hooks import AfterModelCallEvent, BeforeModelCallEvent

    started = [0]

    def before(event: Any) -> None:
        started[0] = time.time_ns()

    def after(event: Any) -> None:
        config = getattr(event.agent.model, "config", None) or {}
        params = config.get("params") or {}
        base_url = (getattr(event.agent.model, "client_args", None) or {}).get("base_url")
        response = event.stop_response
        usage = ((response.message.get("metadata") or {}).get("usage") or {}) if response is not None else {}
        provider = type(event.agent.model).__module__.rpartition(".")[2]  # strands.models.openai: openai
        session.model_call(config.get("model_id"), started[0] or time.time_ns(), base_url=base_url, options=params,
                           provider=provider, input_tokens=usage.get("inputTokens"),
                           output_tokens=usage.get("outputTokens"),
                           finish_reason=None if response is None else str(response.stop_reason),
                           error=event.exception)

    agent.hooks.add_callback(BeforeModelCallEvent, before)
    agent.hooks.add_callback(AfterModelCallEvent, after)
