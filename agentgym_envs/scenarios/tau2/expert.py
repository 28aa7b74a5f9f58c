"""The scripted expert's plan for a tau2 task: the task's reference calls, with the
conversation around them.

1. (not in solo mode) ask the user for its identity and ids (``respond``);
2. the reads that reveal the entities the reference calls take (a reference trajectory may
   skip them: an LLM reads ids off earlier outputs or the user's words), see the domains'
   ``reads`` modules;
3. the reference calls in order; a call of the user's phone (dual control) is asked of the
   user in a message that names it as a call (``toggle_airplane_mode()``), or made directly
   in solo mode; before each of the agent's writes, ask the user to confirm; build each
   list-valued argument first with the list builders, leave out ``calculate`` (its
   expressions are free text; it does not touch the database) and give a transfer the
   canned summary;
4. say every ``communicate_info`` string, or close the conversation; the user then ends it
   (its goal is reached). A reference ``transfer_to_human_agents`` comes last.

Every call of the plan can be written as entity slots where the entity table holds its
values, and every call is a valid text action, so the same plan serves both action modes
(the reads and the list builders are harmless in text mode). On generated tasks the
reference calls come from the generator's scripted solver, so the same plan solves them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentgym_envs.core import Tool, ToolCall

from .episode_tools import ListBuilder, builder_calls
from .upstream.tasks import Tau2Task
from .user import ASK_CONFIRMATION, ASK_IDENTITY, DONE, TRANSFER_SUMMARY

DEVICE_REQUEST = "Please do this on your phone and tell me what it shows: {call}"

TRANSFER = "transfer_to_human_agents"


def communicate_message(infos: tuple[str, ...]) -> str:
    """The message that says every ``communicate_info`` string."""
    return "Here is the information you asked for: " + "; ".join(infos) + "."


def device_request_message(name: str, arguments: Mapping[str, Any]) -> str:
    """The message asking the user to run its phone's tool ``name`` with ``arguments``."""
    listed = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return DEVICE_REQUEST.format(call=f"{name}({listed})")


def expert_plan(
    task: Tau2Task,
    tools: Mapping[str, Tool],
    builders: Mapping[str, ListBuilder],
    solo: bool,
    reads: Sequence[ToolCall] = (),
    ask: str = ASK_IDENTITY,
) -> list[ToolCall]:
    """The calls the expert makes on ``task`` (``builders`` by list-argument entity kind;
    ``reads``: the revealing reads; ``ask``: the opening question). A call of the user's phone
    is the expert's request that the user run it (:func:`device_request_message`), or the
    call itself in solo mode."""
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or ()) if criteria else []
    plan: list[ToolCall] = [] if solo else [ToolCall("respond", {"message": ask})]
    transfer = None
    plan += list(reads)
    for action in actions:
        if action.requestor == "user":
            plan.append(ToolCall(action.name, dict(action.arguments)) if solo
                        else ToolCall("respond", {"message": device_request_message(action.name, dict(action.arguments))}))
            continue
        if action.name == TRANSFER:
            transfer = ToolCall(action.name, {"summary": TRANSFER_SUMMARY})
            continue
        if action.name == "calculate":
            continue
        tool = tools[action.name]
        arguments = dict(action.arguments)
        if tool.kind == "write":
            plan.append(ToolCall("respond", {"message": ASK_CONFIRMATION}))
        for arg in tool.args:
            builder = builders.get(arg.entity)
            if builder is not None and isinstance(arguments.get(arg.name), list):
                plan += [ToolCall(name, a) for name, a in builder_calls(builder, arguments[arg.name])]
        plan.append(ToolCall(action.name, arguments))
    infos = tuple(criteria.communicate_info or ()) if criteria else ()
    if infos:
        plan.append(ToolCall("respond", {"message": communicate_message(infos)}))
    if transfer is not None:
        plan.append(transfer)
    elif not infos:
        plan.append(ToolCall("respond", {"message": DONE}))
    return plan


def argument_values(actions: list[Any], name: str) -> list[Any]:
    """The distinct string values of argument ``name`` over ``actions``, in order."""
    return list(dict.fromkeys(a.arguments[name] for a in actions if isinstance(a.arguments.get(name), str)))
