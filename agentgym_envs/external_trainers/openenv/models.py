"""The wire types of a served agentgym env: OpenEnv ``Action``, ``Observation`` and ``State`` models."""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_ACTION_CHARS = 65_536
"""The longest reply text (or tool-call arguments, as JSON) a server accepts by default."""


class ToolCallModel(BaseModel):
    """A structured tool call: the tool's name and its arguments."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)


class AgentGymAction(Action):
    """One agent turn: exactly one of ``text`` (the model's reply as it wrote it; the env
    parses the tool call in it) or ``tool_call`` (``{"name": ..., "arguments": {...}}``). A bare
    tool call (``{"name", "arguments"}``, or OpenAI's ``{"type": "function", "function": {...}}``)
    is read as ``tool_call``. The published schema names ``text`` as required, so that clients
    that wrap a plain reply into an action's one required field (verifiers' OpenEnv taskset)
    send replies as ``text``; ``tool_call`` alone is accepted all the same."""

    model_config = ConfigDict(json_schema_extra={"required": ["text"]})

    text: str | None = Field(default=None, max_length=MAX_ACTION_CHARS,
                             description="the model's reply, parsed by the env (JSON, OpenAI tool_calls, fenced, "
                                         "Hermes <tool_call>, name(arg=value))")
    tool_call: ToolCallModel | None = Field(default=None, description="a structured tool call")

    @model_validator(mode="before")
    @classmethod
    def _bare_tool_call(cls, data: Any) -> Any:
        if isinstance(data, dict) and "text" not in data and "tool_call" not in data:
            call = data.get("function") if data.get("type") == "function" else data
            if isinstance(call, dict) and "name" in call and set(call) <= {"name", "arguments"}:
                return {"tool_call": call, **({"metadata": data["metadata"]} if "metadata" in data else {})}
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> AgentGymAction:
        if (self.text is None) == (self.tool_call is None):
            raise ValueError("an action holds exactly one of 'text' (a reply) and 'tool_call' ({name, arguments})")
        if self.tool_call is not None and len(repr(self.tool_call.arguments)) > MAX_ACTION_CHARS:
            raise ValueError(f"tool_call arguments exceed {MAX_ACTION_CHARS} characters")
        return self


class AgentGymObservation(Observation):
    """What the env shows after a reset or a step. ``reward`` and ``done`` are OpenEnv's fields
    (``done`` = terminated or truncated); ``tool_schemas`` is filled on reset only."""

    text: str = Field(default="", description="the env's text observation (task, conversation, entity table)")
    messages: list[dict[str, Any]] = Field(default_factory=list,
                                           description="the whole conversation, OpenAI chat format")
    tool_schemas: list[dict[str, Any]] = Field(default_factory=list, description="the tools (on reset)")
    info: dict[str, Any] = Field(default_factory=dict,
                                 description="task_id, turn, tool_call, valid, correct, error, parse, tokens_used")
    metrics: dict[str, Any] = Field(default_factory=dict, description="the episode's metrics, once it ends")
    outcome: dict[str, Any] | None = Field(default=None, description="the grader's verdict, once the episode ends")
    terminated: bool = False
    truncated: bool = False


class AgentGymState(State):
    """The session's episode: env id, task, split, steps and return so far."""

    env_id: str = ""
    task_id: str | None = None
    split: str | None = None
    episode_return: float = 0.0
