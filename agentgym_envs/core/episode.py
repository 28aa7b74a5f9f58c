"""One episode of a scenario, independent of gymnasium: the engine every environment runs.

It executes tool calls (text or structured) against the world, keeps the entity table, the
OpenAI-format conversation, the incremental text observation, and the episode's counters.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from .entities import Entity, EntityTable
from .flat_rows import FlatRows
from .parsing import CallParseError, ToolCall, compact_json, parse_action
from .scenario import Outcome, Scenario
from .text import sanitize
from .tokens import count_tokens
from .tools import Arg, Tool, ToolError, ToolResult

MAX_ECHO_CHARS = 300  # how much of an agent's raw (invalid) action the observation repeats
MAX_MEMO = 4096  # kind masks (and their per-dimension masks) a tool set's layout remembers
MAX_MEMO_BYTES = 16 << 20  # and the bytes its grown kind masks may hold (a tau2 mask is tens of KiB)
_SCALARS = (str, int, float, bool)  # the value types whose type checks a layout remembers per value


@dataclass(frozen=True)
class CallReport:
    """What happened on one step.

    ``valid``: the call parsed and fit a known tool's signature; ``ok``: it also ran without
    a tool error; ``correct``: the scenario judged it the right tool choice (never for a
    repeated identical call); ``error``: the problem, shown to the agent, or None;
    ``parse``: for text actions, how the call was written (:meth:`ParsedCall.report`, with
    ``form`` None when nothing parsed); ``verdict``: what the result says about the rows the
    call named (:meth:`~.scenario.Scenario.verdict`), None when nothing.
    """

    call: ToolCall | None
    valid: bool
    ok: bool
    correct: bool
    error: str | None
    result: str
    terminal: bool
    parse: dict[str, Any] | None = None
    verdict: bool | None = None


UNPARSED = {"form": None, "source": None, "repaired": False, "repairs": []}


def max_observation_chars(scenario: Scenario, history_turns: int) -> int:
    """An upper bound on the length of :meth:`Episode.observation`."""
    turn = MAX_ECHO_CHARS + 3 + 5 + scenario.max_result_chars
    return (
        scenario.max_prompt_chars
        + 80
        + history_turns * (turn + 2)
        + 12
        + scenario.max_entities * (scenario.max_entity_chars + 1)
    )


@lru_cache(maxsize=1024)
def with_article(noun: str) -> str:
    """``"invoice_id"`` -> ``"an invoice_id"``, ``"user_id"`` -> ``"a user_id"`` (by spelling; cached: entity
    kinds are few)."""
    vowel_sound = noun[:1].lower() in "aeio" or (noun[:1].lower() == "u" and not noun.lower().startswith("us"))
    return ("an " if vowel_sound else "a ") + noun


def assistant_message(call: ToolCall, call_id: str) -> dict[str, Any]:
    """The assistant turn that makes ``call``, in the OpenAI chat format the conversation keeps."""
    function = {"name": call.name, "arguments": call.arguments_json}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": function}]}


def describe_call(call: ToolCall) -> str:
    """How a call is written in the observation and counted in tokens."""
    return f"{call.name} {call.arguments_json}"


class MaskLayout:
    """Mask columns of a tool set per sequence of entity kinds, computed once and reused."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = tools
        self.n_slots = max((len(t.args) for t in tools), default=0)
        # [tool, slot, kind]: the slot is an argument of that entity kind; the last column: a kind no argument takes
        argument_kinds = sorted({arg.entity for tool in tools for arg in tool.args})
        self._kind_column = {kind: column for column, kind in enumerate(argument_kinds)}
        self._by_kind = np.array(
            [[[k < len(t.args) and t.args[k].entity == kind for kind in (*argument_kinds, None)] for k in range(self.n_slots)]
             for t in tools],
            dtype=bool,
        ).reshape(len(tools), self.n_slots, len(argument_kinds) + 1)
        self._empty: dict[int, np.ndarray] = {}
        self._static: dict[int, tuple[EntityTable, np.ndarray, np.ndarray]] = {}
        self._checks: dict[str, tuple[Arg, ...]] = {}  # per kind: one argument per distinct type check
        self._row_fits: dict[tuple[str, type, Any], tuple[bool, ...]] = {}  # _fits of scalar values
        self._grown: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._grown_bytes = 0
        self._actions: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.needed = np.arange(self.n_slots) < np.array([len(t.args) for t in tools], dtype=int)[:, None]

    def __reduce__(self) -> tuple[type[MaskLayout], tuple[Sequence[Tool]]]:
        """Pickled as its tools: the columns and masks it remembers are recomputed alike on demand, and
        would make a checkpoint of envs mid-episode tens of megabytes per env."""
        return (MaskLayout, (self.tools,))

    def empty_argument_mask(self, capacity: int) -> np.ndarray:
        if capacity not in self._empty:
            mask = np.zeros((len(self.tools), self.n_slots, capacity), dtype=bool)
            for t, tool in enumerate(self.tools):
                mask[t, len(tool.args) :, 0] = True  # slots past the arity: row 0 only
            self._empty[capacity] = mask
        return self._empty[capacity].copy()

    def static_kind_mask(self, table: EntityTable) -> tuple[np.ndarray, np.ndarray]:
        """The read-only ``[tool, slot, row]`` kind mask of a scenario's :func:`static_table`, its rows
        filled in, and the tools it gives a fitting row per argument (computed once per table: every
        episode starts from them)."""
        cached = self._static.get(id(table))
        if cached is None or cached[0] is not table:
            mask = self.empty_argument_mask(table.capacity)
            mask[:, :, : len(table)] |= self.fitting(table.rows)
            kind_open = mask.any(axis=2).all(axis=1)
            mask.flags.writeable = kind_open.flags.writeable = False
            cached = self._static[id(table)] = (table, mask, kind_open)
        return cached[1], cached[2]

    def grown(self, kinds: np.ndarray, start: int, rows: Sequence[Entity]) -> tuple[np.ndarray, np.ndarray]:
        """The kind mask ``kinds`` with ``rows`` added from row ``start`` on, and the tools it gives a
        fitting row per argument (read-only). Remembered: tables whose rows came alike (of the same
        kinds, fitting the same argument types) share the arrays."""
        key = (id(kinds), start, tuple([(row.kind, self._fits(row)) for row in rows]))
        memo = self._grown.get(key)
        if memo is not None and memo[0] is kinds:
            return memo[1], memo[2]
        grown = kinds.copy()
        grown[:, :, start : start + len(rows)] |= self.fitting(rows)
        kind_open = grown.any(axis=2).all(axis=1)
        grown.flags.writeable = kind_open.flags.writeable = False
        if len(self._grown) >= MAX_MEMO or self._grown_bytes >= MAX_MEMO_BYTES:
            self._grown.clear()
            self._grown_bytes = 0
        self._grown[key] = (kinds, grown, kind_open)
        self._grown_bytes += grown.nbytes
        return grown, kind_open

    def _fits(self, row: Entity) -> tuple[bool, ...]:
        """Whether the row's value fits each distinct type check of the arguments of its kind (what
        :meth:`fitting` decides for the row). Remembered for values of the plain scalar types (of the same
        type, equal values fit alike)."""
        value = row.value
        key = (row.kind, type(value), value) if type(value) in _SCALARS else None
        fits = None if key is None else self._row_fits.get(key)
        if fits is None:
            fits = self._checked_fits(row.kind, value)
            if key is not None:
                if len(self._row_fits) >= MAX_MEMO:
                    self._row_fits.clear()
                self._row_fits[key] = fits
        return fits

    def _checked_fits(self, kind: str, value: Any) -> tuple[bool, ...]:
        checks = self._checks.get(kind)
        if checks is None:
            distinct: dict[tuple[Any, ...], Arg] = {}
            for tool in self.tools:
                for arg in tool.args:
                    if arg.entity == kind:
                        distinct.setdefault(_check_key(arg), arg)
            checks = self._checks[kind] = tuple(distinct.values())
        return tuple(arg.type_error(value) is None for arg in checks)

    def action_mask(self, open_tools: np.ndarray, argument: np.ndarray, remember: bool) -> np.ndarray:
        """The per-dimension masks (MaskablePPO's form) of these open tools and argument mask, read-only;
        ``remember``: the arrays are a kind mask's (never changed), so the answer is kept for them."""
        memo = self._actions.get(id(argument)) if remember else None
        if memo is not None and memo[0] is argument:
            return memo[1]
        shown = open_tools if open_tools.any() else np.ones(len(self.tools), dtype=bool)
        slots = (argument & self.needed[:, :, None])[open_tools].any(axis=0)  # needed: the slot is one of the tool's arguments
        slots[~slots.any(axis=1), 0] = True  # MaskablePPO needs one allowed value per dimension
        action = np.concatenate([shown, slots.ravel()])
        action.flags.writeable = False
        if remember:
            if len(self._actions) >= MAX_MEMO:
                self._actions.clear()
            self._actions[id(argument)] = (argument, action)
        return action

    def fitting(self, rows: Sequence[Entity]) -> np.ndarray:
        """``[tool, slot, row]`` for ``rows``: the row's kind is the argument's and its value fits
        the argument's type (a ``number`` row may not be an integer)."""
        fits = self.columns([row.kind for row in rows])
        verdicts: dict[tuple[Any, ...], bool] = {}  # a row fits arguments of the same type alike: checked once
        misfits = []
        for tool, slot, row in zip(*(axis.tolist() for axis in np.nonzero(fits))):
            arg = self.tools[tool].args[slot]
            key = (row, *_check_key(arg))
            if key not in verdicts:
                verdicts[key] = arg.type_error(rows[row].value) is None
            if not verdicts[key]:
                misfits.append((tool, slot, row))
        if misfits:
            fits[tuple(np.array(misfits).T)] = False
        return fits

    def columns(self, kinds: Sequence[str]) -> np.ndarray:
        """Mask columns ``[tool, slot, row]`` for rows of these kinds: where each row fits an argument (a new array)."""
        other = len(self._kind_column)
        return self._by_kind.take([self._kind_column.get(kind, other) for kind in kinds], axis=2)


