"""The generic tool-use machinery every scenario reuses."""

from .entities import Entity, EntityTable
from .env import ToolUseEnv
from .episode import CallReport, Episode
from .parsing import CallParseError, ParsedCall, ToolCall, parse_action, parse_tool_call
from .rewards import RewardConfig
from .scenario import Outcome, Scenario
from .tasks import GeneratedTasks, TaskFormatError, TaskList, TaskSource, load_task_file
from .tokens import count_tokens, encode
from .tools import Arg, Tool, ToolError, ToolResult

__all__ = [
    "Arg",
    "CallParseError",
    "CallReport",
    "Entity",
    "EntityTable",
    "Episode",
    "GeneratedTasks",
    "Outcome",
    "ParsedCall",
    "RewardConfig",
    "Scenario",
    "TaskFormatError",
    "TaskList",
    "TaskSource",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolUseEnv",
    "count_tokens",
    "encode",
    "load_task_file",
    "parse_action",
    "parse_tool_call",
]
