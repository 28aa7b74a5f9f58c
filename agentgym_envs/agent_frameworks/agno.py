"""Agno: the env's tools as Agno ``Function``s, and an Agno ``Agent`` played on the env. Needs
``pip install "agentgym-envs[agno]"``.

The built-in agent talks Chat Completions through Agno's ``OpenAILike`` model, which any
OpenAI-compatible server speaks; Agno's telemetry is off for it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from .runner import converse
from .session import EnvSession

REQUIRES = ("agno", "openai")  # what the built-in agent imports (the extra installs them)


def agno_tools(session: EnvSession) -> list[Any]:
    """One Agno ``Function`` per env tool, with the env's JSON schema as its parameters; a call
    steps the env and returns its result text. The call that ends the episode raises Agno's
    ``StopAgentRun``, which stops the agent's loop after that call."""
    from agno.exceptions import StopAgentRun
    from agno.tools.function import Function

    def tool(schema: dict[str, Any]) -> Function:
        function = schema["function"]

        def call(**arguments: Any) -> str:
            result = session.call_tool(function["name"], arguments)
            if session.ended:
                raise StopAgentRun(result)
            return result

        return Function(name=function["name"], description=function["description"], parameters=function["parameters"],
                        entrypoint=call, skip_entrypoint_processing=True)

    return [tool(schema) for schema in session.tool_schemas]


def default_agent(session: EnvSession) -> Any:
    """The built-in agent: ``OpenAILike`` on the session's endpoint, the env's instructions and
    :func:`agno_tools`; no telemetry."""
    from agno.agent import Agent
    from agno.models.openai.like import OpenAILike

    endpoint = session.endpoint
    if endpoint is None:
        raise ValueError("the built-in Agno agent needs an endpoint (--model, --base-url)")
    model = OpenAILike(id=endpoint.model, base_url=endpoint.base_url, api_key=endpoint.api_key or "none",
                       temperature=endpoint.temperature, max_tokens=endpoint.max_tokens, timeout=endpoint.timeout,
                       max_retries=endpoint.max_retries)
    return Agent(model=model, tools=agno_tools(session), instructions=session.instructions, telemetry=False)


def owns(agent: Any) -> bool:
    """Whether ``agent`` is an Agno ``Agent``."""
    agno = sys.modules.get("agno.agent")
    return agno is not None and isinstance(agent, getattr(agno, "Agent", ()))


def play(agent: Any, session: EnvSession, turns: int) -> None:
    """Run ``agent`` on the task (and on the env's replies, see :func:`~.runner.converse`), the
    conversation so far as its input; a run that ends in error raises it. ``turns`` bounds the
    tool calls of a run. Each model call is a ``chat`` span of the episode, from the metrics
    Agno keeps of it (:func:`trace_model_calls`)."""
    from agno.models.message import Message

    history: list[Any] = []
    if agent.tool_call_limit is None:
        agent.tool_call_limit = turns + 1

    def ask(text: str) -> str:
        history.append(Message(role="user", content=text))
        output = agent.run(list(history), stream=False)
        trace_model_calls(agent, session, output, time.time_ns())
        messages = [message for message in output.messages or [] if message.role != "system"]
        if str(getattr(output.status, "value", output.status)).lower() == "error":
            raise RuntimeError(f"the Agno run failed: {output.content}")
        history[:] = messages
        return "" if session.ended else str(output.content or "")

    converse(ask, session)


def trace_model_calls(agent: Any, session: EnvSession, output: Any, returned_ns: int) -> None:
    """Report the model calls of a run (``output``, Agno's ``RunOutput``, returned at
    ``returned_ns``) to :meth:`EnvSession.model_call`, from what Agno keeps of them: each
    assistant message's token usage and duration. A call ends where the first tool it asked for
    started (the tool executions' clock), or, for the run's last answer, when the run returned."""
    from agno.models.openai.chat import OpenAIChat  # OpenAILike too, whatever its provider's name

    model = agent.model
    tools_started = {tool.tool_call_id: tool.metrics.start_time for tool in output.tools or []
                     if tool.metrics is not None and tool.metrics.start_time is not None}
    options = {key: getattr(model, key, None) for key in ("temperature", "max_tokens", "top_p")}
    base_url = str(getattr(model, "base_url", None) or "")
    provider = "openai" if isinstance(model, OpenAIChat) else str(getattr(model, "provider", "") or "").lower() or None
    for reply in output.messages or []:
        if reply.role != "assistant" or reply.from_history:
            continue
        starts = [tools_started[call.get("id")] for call in reply.tool_calls or [] if call.get("id") in tools_started]
        end_ns = int(min(starts) * 1e9) if starts else returned_ns
        metrics = reply.metrics
        start_ns = end_ns - int((metrics.duration or 0.0) * 1e9)
        session.model_call(getattr(model, "id", None), start_ns, end_ns=end_ns, base_url=base_url, options=options,
                           provider=provider, input_tokens=metrics.input_tokens, output_tokens=metrics.output_tokens)
