"""A flat ``Discrete`` action space over the structured tool calls, with one joint mask (the
action space SB3's MaskablePPO and DQN get)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice, product
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentgym_envs.core.arguments import check_int
from agentgym_envs.core.episode import Episode
from agentgym_envs.core.tools import Tool

LAYOUTS = ("product", "admissible")
MAX_PRODUCT_ACTIONS = 1 << 20  # beyond this the product layout is refused: use "admissible"
MAX_SHARED = 256  # the numberings kept for later episodes (one per sequence of chunks of offered rows)
MAX_SHARED_BYTES = 16 << 20  # and the bytes their arrays may hold (a tau2 numbering's cells are hundreds of KiB)
MAX_MASKS = 16  # the joint masks a shared numbering keeps (one per kind mask it met)


class CallTable:
    """One episode's admissible calls, numbered per tool in the order they became admissible.

    A call is a tool and one entity row of the right kind per argument. Rows never move, so a
    call keeps its number for the whole episode; when rows are offered (every row as it is
    added, or in the order of the episode's :class:`~agentgym_envs.core.flat_rows.FlatRows`),
    the new calls (those naming a new row) take the next free numbers of their tool, in the
    order the rows were offered, until the tool's ``capacity`` is used up (later calls of that
    tool are not numbered).
    """

    def __init__(self, kinds: Sequence[tuple[str, ...]], capacity: int) -> None:
        self.kinds, self.capacity = kinds, capacity
        self.calls: list[list[tuple[int, ...]]] = [[] for _ in kinds]
        self.numbers: list[dict[tuple[int, ...], int]] = [{} for _ in kinds]
        self._positions_by_kind: dict[str, list[int]] = {}  # the offered rows of each kind, as offer positions
        self._rows: list[int] = []  # the offered rows, in the order offered
        self._in_order = True  # every row offered at its own index (positions are rows)

    @property
    def seen(self) -> int:
        """How many entity rows have been offered to the numbering."""
        return len(self._rows)

    def extend(self, rows: Sequence[int], kinds: Sequence[str]) -> None:
        """Number the calls that offering ``rows`` (of ``kinds``) makes admissible."""
        seen = len(self._rows)
        if not rows:
            return
        for position, (row, kind) in enumerate(zip(rows, kinds, strict=True), start=seen):
            self._positions_by_kind.setdefault(kind, []).append(position)
            self._in_order = self._in_order and row == position
        self._rows += rows
        new_kinds = set(kinds)
        order = None if self._in_order else self._rows
        for tool, tool_kinds in enumerate(self.kinds):
            calls, numbers = self.calls[tool], self.numbers[tool]
            room = self.capacity - len(calls)
            if room <= 0 or new_kinds.isdisjoint(tool_kinds):  # every new call names a new row
                continue
            pools = [self._positions_by_kind.get(kind, []) for kind in tool_kinds]
            if not all(pools):  # an argument with no row yet: no call (without walking the other rows' products)
                continue
            for positions in islice(new_calls(pools, seen), room):
                call = positions if order is None else tuple(order[p] for p in positions)
                numbers[call] = len(calls)
                calls.append(call)

    def copy(self) -> CallTable:
        """An independent table with the same numbering."""
        table = CallTable(self.kinds, self.capacity)
        table.calls, table.numbers = [list(calls) for calls in self.calls], [dict(numbers) for numbers in self.numbers]
        table._positions_by_kind = {kind: list(positions) for kind, positions in self._positions_by_kind.items()}
        table._rows, table._in_order = list(self._rows), self._in_order
        return table


def new_calls(pools: Sequence[list[int]], seen: int) -> Iterator[tuple[int, ...]]:
    """The tuples of ``product(*pools)`` that name a position ``>= seen`` (a row offered after the first
    ``seen``), in ``product``'s order, without visiting the others (each pool lists positions in
    increasing order)."""
    if seen == 0:
        return product(*pools)
    return _naming_new(pools, seen, ())


def _naming_new(pools: Sequence[list[int]], seen: int, prefix: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    if not pools:
        return
    first, rest = pools[0], pools[1:]
    if not any(pool and pool[-1] >= seen for pool in rest):  # the new row must be here
        first = first[bisect_left(first, seen):]
    for row in first:
        if row >= seen:
            for tail in product(*rest):
                yield (*prefix, row, *tail)
        else:
            yield from _naming_new(rest, seen, (*prefix, row))


@dataclass
class _Numbering:
    """A call numbering (``table``) and, in the admissible layout, its flat actions' mask cells:
    ``cells[slot, action]`` is the cell of a flat ``[tool, slot, row]`` argument mask that holds the row
    the action names in that slot (row 0 past its tool's arity and until a call is numbered there),
    ``numbered[action]`` whether a call is numbered there; ``masks``: the joint masks (before made calls are
    left out) of the read-only argument masks it met, by their identity and the open tools (a shared numbering
    serves episodes whose rows came alike, whose kind masks are shared too).

    The numbering depends only on the chunks of rows offered at each step (:func:`_offered`), so a
    ``shared`` one (read-only) serves every episode whose rows came in the same chunks: the roots by an
    episode's first chunk, ``children`` by the next one. A private one (past ``MAX_SHARED`` or ``MAX_SHARED_BYTES``) is extended
    in place by its episode."""

    tools: Sequence[Tool]
    table: CallTable
    cells: np.ndarray | None
    numbered: np.ndarray | None
    shared: bool = False
    children: dict[Any, _Numbering] = field(default_factory=dict)
    masks: dict[tuple[int, bytes], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without what it remembers (its shared children, the joint masks it met): rebuilt alike on
        demand, they would make a checkpoint of envs mid-episode megabytes per env."""
        return {**self.__dict__, "children": {}, "masks": {}}


def _offered(episode: Episode, seen: int, first: bool = False) -> tuple[Any, Sequence[int], tuple[str, ...]]:
    """The rows ``episode`` offers to its numbering past the first ``seen`` (``first``: only those its
    ``flat_rows`` offers at the start), as the chunk's key, the rows and their kinds. The key is what the
    numbering of the chunk depends on once the earlier chunks are given: the rows' kinds, and where
    ``flat_rows`` picks and orders the rows (holding some back), the rows themselves."""
    rows, flat = episode.entities.rows, episode.flat_rows
    offered = range(seen, len(rows)) if flat is None else flat.rows[seen : flat.start if first else None]
    kinds = tuple(rows[row].kind for row in offered)
    return (kinds if flat is None else (tuple(offered), kinds)), offered, kinds


def _rows_of(episode: Episode | None) -> tuple[int, int]:
    """How many entity rows ``episode`` holds and how many its ``flat_rows`` offers (-1: every row; (-1, -1):
    no episode): the joint mask changes with them, and with the calls made."""
    if episode is None:
        return -1, -1
    flat = episode.flat_rows
    return len(episode.entities.rows), -1 if flat is None else len(flat.rows)


def _integer(action: Any) -> int | None:
    """``action`` as an int where it is one, as ``Discrete.contains`` admits it (a Python or numpy
    integer, or a 0-d integer array; not a bool), else None."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    return None


class FlatDiscreteAction(gym.ActionWrapper):
    """``Discrete(N)`` over tool calls, with :meth:`action_masks` admitting exactly the valid
    calls (a tool the agent may call now, with a filled row of the right kind per argument;
    MaskablePPO's form for ``Discrete``).

    Two layouts:

    - ``"product"`` (default): one action per (tool, entity row for each of its arguments),
      ``N = sum over tools of max_entities ** arity``; action ``n`` falls in its tool's block
      and its offset there, written in base ``max_entities``, gives the rows. Every call is
      expressible and an action keeps its meaning across episodes, but ``N`` explodes with
      the arity (Math: 32,768 per three-argument tool; tau2: 256 rows and up to 11
      arguments), so it is refused beyond ``MAX_PRODUCT_ACTIONS``.
    - ``"admissible"``: ``N = n_tools * capacity``; tool ``t`` owns the block
      ``[t * capacity, (t + 1) * capacity)`` and numbers its admissible calls there in the
      order they become admissible (:class:`CallTable`; the admissible commands of TextWorld
      and Jericho, kept in place per tool). The block says which tool, so the output layer
      keeps a meaning per tool; within an episode a number always names the same call; the
      size stays small at any arity. ``capacity`` (None: the scenario's
      :attr:`~agentgym_envs.core.Scenario.flat_capacity`, 64; Math's 256) bounds the block. A
      tool with more admissible calls than ``capacity``
      (Tau2Airline-v0's ``book_reservation``: thousands of combinations) keeps the first
      ``capacity`` of them, so some calls are then not expressible (a scenario may hold rows
      back until the episode names them: ``Episode.flat_rows``); ``docs/contract.md``
      gives how often the expert's calls are. An unnumbered index stands for its tool with
      row 0 in every argument (masked out, and usually an invalid call).

    With the env's ``mask_repeats``, calls identical to one already made are masked out too.
    The joint mask is computed once per state (per episode and call: ``info["action_mask"]``
    and :meth:`action_masks` asked after the same step share the work) and handed out as a
    fresh copy each time.
    Works on any unwrapped env with a ``MultiDiscrete`` tool-call action space and
    ``call_masks()`` (:class:`~agentgym_envs.core.ToolUseEnv` in ``action_mode="structured"``
    and ``AgentGym/SupportTeam-v0``). Every ``info`` it returns holds the joint mask as
    ``info["action_mask"]`` (in place of the per-dimension masks), so that trainers reading
    masks from ``info`` get this action space's.
    """

    def __init__(self, env: gym.Env, layout: str = "product", capacity: int | None = None) -> None:
        super().__init__(env)
        if not (isinstance(self.base.action_space, spaces.MultiDiscrete) and hasattr(self.base, "call_masks")):
            raise ValueError("FlatDiscreteAction needs a tool-use env with action_mode='structured'")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        capacity = self.base.flat_capacity if capacity is None else capacity
        check_int("capacity", capacity, 1)
        self.layout, self.capacity = layout, capacity
        self.n_entities = int(self.base.max_entities)
        self.arities = list(self.base.tool_arities)
        self._n_slots = max(self.arities, default=0)
        self._no_rows = (0,) * self._n_slots  # the slots of an action past its tool's arity (or unnumbered)
        if layout == "product":
            sizes = [self.n_entities**arity for arity in self.arities]
            if sum(sizes) > MAX_PRODUCT_ACTIONS:
                raise ValueError(f"the product layout would have {sum(sizes):,} actions; use layout='admissible'")
        else:
            sizes = [capacity] * len(self.arities)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.action_space = spaces.Discrete(int(self.offsets[-1]))
        self._n_actions = int(self.offsets[-1])
        self._all_admitted = np.ones(self._n_actions, dtype=bool)  # the mask once an episode is over
        self._roots: dict[Any, _Numbering] = {}  # the shared numberings, by their first chunk (_offered)
        self._shared = self._shared_bytes = 0  # how many numberings are shared, and their arrays' bytes
        self._numbering: _Numbering | None = None  # the current episode's
        self._numbering_episode: Episode | None = None
        if layout == "admissible":  # per flat action: its tool, and where its rows are (_Numbering.cells)
            self._tool_of = np.repeat(np.arange(len(self.arities)), capacity)
            slots = np.arange(self._n_slots)[:, None]
            self._unused = slots >= np.array(self.arities, dtype=np.int64)[self._tool_of]  # [slot, action]: past the arity
            # [slot, action]: where in a flat [tool, slot, row] argument mask the row the action names in that slot
            # is (row 0 until a call is numbered there), so that one take reads every action's rows at once
            self._argument_shape = (len(self.arities), self._n_slots, self.n_entities)
            self._row_0 = ((self._tool_of * self._n_slots + slots) * self.n_entities).astype(np.int32)  # cells fit 4 bytes
        # the joint mask of the state (episode, its number of calls, its rows: _rows_of) it was computed in
        self._mask: np.ndarray | None = None
        self._mask_state: tuple[Episode | None, int, tuple[int, int]] | None = None
        # admissible layout: the joint mask before made calls are left out, and what it depends on
        # (the episode, its rows, the callable tools)
        self._before_repeats = np.zeros(0, dtype=bool)
        self._before_repeats_key: tuple[Episode, int, bytes] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its shared numberings (the current episode's stays): rebuilt alike on demand."""
        return {**self.__dict__, "_roots": {}, "_shared": 0, "_shared_bytes": 0}

    @property
    def base(self) -> Any:
        """The tool-use env under the wrappers (read each time: a curriculum changes it)."""
        return self.env.unwrapped

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return observation, self._with_mask(info, self.base)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        base = self.base
        observation, reward, terminated, truncated, info = self.env.step(self._structured(action, base.episode))
        return observation, reward, terminated, truncated, self._with_mask(info, base)

    def _with_mask(self, info: dict[str, Any], base: Any) -> dict[str, Any]:
        if getattr(base, "info_masks", False):  # this info's joint mask replaces the env's per-dimension masks
            base.info_masks = False
        info.pop("argument_mask", None)  # a fresh dict from the env under this wrapper
        episode = base.episode
        if episode is not None and not episode.ended:
            info["action_mask"] = self._mask_of(base, episode).copy()
        else:  # the episode is over: nothing is callable (a vector env resets it before the next decision)
            info["action_mask"] = self._all_admitted.copy()
        return info

    def action(self, action: Any) -> np.ndarray:
        return self._structured(action, self.base.episode)

    def _structured(self, action: Any, episode: Episode | None) -> np.ndarray:
        index = _integer(action)
        if index is None or not 0 <= index < self._n_actions:
            raise ValueError(f"action {action!r} is outside the action space {self.action_space} (an integer in [0, "
                             f"{self._n_actions}))")
        if self.layout == "admissible":
            tool, offset = divmod(index, self.capacity)
            calls = self._table_of(episode).calls[tool]
            rows = calls[offset] if offset < len(calls) else ()
            return np.array((tool, *rows, *self._no_rows[len(rows):]), dtype=np.int64)
        structured = np.zeros(1 + self._n_slots, dtype=np.int64)
        tool = int(np.searchsorted(self.offsets, index, side="right") - 1)
        offset = index - int(self.offsets[tool])
        structured[0] = tool
        for position in reversed(range(self.arities[tool])):
            offset, structured[1 + position] = divmod(offset, self.n_entities)
        return structured

    def index(self, structured: Any) -> int | None:
        """The flat action of a structured one (``[tool, row, ...]``), or None when the layout has
        no action for it (a call past a tool's capacity)."""
        tool = int(structured[0])
        number = self._number(tool, tuple(int(row) for row in structured[1 : 1 + self.arities[tool]]))
        return None if number is None else int(self.offsets[tool]) + number

    def action_masks(self) -> np.ndarray:
        """One bool per action: whether it is a valid call now (MaskablePPO's ``Discrete`` form).

        Computed once per state: until the next step or reset (or, stepped underneath this
        wrapper, until the episode or its number of calls changes) a copy of the same mask."""
        base = self.base
        return self._mask_of(base, base.episode).copy()

    def _mask_of(self, base: Any, episode: Episode | None) -> np.ndarray:
        """The joint mask of ``episode``'s current state (this wrapper's own array: copy it to hand it out).

        Admissible layout, one call after the last mask's state with no row added or offered and the same
        tools open: only the call just made can be out now, so the mask is updated in place."""
        cached, mask = self._mask_state, self._mask
        calls, rows = (-1 if episode is None else episode.calls), _rows_of(episode)
        if mask is not None and cached is not None and cached[0] is episode and cached[2] == rows:
            if cached[1] == calls:
                return mask
            if (cached[1] == calls - 1 and self._before_repeats_key is not None
                    and base.call_masks(repeats=False)[0].tobytes() == self._before_repeats_key[2]):
                if episode.mask_repeats and episode.last_call is not None:
                    self._leave_out(mask, *episode.last_call)
                self._mask_state = (episode, calls, rows)
                return mask
        self._mask = self._admissible_mask(base, episode) if self.layout == "admissible" else self._product_mask(base, episode)
        self._mask_state = (episode, calls, rows)
        return self._mask

    def _product_mask(self, base: Any, episode: Episode) -> np.ndarray:
        tools, argument = base.call_masks()
        mask = np.zeros(self.action_space.n, dtype=bool)
        for tool, arity in enumerate(self.arities):
            if not tools[tool]:
                continue
            start = int(self.offsets[tool])
            block = np.ones(1, dtype=bool)
            for position in range(arity):
                block = np.outer(block, argument[tool, position]).ravel()
            mask[start : start + len(block)] = block
            if episode.mask_repeats:
                for called in episode.made_rows[tool]:
                    number = self._number(tool, called)
                    if number is not None:
                        mask[start + number] = False
        return mask

    def _admissible_mask(self, base: Any, episode: Episode) -> np.ndarray:
        """The admissible layout's joint mask: every numbered call whose tool is open and whose
        rows fit, less (with ``mask_repeats``) the calls made; the part before made calls are left
        out is recomputed only when rows are offered or the callable tools change."""
        tools, argument = base.call_masks(repeats=False)
        numbering = self._numbering_of(episode)
        key = (episode, numbering.table.seen, tools.tobytes())
        if key != self._before_repeats_key:
            self._before_repeats = self._before_repeats_of(numbering, tools, argument, key[2])
            self._before_repeats_key = key
        mask = self._before_repeats.copy()
        if episode.mask_repeats:  # the numbered calls made, left out at once
            numbers, capacity = numbering.table.numbers, self.capacity
            made = [tool * capacity + number for tool, calls in enumerate(episode.made_rows)
                    for number in map(numbers[tool].get, calls) if number is not None]
            if made:
                mask[made] = False
        return mask

    def _before_repeats_of(self, numbering: _Numbering, tools: np.ndarray, argument: np.ndarray, open_tools: bytes) -> np.ndarray:
        """The joint mask before made calls are left out (read-only): every numbered call whose tool is open and
        whose rows fit. A shared numbering keeps it for a read-only argument mask (never changed)."""
        remember = numbering.shared and not argument.flags.writeable
        memo = numbering.masks.get((id(argument), open_tools)) if remember else None
        if memo is not None and memo[0] is argument:
            return memo[1]
        if argument.shape != self._argument_shape:
            raise ValueError(f"argument mask of shape {argument.shape}, expected {self._argument_shape}")
        numbered = np.flatnonzero(numbering.numbered)  # the other actions are out whatever the rows
        fits = argument.reshape(-1).take(numbering.cells[:, numbered])  # [slot, numbered action]
        fits |= self._unused[:, numbered]
        mask = np.zeros(self._n_actions, dtype=bool)
        mask[numbered] = np.logical_and.reduce(fits, axis=0) & tools[self._tool_of[numbered]]
        mask.flags.writeable = False
        if remember:
            if len(numbering.masks) >= MAX_MASKS:
                numbering.masks.clear()
            numbering.masks[(id(argument), open_tools)] = (argument, mask)
        return mask

    def _leave_out(self, mask: np.ndarray, tool: int, rows: tuple[int, ...]) -> None:
        number = self._numbering.table.numbers[tool].get(rows) if self._numbering is not None else None
        if number is not None:
            mask[tool * self.capacity + number] = False

    def call_table(self) -> CallTable:
        """The current episode's :class:`CallTable`, brought up to date with its entity rows (read-only: it
        may be shared with other episodes)."""
        return self._table_of(self.base.episode)

    def _table_of(self, episode: Episode | None) -> CallTable:
        return self._numbering_of(episode).table

    def _numbering_of(self, episode: Episode | None) -> _Numbering:
        """``episode``'s numbering, brought up to date with the rows it offers (one chunk of rows per call)."""
        if episode is None:
            raise RuntimeError("call reset() before step() or action_masks()")
        numbering = self._numbering
        if numbering is None or episode is not self._numbering_episode:
            numbering = self._root(episode)
            self._numbering_episode = episode
        flat = episode.flat_rows
        if (len(episode.entities.rows) if flat is None else len(flat.rows)) != numbering.table.seen:
            numbering = self._extended(numbering, *_offered(episode, numbering.table.seen))
        self._numbering = numbering
        return numbering

    def _root(self, episode: Episode) -> _Numbering:
        """The numbering of the rows ``episode`` offers first: shared, or a new one (shared while there is room)."""
        key, rows, kinds = _offered(episode, 0, first=True)
        tools = episode.tools
        root = self._roots.get(key)
        if root is not None and root.tools is tools:
            return root
        if any(other.tools is not tools for other in self._roots.values()):  # another tool set: start over
            self._roots.clear()
            self._shared = self._shared_bytes = 0
        admissible = self.layout == "admissible"
        table = CallTable([tuple(arg.entity for arg in tool.args) for tool in tools], self.capacity)
        blank = _Numbering(tools, table, self._row_0.copy() if admissible else None,
                           np.zeros(self.action_space.n, dtype=bool) if admissible else None)
        self._extend(blank, rows, kinds)
        if self._room_to_share():
            self._share(blank)
            self._roots[key] = blank
        return blank

    def _extended(self, numbering: _Numbering, chunk: Any, rows: Sequence[int], kinds: Sequence[str]) -> _Numbering:
        """``numbering`` after ``rows`` (of ``kinds``; ``chunk``: their key, :func:`_offered`) are offered: the
        shared one that follows it, else a new one (shared while fewer than ``MAX_SHARED`` are, holding at most
        ``MAX_SHARED_BYTES``), else
        ``numbering`` itself extended in place."""
        if not numbering.shared:
            self._extend(numbering, rows, kinds)
            return numbering
        child = numbering.children.get(chunk)
        if child is None:
            cells, numbered = numbering.cells, numbering.numbered
            child = _Numbering(numbering.tools, numbering.table.copy(), None if cells is None else cells.copy(),
                               None if numbered is None else numbered.copy())
            self._extend(child, rows, kinds)
            if self._room_to_share():
                self._share(child)
                numbering.children[chunk] = child
        return child

    def _room_to_share(self) -> bool:
        return self._shared < MAX_SHARED and self._shared_bytes < MAX_SHARED_BYTES

    def _share(self, numbering: _Numbering) -> None:
        numbering.shared = True
        for array in (numbering.cells, numbering.numbered):
            if array is not None:
                array.flags.writeable = False
                self._shared_bytes += array.nbytes
        self._shared += 1

    def _extend(self, numbering: _Numbering, rows: Sequence[int], kinds: Sequence[str]) -> None:
        """Number the calls offering ``rows`` (of ``kinds``) makes admissible, and write their cells (admissible
        layout)."""
        table = numbering.table
        before = [len(calls) for calls in table.calls]
        table.extend(rows, kinds)
        if numbering.cells is None or numbering.numbered is None:
            return
        for tool, calls in enumerate(table.calls):
            done = before[tool]
            if done == len(calls):
                continue
            arity, start = self.arities[tool], int(self.offsets[tool])
            if arity:
                new = slice(start + done, start + len(calls))
                numbering.cells[:arity, new] = self._row_0[:arity, new] + np.array(calls[done:], dtype=np.int64).T
            numbering.numbered[start + done : start + len(calls)] = True

    def _number(self, tool: int, rows: tuple[int, ...]) -> int | None:
        """The offset of a call in its tool's block, or None when the layout has no action for it."""
        if self.layout == "admissible":
            return self.call_table().numbers[tool].get(rows)
        return int(np.ravel_multi_index(rows, (self.n_entities,) * len(rows))) if rows else 0
