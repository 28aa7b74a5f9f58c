"""The tools an agent holds in a tau2 environment: the domain's tools, ``respond`` and the
list builders.

- **Domain tools** (upstream's, unchanged): each is wrapped so that every call that reaches
  it is logged in the session (the evaluator replays the writes), a write is shown to the
  simulated user, ``transfer_to_human_agents`` ends the conversation, and the output reveals
  entities (:mod:`.reveal`).
- **respond(message)**: the agent's message to the user; the user's reply is the result.
  COMMUNICATE is scored on these messages.
- **List builders** (for the structured mode, harmless in text mode; not upstream tools,
  so the evaluator's replay skips them): ``start_<kind>_list(element)`` begins a new draft
  list, ``add_to_<kind>_list(element)`` appends to it; both reveal the draft as an entity of
  the list kind that the list-valued argument takes (``item_ids``, ``flights``,
  ``passengers``, ``payments``). Elements are entities that read tools reveal: item ids,
  flight segments ``{flight_number, date}``, passengers ``{first_name, last_name, dob}``,
  and for payments a payment method id with an ``amount``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentgym_envs.core.tools import Arg, Tool, ToolError, ToolResult

from .session import Tau2Session
from .upstream.arguments import call_as_upstream
from .upstream.domain import Tau2Domain
from .user import goal_key

Reveal = Callable[[str, Mapping[str, Any], str], list[tuple[str, Any]]]
Sync = Callable[[Any], None]


def wrap_domain_tool(
    tool: Tool, reveal: Reveal, toolkit: str, sync: Sync | None = None, requestor: str = "assistant"
) -> Tool:
    """``tool`` running on a :class:`Tau2Session`, logging the call and revealing entities;
    after a call that did not fail, the domain's ``sync`` (dual control). A tool of the user's
    phone (``requestor="user"``: solo mode, where the agent holds both sides' tools) is logged
    as the user's. In a session with upstream argument handling the call is bound and run as
    a method of upstream's ``toolkit`` class would be (:mod:`.upstream.arguments`)."""

    def run(session: Tau2Session, **arguments: Any) -> ToolResult:
        session.calls.append((tool.name, arguments) if requestor == "assistant" else (tool.name, arguments, requestor))
        session.agent_calls += 1
        if tool.kind == "write" and session.user is not None:
            session.user.record_write(goal_key(tool.name, arguments))
        session.transcript.append(("assistant", json.dumps({"name": tool.name, "arguments": arguments}, default=str)))
        try:
            if session.tool_arguments == "upstream":
                output = call_as_upstream(toolkit, tool, session, arguments)
            else:
                output = tool.fn(session, **arguments)
            if sync is not None:
                sync(session)
        except ToolError as exc:  # the env shows it
            session.transcript.append(("tool", f"Error: {exc}"))
            raise
        session.transcript.append(("tool", output))
        if tool.terminal:
            session.transferred = True
        return ToolResult(output, tuple(reveal(tool.name, arguments, output)))

    return Tool(tool.name, tool.description, tool.args, run, tool.terminal, tool.latency_s, tool.kind)


def use_device(session: Tau2Session, domain: Tau2Domain, name: str, arguments: dict[str, Any]) -> str:
    """The simulated user runs one of its phone's tools (dual control): logged as the user's
    call (the evaluator replays it), counted towards the user's goal, and followed by the
    domain's sync, as upstream runs a user tool call."""
    session.calls.append((name, arguments, "user"))
    tool, _ = domain.resolve(name, "user")
    if tool is not None and tool.kind == "write" and session.user is not None:
        session.user.record_write(goal_key(name, arguments))
    session.transcript.append(("user", json.dumps({"name": name, "arguments": arguments}, default=str)))
    output = domain.call(session, name, arguments, "user").output
    session.transcript.append(("tool", output))
    return output


def respond(session: Tau2Session, message: str) -> ToolResult:
    """Send ``message`` to the user; the result is the user's reply."""
    session.calls.append(("respond", {"message": message}))
    session.agent_calls += 1
    session.agent_messages.append(message)
    session.transcript.append(("assistant", message))
    if session.user is None:
        return ToolResult("(no user)")
    reply, revealed = session.user.reply(message)
    session.transcript.append(("user", reply))
    return ToolResult(reply, tuple(revealed))


RESPOND = Tool(
    "respond",
    "Send a message to the customer (a question, a confirmation request, information, or a "
    "closing). The customer's reply is the result.",
    (Arg("message", "string", "message", "The message to the customer."),),
    respond,
    kind="generic",
)


@dataclass(frozen=True)
class ListBuilder:
    """How one list-valued argument kind is built: ``kind`` of the finished list, the
    element's arguments, ``element`` turning those arguments into one list item, and
    ``unpack`` the reverse (default: the item is the one argument's value)."""

    name: str
    kind: str
    args: tuple[Arg, ...]
    element: Callable[..., Any]
    unpack: Callable[[Any], dict[str, Any]] | None = None

    def tools(self) -> tuple[Tool, Tool]:
        return (
            Tool(f"start_{self.name}_list", f"Begin a new draft list of {self.name}s with one element "
                 f"(an agent-side helper for list arguments; it does not touch the database).",
                 self.args, self._run(new=True), kind="generic"),
            Tool(f"add_to_{self.name}_list", f"Append one element to the current draft list of {self.name}s "
                 f"(an agent-side helper; it does not touch the database).",
                 self.args, self._run(new=False), kind="generic"),
        )

    def _run(self, new: bool) -> Callable[..., ToolResult]:
        def run(session: Tau2Session, **arguments: Any) -> ToolResult:
            session.calls.append((("start_" if new else "add_to_") + f"{self.name}_list", arguments))
            session.agent_calls += 1
            draft = [] if new else session.drafts.get(self.kind, [])
            draft = [*draft, self.element(**arguments)]
            session.drafts[self.kind] = draft
            return ToolResult(f"Draft {self.kind}: {json.dumps(draft)}", ((self.kind, draft),))

        return run


def episode_tools(
    domain_tools: tuple[Tool, ...], reveal: Reveal, builders: tuple[ListBuilder, ...], toolkit: str, sync: Sync | None = None
) -> tuple[Tool, ...]:
    """A domain's tools as an environment offers them: wrapped, ``respond``, the builders."""
    wrapped = tuple(wrap_domain_tool(tool, reveal, toolkit, sync) for tool in domain_tools)
    return (*wrapped, RESPOND, *(tool for builder in builders for tool in builder.tools()))


def builder_calls(builder: ListBuilder, values: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The builder calls that make ``values`` (``[]``: none; the empty list is an entity)."""
    calls = []
    for index, value in enumerate(values):
        name = ("start_" if index == 0 else "add_to_") + f"{builder.name}_list"
        calls.append((name, builder.unpack(value) if builder.unpack else {builder.args[0].name: value}))
    return calls
