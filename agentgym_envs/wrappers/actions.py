"""A flat ``Discrete`` action space over the structured tool calls, with one joint mask (the
action space SB3's MaskablePPO and DQN get)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice, product
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentgym_envs.core.arguments import check_int
from agentgym_envs.core.episode import Episode

LAYOUTS = ("product", "admissible")
MAX_PRODUCT_ACTIONS = 1 << 20  # beyond this the product layout is refused: use "admissible"


class CallTable:
    """One episode's admissible calls, numbered per tool in the order they became admissible.

    A call is a tool and one entity row of the right kind per argument. Rows never move, so a
    call keeps its number for the whole episode; when rows are added, the new calls (those
    naming a new row) take the next free numbers of their tool, in row order, until the tool's
    ``capacity`` is used up (later calls of that tool are not numbered).
    """

    def __init__(self, kinds: Sequence[tuple[str, ...]], capacity: int) -> None:
        self.kinds, self.capacity = kinds, capacity
        self.calls: list[list[tuple[int, ...]]] = [[] for _ in kinds]
        self.numbers: list[dict[tuple[int, ...], int]] = [{} for _ in kinds]
        self._rows_by_kind: dict[str, list[int]] = {}
        self._seen = 0  # entity rows already taken into account

    @property
    def seen(self) -> int:
        """How many entity rows the numbering has taken into account."""
        return self._seen

    def extend(self, row_kinds: Sequence[str]) -> None:
        """Number the calls that the rows from ``self._seen`` on make admissible."""
        seen = self._seen
        if seen == len(row_kinds):
            return
        for row in range(seen, len(row_kinds)):
            self._rows_by_kind.setdefault(row_kinds[row], []).append(row)
        for tool, kinds in enumerate(self.kinds):
            calls, numbers = self.calls[tool], self.numbers[tool]
            room = self.capacity - len(calls)
            if room <= 0:
                continue
            pools = [self._rows_by_kind.get(kind, []) for kind in kinds]
            fresh = (rows for rows in product(*pools) if seen == 0 or max(rows, default=-1) >= seen)
            for rows in islice(fresh, room):
                numbers[rows] = len(calls)
                calls.append(rows)
        self._seen = len(row_kinds)


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
      (Tau2Airline's ``book_reservation``: thousands of combinations) keeps the first
      ``capacity`` of them, so some calls are then not expressible; ``docs/contract.md``
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
        if layout == "product":
            sizes = [self.n_entities**arity for arity in self.arities]
            if sum(sizes) > MAX_PRODUCT_ACTIONS:
                raise ValueError(f"the product layout would have {sum(sizes):,} actions; use layout='admissible'")
        else:
            sizes = [capacity] * len(self.arities)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.action_space = spaces.Discrete(int(self.offsets[-1]))
        self._table: CallTable | None = None
        self._table_episode: Episode | None = None
        if layout == "admissible":  # per flat action: its tool, and the rows of the call numbered there (_number_calls)
            self._tool_of = np.repeat(np.arange(len(self.arities)), capacity)
            slots = np.arange(self._n_slots)[:, None]
            self._unused = slots >= np.array(self.arities, dtype=np.int64)[self._tool_of]  # [slot, action]: past the arity
            # [slot, action]: where in a flat [tool, slot, row] argument mask the row the action names in that slot
            # is (row 0 until a call is numbered there), so that one take reads every action's rows at once
            self._argument_shape = (len(self.arities), self._n_slots, self.n_entities)
            self._row_0 = (self._tool_of * self._n_slots + slots) * self.n_entities
            self._cells = self._row_0.copy()
            self._numbered = np.zeros(self.action_space.n, dtype=bool)
            self._written: list[int] = [0] * len(self.arities)  # calls of each tool already in _cells
            self._written_for: CallTable | None = None
        # the joint mask of the state (episode, its number of calls) it was computed in
        self._mask: np.ndarray | None = None
        self._mask_state: tuple[Episode | None, int] | None = None

    @property
    def base(self) -> Any:
        """The tool-use env under the wrappers (read each time: a curriculum changes it)."""
        return self.env.unwrapped

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._mask_state = None
        observation, info = self.env.reset(**kwargs)
        return observation, self._with_mask(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        structured = self.action(action)
        self._mask_state = None
        observation, reward, terminated, truncated, info = self.env.step(structured)
        return observation, reward, terminated, truncated, self._with_mask(info)

    def _with_mask(self, info: dict[str, Any]) -> dict[str, Any]:
        info = {k: v for k, v in info.items() if k not in ("action_mask", "argument_mask")}
        episode = self.base.episode
        if episode is not None and not episode.ended:
            info["action_mask"] = self.action_masks()
        else:  # the episode is over: nothing is callable (a vector env resets it before the next decision)
            info["action_mask"] = np.ones(self.action_space.n, dtype=bool)
        return info

    def action(self, action: Any) -> np.ndarray:
        index = int(action)
        if not 0 <= index < self.action_space.n:
            raise ValueError(f"action {action!r} is outside the action space {self.action_space}")
        tool = int(np.searchsorted(self.offsets, index, side="right") - 1)
        offset = index - int(self.offsets[tool])
        structured = np.zeros(1 + self._n_slots, dtype=np.int64)
        structured[0] = tool
        if self.layout == "admissible":
            calls = self.call_table().calls[tool]
            if offset < len(calls):
                structured[1 : 1 + self.arities[tool]] = calls[offset]
            return structured
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
        episode = self.base.episode
        state = (episode, -1 if episode is None else episode.calls)
        cached = self._mask_state
        if self._mask is None or cached is None or cached[0] is not state[0] or cached[1] != state[1]:
            self._mask = self._joint_mask(episode)
            self._mask_state = state
        return self._mask.copy()

    def _joint_mask(self, episode: Episode) -> np.ndarray:
        tools, argument = self.base.call_masks()
        if self.layout == "admissible":
            table = self.call_table()
            self._number_calls(table)
            if argument.shape != self._argument_shape:
                raise ValueError(f"argument mask of shape {argument.shape}, expected {self._argument_shape}")
            # a numbered call is valid when its tool is open and every argument's row fits
            fits = argument.reshape(-1).take(self._cells)  # [slot, action]
            fits |= self._unused
            mask = np.logical_and.reduce(fits, axis=0) & tools[self._tool_of] & self._numbered
            if episode.mask_repeats:
                for tool, made in enumerate(episode.made_rows):
                    numbers, start = table.numbers[tool], int(self.offsets[tool])
                    for called in made:
                        number = numbers.get(called)
                        if number is not None:
                            mask[start + number] = False
            return mask
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

    def _number_calls(self, table: CallTable) -> None:
        """Write the calls ``table`` numbered since the last time into ``_cells`` and ``_numbered``
        (the flat action of each call: the argument-mask cell of its row per argument slot, row 0
        past its arity)."""
        if self._written_for is not table:
            self._cells[:] = self._row_0
            self._numbered[:] = False
            self._written = [0] * len(self.arities)
            self._written_for = table
        for tool, calls in enumerate(table.calls):
            done = self._written[tool]
            if done == len(calls):
                continue
            arity, start = self.arities[tool], int(self.offsets[tool])
            if arity:
                new = slice(start + done, start + len(calls))
                self._cells[:arity, new] = self._row_0[:arity, new] + np.array(calls[done:], dtype=np.int64).T
            self._numbered[start + done : start + len(calls)] = True
            self._written[tool] = len(calls)

    def call_table(self) -> CallTable:
        """The current episode's :class:`CallTable`, brought up to date with its entity rows."""
        episode = self.base.episode
        assert episode is not None, "reset the environment first"
        if self._table is None or episode is not self._table_episode:
            self._table = CallTable([tuple(arg.entity for arg in tool.args) for tool in episode.tools], self.capacity)
            self._table_episode = episode
        rows = episode.entities.rows
        if len(rows) != self._table.seen:
            self._table.extend([row.kind for row in rows])
        return self._table

    def _number(self, tool: int, rows: tuple[int, ...]) -> int | None:
        """The offset of a call in its tool's block, or None when the layout has no action for it."""
        if self.layout == "admissible":
            return self.call_table().numbers[tool].get(rows)
        return int(np.ravel_multi_index(rows, (self.n_entities,) * len(rows))) if rows else 0
