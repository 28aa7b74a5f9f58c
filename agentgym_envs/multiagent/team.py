"""A team version of any scenario: agents each hold a subset of its tools and pass the ticket
with a ``handoff`` pseudo-tool.

:class:`TeamScenario` is itself a :class:`~agentgym_envs.core.Scenario`, so the core's
:class:`~agentgym_envs.core.Episode` runs it unchanged: one conversation, one entity table
and one world shared by the team. The base scenario's tools run on the base world (wrapped,
not copied); its grader, judge, expert, tasks and splits are used as they are.

The handoff: ``handoff(to)`` with ``to`` an entity of kind ``agent`` (every agent is a row
of the entity table from the start). It moves the ticket to ``to``; since the team shares
one episode, the conversation and the entity table go with it. Handing the ticket to its
holder is an error result. A handoff is a correct tool choice when the holder lacks the
tool of the base expert's next call and ``to`` holds it (and, as for every tool, when it is
not a repeat of an earlier identical call).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentgym_envs.core import Arg, Outcome, Scenario, TaskSource, Tool, ToolCall, ToolError

HANDOFF = "handoff"
AGENT_KIND = "agent"


@dataclass
class TeamWorld:
    """The world of one team episode: the base scenario's world, who holds the ticket, the
    handoffs so far (``(from, to)`` pairs) and the base calls that ran without error."""

    inner: Any
    holder: str
    handoffs: list[tuple[str, str]] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)


def _run_on_inner_world(fn: Callable[..., Any], name: str, world: TeamWorld, **arguments: Any) -> Any:
    output = fn(world.inner, **arguments)
    world.calls.append(ToolCall(name, arguments))
    return output


def _on_inner_world(tool: Tool) -> Tool:
    """``tool`` acting on ``TeamWorld.inner``; a call that returns is remembered in ``calls``.
    (A ``partial`` of a module-level function, not a closure: the env pickles, e.g. into
    trainer checkpoints.)"""
    return replace(tool, fn=functools.partial(_run_on_inner_world, tool.fn, tool.name))


def _handoff(world: TeamWorld, to: str) -> str:
    if to == world.holder:
        raise ToolError(f"the ticket is already with {to}; hand it to another agent")
    world.handoffs.append((world.holder, to))
    world.holder = to
    return f"Ticket handed from {world.handoffs[-1][0]} to {to}, with the conversation and the entity table."


def handoff_tool(agents: Sequence[str]) -> Tool:
    """The ``handoff(to)`` pseudo-tool for a team of ``agents``."""
    return Tool(
        HANDOFF,
        "Pass the ticket, the conversation and the entity table to another agent of the team.",
        (Arg("to", "string", AGENT_KIND, "The agent to hand the ticket to.", enum=tuple(agents)),),
        _handoff,
        latency_s=0.2,
        kind="generic",
    )


class TeamScenario(Scenario):
    """``base`` played by a team: ``roster`` maps each agent (the first one starts with the
    ticket) to the names of the base tools it holds; every agent also holds ``handoff``.

    Tool order: the base tools, then ``handoff``. The entity table has room for the base
    scenario's rows plus one row per agent.
    """

    def __init__(self, base: Scenario, roster: Mapping[str, Sequence[str]], team_note: str = "") -> None:
        if not roster:
            raise ValueError("a team needs at least one agent")
        known = {tool.name for tool in base.tools}
        for agent, names in roster.items():
            unknown = sorted(set(names) - known)
            if unknown:
                raise ValueError(f"agent {agent!r} holds unknown tool(s) {unknown}; tools: {sorted(known)}")
        if HANDOFF in known:
            raise ValueError(f"the base scenario already has a tool named {HANDOFF!r}")
        self.base = base
        self.agents: tuple[str, ...] = tuple(roster)
        self.holdings: dict[str, frozenset[str]] = {a: frozenset(names) | {HANDOFF} for a, names in roster.items()}
        self.tools = tuple(_on_inner_world(tool) for tool in base.tools) + (handoff_tool(self.agents),)
        self.name = f"{base.name}_team"
        self.env_id = f"{base.name}_team"
        self.description = f"{base.description} Played by a team: {', '.join(self.agents)}."
        self.splits, self.difficulties = base.splits, base.difficulties
        self.max_entities = base.max_entities + len(self.agents)
        self.static_entities = base.static_entities + tuple((AGENT_KIND, agent) for agent in self.agents)
        self.max_entity_chars, self.max_prompt_chars = base.max_entity_chars, base.max_prompt_chars
        self.max_result_chars, self.max_action_chars = base.max_result_chars, base.max_action_chars
        self.max_turns = base.max_turns
        self.baseline_tokens, self.baseline_seconds = base.baseline_tokens, base.baseline_seconds
        self.success_criteria, self.default_rewards = dict(base.success_criteria), base.default_rewards
        self.gives_verdicts, self.gives_hints = base.gives_verdicts, base.gives_hints
        self.training_rewards = dict(base.training_rewards)
        roster_text = "; ".join(f"{a}: {', '.join(sorted(self.holdings[a]))}" for a in self.agents)
        self.instructions = "\n\n".join(
            part for part in (base.instructions, team_note, f"The team and its tools: {roster_text}.") if part
        )

    # ------------------------------------------------------------- delegation
    def task_source(self, split: str) -> TaskSource:
        return self.base.task_source(split)

    def task_from_dict(self, data: dict[str, Any]) -> Any:
        return self.base.task_from_dict(data)

    def unit_id(self, task: Any) -> str:
        return self.base.unit_id(task)

    def new_world(self, task: Any) -> TeamWorld:
        return TeamWorld(self.base.new_world(task), self.agents[0])

    def prompt(self, task: Any) -> str:
        return self.base.prompt(task)

    def hint(self, task: Any) -> str:
        return self.base.hint(task)

    def initial_entities(self, task: Any) -> Iterable[tuple[str, Any]]:
        return self.base.initial_entities(task)

    def grade(self, task: Any, world: TeamWorld) -> Outcome:
        return self.base.grade(task, world.inner)

    def finished(self, task: Any, world: TeamWorld) -> bool:
        return self.base.finished(task, world.inner)

    def verdict(self, task: Any, world: TeamWorld, call: ToolCall) -> bool | None:
        return None if call.name == HANDOFF else self.base.verdict(task, world.inner, call)

    def extra_metrics(self, task: Any, world: TeamWorld) -> dict[str, float]:
        return {**self.base.extra_metrics(task, world.inner), "handoffs": float(len(world.handoffs))}

    # ------------------------------------------------------------ the team
    def holders_of(self, tool_name: str) -> list[str]:
        """The agents holding ``tool_name``, in roster order."""
        return [agent for agent in self.agents if tool_name in self.holdings[agent]]

    def next_base_call(self, task: Any, world: TeamWorld) -> ToolCall | None:
        """The base expert's next call given the base calls so far (None when it has none)."""
        try:
            return self.base.expert_call(task, world.inner, world.calls)
        except StopIteration:
            return None

    def judge_call(self, task: Any, world: TeamWorld, call: ToolCall) -> bool:
        if call.name != HANDOFF:
            return self.base.judge_call(task, world.inner, call)
        sender, receiver = world.handoffs[-1]  # the handoff has run: judge the move it made
        needed = self.next_base_call(task, world)
        return needed is not None and needed.name not in self.holdings[sender] and needed.name in self.holdings[receiver]

    def expert_call(self, task: Any, world: TeamWorld, history: Sequence[ToolCall]) -> ToolCall:
        """The base expert's next call if the holder holds its tool, else a handoff to the
        first agent (in roster order) that holds it."""
        needed = self.next_base_call(task, world)
        if needed is None:
            raise RuntimeError("the base expert has no call left for this task")
        if needed.name in self.holdings[world.holder]:
            return needed
        holders = self.holders_of(needed.name)
        if not holders:
            raise RuntimeError(f"no agent of the team holds {needed.name!r}, which the task needs")
        return ToolCall(HANDOFF, {"to": holders[0]})
