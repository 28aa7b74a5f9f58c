"""OpenAI Agents SDK: the env's tools as function tools, and an ``Agent`` run by ``Runner``
on the env. Needs ``pip install "agentgym-envs[openai-agents]"``.

The built-in agent talks Chat Completions (``OpenAIChatCompletionsModel``), which every
OpenAI-compatible server speaks; the SDK's trace export is off for these runs.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .runner import converse
from .session import EnvSession

REQUIRES = ("agents", "openai")  # what the built-in agent imports (the extra installs them)


def openai_agents_tools(session: EnvSession) -> list[Any]:
    """One ``FunctionTool`` per env tool with the env's JSON schema (not made strict: the env
    checks the arguments and answers a bad call with its error); a call steps the env and
    returns its result text."""
    from agents import FunctionTool

    def tool(schema: dict[str, Any]) -> FunctionTool:
        function = schema["function"]

        async def call(context: Any, arguments: str) -> str:
            try:
                parsed = json.loads(arguments) if arguments else {}
            except json.JSONDecodeError:
                parsed = arguments  # the env reports the malformed arguments
            return session.call_tool(function["name"], parsed)

        return FunctionTool(name=function["name"], description=function["description"],
                            params_json_schema=function["parameters"], on_invoke_tool=call, strict_json_schema=False)

    return [tool(schema) for schema in session.tool_schemas]


def default_agent(session: EnvSession) -> Any:
    """The built-in agent: the env's instructions, :func:`openai_agents_tools` and
    ``OpenAIChatCompletionsModel`` on the session's endpoint."""
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    endpoint = session.endpoint
    if endpoint is None:
        raise ValueError("the built-in OpenAI Agents SDK agent needs an endpoint (--model, --base-url)")
    client = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or "none", timeout=endpoint.timeout,
                         max_retries=endpoint.max_retries)
    return Agent(name="agentgym", instructions=session.instructions, tools=openai_agents_tools(session),
                 model=OpenAIChatCompletionsModel(model=endpoint.model, openai_client=client),
                 model_settings=ModelSettings(temperature=endpoint.temperature, max_tokens=endpoint.max_tokens))


def owns(agent: Any) -> bool:
    """Whether ``agent`` is an OpenAI Agents SDK ``Agent``."""
    sdk = sys.modules.get("agents")
    return sdk is not None and isinstance(agent, getattr(sdk, "Agent", ()))


def play(agent: Any, session: EnvSession, turns: int) -> None:
    """Run ``agent`` with ``Runner`` on the task (and on the env's replies, see
    :func:`~.runner.converse`). The run stops at the tool call that ends the episode (the
    agent's ``tool_use_behavior`` is replaced for it); ``turns`` bounds its model calls. Each
    model call is a ``chat`` span of the episode (the SDK's run hooks, :func:`model_calls`)."""
    from agents import RunConfig, Runner, ToolsToFinalOutputResult

    def stop_when_ended(context: Any, results: list[Any]) -> ToolsToFinalOutputResult:
        return ToolsToFinalOutputResult(is_final_output=session.ended,
                                        final_output=str(results[-1].output) if session.ended and results else None)

    playing = agent.clone(tool_use_behavior=stop_when_ended)
    history: list[Any] = []
    run_config = RunConfig(tracing_disabled=True)
    hooks = model_calls(session)

    def ask(text: str) -> str:
        history.append({"role": "user", "content": text})
        result = Runner.run_sync(playing, list(history), max_turns=turns + 1, run_config=run_config,
                                 hooks=hooks)
        history[:] = result.to_input_list()
        return "" if session.ended else str(result.final_output or "")

    converse(ask, session)


def model_calls(session: EnvSession) -> Any:
    """The SDK's ``RunHooks`` that report each model call of a run (model, settings, endpoint,
    token usage) to :meth:`EnvSession.model_call`."""
    from agents import RunHooks

    class ModelCalls(RunHooks):
        def __init__(self) -> None:
            self.started = 0

        async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
            self.started = time.time_ns()

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            model = agent.model if isinstance(agent.model, str) else getattr(agent.model, "model", None)
            client = getattr(agent.model, "_client", None)  # OpenAIChatCompletionsModel's / OpenAIResponsesModel's
            settings = agent.model_settings
            usage = response.usage
            session.model_call(model, self.started or time.time_ns(), base_url=str(getattr(client, "base_url", "")),
                               options={"temperature": settings.temperature, "max_tokens": settings.max_tokens,
                                        "top_p": settings.top_p},
                               input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)

    return ModelCalls()