def _check_key(arg: Arg) -> tuple[Any, ...]:
    """What :meth:`Arg.type_error` checks a value against (arguments alike in it decide alike)."""
    return arg.type, None if arg.enum is None else id(arg.enum), None if arg.items is None else arg.items.get("type")


_LAYOUTS: dict[int, MaskLayout] = {}
_STATIC_TABLES: dict[tuple[tuple[tuple[str, Any], ...], int], EntityTable] = {}


def static_table(scenario: Scenario) -> EntityTable:
    """The entity table of a scenario's static entities, built once (copy it before use)."""
    key = (scenario.static_entities, scenario.max_entities)
    table = _STATIC_TABLES.get(key)
    if table is None:
        table = _STATIC_TABLES[key] = EntityTable(scenario.max_entities)
        for kind, value in scenario.static_entities:
            table.add(kind, value)
    return table


def mask_layout(tools: Sequence[Tool]) -> MaskLayout:
    """The (cached) mask layout of a tool set; scenarios reuse one tools tuple for all episodes."""
    layout = _LAYOUTS.get(id(tools))
    if layout is None or layout.tools is not tools:
        layout = _LAYOUTS[id(tools)] = MaskLayout(tools)
    return layout


class Episode:
    """The state of one episode of ``scenario`` on ``task``."""

    def __init__(self, scenario: Scenario, task: Any, history_turns: int = 8, mask_repeats: bool = False) -> None:
        self.scenario, self.task = scenario, task
        self.unit_id = scenario.unit_id(task)
        """The unit of generalisation the task is drawn from (:meth:`Scenario.unit_id`)."""
        self.mask_repeats = mask_repeats
        self.tools: Sequence[Tool] = scenario.tools
        self._tool_index = {tool.name: i for i, tool in enumerate(self.tools)}
        self.world = scenario.new_world(task)
        static = static_table(scenario)
        self.static_entities = static
        """The scenario's static rows the table starts with (shared by every episode: read only)."""
        self.entities = static.copy()
        self.history_turns = history_turns
        self.prompt = sanitize(scenario.prompt(task))[: scenario.max_prompt_chars]
        self.turn_texts: list[str] = []
        self.messages: list[dict[str, Any]] = []
        if scenario.instructions:
            self.messages.append({"role": "system", "content": scenario.instructions})
        self.messages.append({"role": "user", "content": self.prompt})
        self.tokens_used = count_tokens(self.prompt)
        self.elapsed_s = 0.0
        self.calls = self.correct_calls = self.invalid_calls = 0
        self.ended = False
        self._seen_calls: set[str] = set()
        self.made_rows: list[set[tuple[int, ...]]] = [set() for _ in self.tools]
        """Per tool, the entity rows of every valid call made so far (those the table expresses)."""
        self.last_call: tuple[int, tuple[int, ...]] | None = None
        """The last call's tool and entity rows (rows empty when the table cannot express
        them), or None when it was not a valid call."""
        self.history: list[ToolCall] = []  # the calls that ran without error, in order
        self._entity_block = ""
        self._entity_block_rows = -1
        self._layout = mask_layout(self.tools)
        self._n_slots = self._layout.n_slots
        self._masks_for = len(static)  # the rows the kind mask has taken in
        # [tool, slot, row]: the row fits; the tools with a fitting row per argument
        self._kind_mask, self._kind_open = self._layout.static_kind_mask(static)
        self._masks_key: tuple[int, int] | None = None  # (rows, calls made) the masks below describe
        self._argument_mask = self._kind_mask
        self._open_tools = np.zeros(len(self.tools), dtype=bool)
        self._action_mask = np.zeros(0, dtype=bool)
        for kind, value in scenario.initial_entities(task):
            self.entities.add(kind, value)
        self.flat_rows = FlatRows(scenario, self.entities, scenario.request_text(self.prompt)) if scenario.flat_holds else None
        """The rows the flat admissible layout takes in, in order, where the scenario holds some
        back (:attr:`Scenario.flat_holds`); None: every row, in table order."""

    # ----------------------------------------------------------------- actions
    def call_text(self, action: Any, allowed: Collection[str] | None = None) -> CallReport:
        """Run a text action (a tool call in any form :func:`parse_action` reads); anything
        malformed is an error result."""
        try:
            parsed = parse_action(action)
        except CallParseError as exc:
            raw = action if isinstance(action, str) else repr(action)
            return replace(self._reject(None, raw, str(exc)), parse=dict(UNPARSED))
        return replace(self.run(parsed.call, allowed), parse=parsed.report())

    def call_structured(self, action: Sequence[int], allowed: Collection[str] | None = None) -> CallReport:
        """Run ``[tool, slot_1, ..., slot_k]`` (already checked to be inside the space)."""
        call, problem = self.decode(action)
        if call is None:
            written = f"{self.tools[int(action[0])].name} (entities {[int(a) for a in action[1:]]})"
            return self._reject(None, written, problem)
        arity = len(self.tools[int(action[0])].args)
        return self.run(call, allowed, tuple(int(a) for a in action[1 : 1 + arity]))

    def decode(self, action: Sequence[int]) -> tuple[ToolCall | None, str]:
        """The call a structured action stands for, or None and the reason it stands for none."""
        tool = self.tools[int(action[0])]
        arguments: dict[str, Any] = {}
        for position, arg in enumerate(tool.args):
            slot = int(action[1 + position])
            if slot >= len(self.entities):
                return None, f"argument '{arg.name}' of {tool.name} points at entity {slot}, but the table has {len(self.entities)} rows"
            entity = self.entities.rows[slot]
            if entity.kind != arg.entity:
                return None, f"argument '{arg.name}' of {tool.name} needs {with_article(arg.entity)}, entity {slot} is {with_article(entity.kind)}"
            arguments[arg.name] = entity.value
        return ToolCall(tool.name, arguments), ""

    def encode(self, call: ToolCall) -> np.ndarray | None:
        """The structured action for ``call``, or None if the entity table cannot express it."""
        index = self._tool_index.get(call.name)
        if index is None:
            return None
        action = np.zeros(1 + self._n_slots, dtype=np.int64)
        action[0] = index
        for position, arg in enumerate(self.tools[index].args):
            row = self.entities.find(arg.entity, call.arguments.get(arg.name))
            if row is None:
                return None
            action[1 + position] = row
        return action

    def problem(self, call: ToolCall, allowed: Collection[str] | None = None) -> str | None:
        """Why ``call`` is not a valid call (unknown or unavailable tool, arguments that do not
        fit its signature), or None when it is valid."""
        index = self._tool_index.get(call.name)
        if index is None:
            names = [t.name for t in self.tools if allowed is None or t.name in allowed]
            return f"unknown tool '{call.name}'; available tools: {names}"
        if allowed is not None and call.name not in allowed:
            return f"tool '{call.name}' is not available to this agent; it holds {sorted(allowed)}"
        return self.tools[index].check_arguments(call.arguments)

    def run(self, call: ToolCall, allowed: Collection[str] | None = None, rows: tuple[int, ...] | None = None) -> CallReport:
        """Check and execute a parsed call against the world (``rows``: the entity rows a
        structured action named, else looked up in the table)."""
        problem = self.problem(call, allowed)
        if problem is not None:
            return self._reject(call, describe_call(call), problem)
        index = self._tool_index[call.name]
        tool = self.tools[index]
        if rows is None:
            encoded = self.encode(call)
            rows = None if encoded is None else tuple(int(r) for r in encoded[1 : 1 + len(tool.args)])
        if rows is not None:
            self.made_rows[index].add(rows)
        self.last_call = (index, rows or ())
        call = ToolCall(call.name, tool.normalize_arguments(call.arguments))
        ok, result = self._execute(tool, call)
        key = call.key
        correct = ok and key not in self._seen_calls and self.scenario.judge_call(self.task, self.world, call)
        self._seen_calls.add(key)
        if ok:
            self.history.append(call)
        terminal = (ok and tool.terminal) or self.scenario.finished(self.task, self.world)
        verdict = self.scenario.verdict(self.task, self.world, call) if ok and self.scenario.gives_verdicts else None
        report = CallReport(call, True, ok, correct, None if ok else result, result, terminal, verdict=verdict)
        self._record(report, describe_call(call))
        return report

    def _execute(self, tool: Tool, call: ToolCall) -> tuple[bool, str]:
        try:
            output = tool.fn(self.world, **call.arguments)
        except ToolError as exc:
            return False, f"Error: {exc}"
        except Exception as exc:  # an agent's odd but well-typed values must not crash the env
            return False, f"Error: {tool.name} failed on these arguments ({type(exc).__name__}: {exc})"
        self.elapsed_s += tool.latency_s
        flat = self.flat_rows
        if isinstance(output, ToolResult):
            for kind, value in output.reveal:
                row = self.entities.add(kind, value)
                if flat is not None:
                    flat.offer(row)
            output = output.output
        text = output if isinstance(output, str) else compact_json(output)
        if flat is not None:
            flat.name(text, tool.name)
        return True, text

    def reject(self, written: str, problem: str) -> CallReport:
        """Record an action that is no tool call at all (e.g. outside the action space, or
        missing) as an invalid turn: ``written`` is echoed, ``problem`` is the error shown."""
        return self._reject(None, written, problem)

    def _reject(self, call: ToolCall | None, written: str, problem: str) -> CallReport:
        self.last_call = None
        report = CallReport(call, False, False, False, problem, f"Error: {problem}", False)
        self._record(report, written)
        return report

    def _record(self, report: CallReport, written: str) -> None:
        self.calls += 1
        self.correct_calls += report.correct
        self.invalid_calls += not report.valid
        echo = sanitize(written[:MAX_ECHO_CHARS] + ("..." if len(written) > MAX_ECHO_CHARS else ""))
        result = sanitize(report.result[: self.scenario.max_result_chars])
        turn = f"> {echo}\n< {result}"
        self.turn_texts.append(turn)
        # What the agent wrote and read, as the observation shows it (plus any cut-off rest).
        self.tokens_used += count_tokens(turn)
        for full, limit in ((written, MAX_ECHO_CHARS), (report.result, self.scenario.max_result_chars)):
            if len(full) > limit:
                self.tokens_used += count_tokens(full[limit:])
        self._append_messages(report, written)
        if report.terminal:
            self.ended = True

    def _append_messages(self, report: CallReport, written: str) -> None:
        if report.call is None:
            self.messages.append({"role": "assistant", "content": written})
            self.messages.append({"role": "user", "content": report.result})
            return
        call_id = f"call_{self.calls}"
        self.messages.append(assistant_message(report.call, call_id))
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": report.result})

    def progress(self) -> float:
        """The task's progress in [0, 1] (:meth:`Scenario.progress`; where the scenario gives
        none, the correct calls so far over those of :func:`expert_plan_length`)."""
        progress = self.scenario.progress(self.task, self.world, self.correct_calls)
        if progress is None:
            progress = min(1.0, self.correct_calls / expert_plan_length(self.scenario, self.task))
        return progress

    # ------------------------------------------------------------ observation
    def observation(self) -> str:
        """The Markov view: task, the conversation so far (trimmed from the middle), entities."""
        turns = self.turn_texts
        parts = [self.prompt]
        if turns:
            shown = turns[len(turns) - min(self.history_turns, len(turns)) :]  # history_turns=0: none
            omitted = len(turns) - len(shown)
            parts.append("CONVERSATION" + (f"\n... ({omitted} earlier turns omitted) ..." if omitted else ""))
            parts.extend(shown)
        parts.append(self.entity_block())
        return "\n\n".join(parts)

    def entity_block(self) -> str:
        n_rows = len(self.entities)
        if self._entity_block_rows != n_rows:
            limit = self.scenario.max_entity_chars
            self._entity_block = "\n".join(["ENTITIES", *(row[:limit] for row in self.entities.row_texts)])
            self._entity_block_rows = n_rows
        return self._entity_block

    # ------------------------------------------------------------------ masks
    def action_mask(self) -> np.ndarray:
        """Flat per-dimension masks in the layout MaskablePPO reads for ``MultiDiscrete``: the
        :meth:`open_tools` (all tools when none is open, as every dimension needs one allowed
        value), then per argument slot the rows some open tool takes there (row 0 when none)."""
        self._update_masks()
        return self._action_mask

    def argument_mask(self) -> np.ndarray:
        """``[tool, slot, entity]``: entities whose kind fits that tool's argument.

        Slots beyond a tool's arity allow entity 0 only (their value is ignored). With
        ``mask_repeats``, a one-argument tool's rows already called with it are out, and a tool
        whose every combination of rows has been called loses all its rows.
        """
        self._update_masks()
        return self._argument_mask

    def open_tools(self) -> np.ndarray:
        """Per tool: every argument has an allowed row (and, with ``mask_repeats``, some
        combination of rows is still uncalled)."""
        self._update_masks()
        return self._open_tools

    def kind_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """``(tools, arguments)`` as :meth:`open_tools` and :meth:`argument_mask`, but with no call
        left out for having been made: the tools whose every argument has a fitting row, and per
        tool and slot the rows that fit. Read-only; new arrays only when rows are added."""
        rows = self.entities.rows
        start, end = self._masks_for, len(rows)
        if start != end:  # the kind mask grows incrementally: rows never move
            self._kind_mask, self._kind_open = self._layout.grown(self._kind_mask, start, rows[start:end])
            self._masks_for = end
        return self._kind_open, self._kind_mask

    def _update_masks(self) -> None:
        """Recompute the masks when rows were added or, with ``mask_repeats``, when a call was made.

        The arrays handed out are read-only: they are replaced, never changed.
        """
        key = (len(self.entities.rows), sum(map(len, self.made_rows)) if self.mask_repeats else 0)
        if key == self._masks_key:
            return
        open_tools, argument = self.kind_masks()
        if self.mask_repeats:
            argument, exhausted = self._without_repeats(argument)
            open_tools = argument.any(axis=2).all(axis=1) & ~exhausted
            argument.flags.writeable = open_tools.flags.writeable = False
        action = self._layout.action_mask(open_tools, argument, remember=not self.mask_repeats)
        self._argument_mask, self._action_mask, self._open_tools, self._masks_key = argument, action, open_tools, key

    def _without_repeats(self, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kind mask less the calls already made, and which tools have no call left."""
        argument = kinds.copy()
        exhausted = np.zeros(len(self.tools), dtype=bool)
        for t, made in enumerate(self.made_rows):
            if not made:
                continue
            arity = len(self.tools[t].args)
            if arity == 1:
                argument[t, 0, [rows[0] for rows in made]] = False
            elif len(made) >= int(np.prod(kinds[t, :arity].sum(axis=1))):
                exhausted[t] = True
                argument[t, :arity] = False
        return argument, exhausted

    # ---------------------------------------------------------------- metrics
    def metrics(self, outcome: Outcome) -> dict[str, float]:
        """The episode-end metrics of the environment contract.

        ``cost_reduction`` and ``time_savings`` compare the agent with the scenario's human
        baseline (tokens, seconds per task). A failed task still needs the human, so its
        cost is the agent's plus the baseline: both savings are then negative.
        """
        s = self.scenario
        human_tokens = 0.0 if outcome.success else s.baseline_tokens
        human_seconds = 0.0 if outcome.success else s.baseline_seconds
        metrics = {
            "success": float(outcome.success),
            "score": float(outcome.score),
            "tool_reliability": self.correct_calls / self.calls if self.calls else 0.0,
            "tokens_used": float(self.tokens_used),
            "cost_reduction": 1.0 - (self.tokens_used + human_tokens) / s.baseline_tokens,
            "time_savings": 1.0 - (self.elapsed_s + human_seconds) / s.baseline_seconds,
            "elapsed_s": self.elapsed_s,
            "turns": float(self.calls),
            "invalid_calls": float(self.invalid_calls),
            "correct_calls": float(self.correct_calls),
        }
        metrics.update(s.extra_metrics(self.task, self.world))
        return metrics


_PLAN_LENGTHS: WeakKeyDictionary[Scenario, dict[Any, int]] = WeakKeyDictionary()


def expert_plan_length(scenario: Scenario, task: Any) -> int:
    """How many correct calls the scripted expert makes on ``task`` (at least 1): its episode
    played once per scenario and task id, and remembered while the scenario lives."""
    lengths = _PLAN_LENGTHS.setdefault(scenario, {})
    key = getattr(task, "task_id", id(task))
    if key not in lengths:
        episode = Episode(scenario, task)
        while not episode.ended and episode.calls < 4 * scenario.max_turns:
            try:
                call = scenario.expert_call(task, episode.world, episode.history)
            except StopIteration:
                break
            episode.run(call)
        lengths[key] = max(1, episode.correct_calls)
    return lengths[key]
