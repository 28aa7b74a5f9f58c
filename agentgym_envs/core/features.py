"""The features observation: a fixed-size float vector of an episode's state that SB3's stock
``MlpPolicy`` trains on without a custom extractor (``ToolUseEnv(observation="features")``).

Kept up to date step by step: a step adds its call, the rows it revealed and its result, so its
cost does not grow with the episode; texts are hashed once (cached).
"""

from __future__ import annotations

import math
import zlib
from array import array
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

from .entities import Entity, EntityTable
from .episode import CallReport, Episode
from .scenario import Scenario

# the bytes of a word ([a-z0-9]), others made a space: ``translate`` then ``split`` finds the words ([a-z0-9]+)
NOT_WORD_TO_SPACE = bytes(byte if byte in b"abcdefghijklmnopqrstuvwxyz0123456789" else 0x20 for byte in range(256))


def _words(text: str) -> list[bytes]:
    """The words ([a-z0-9]+) of ``text`` lower-cased, as UTF-8 bytes: the same ASCII runs as in the text."""
    return text.lower().encode().translate(NOT_WORD_TO_SPACE).split()


def _bag(text: str, dim: int) -> tuple[tuple[int, float], ...]:
    """The nonzero entries of ``text``'s bag of words hashed into ``dim`` buckets, at unit length, as
    ``(bucket, value)`` pairs: each bucket's count over the norm (float64, a float32's division once
    rounded to float32)."""
    words = _words(text)
    if len(words) < 2:  # no word, or one: its bucket at 1 (1 over a norm of 1)
        return tuple((zlib.crc32(word) % dim, 1.0) for word in words)
    counts: dict[int, int] = {}
    for word in words:
        bucket = zlib.crc32(word) % dim
        counts[bucket] = counts.get(bucket, 0) + 1
    # the norm as float32 computes it: the square root in float64 rounded once to float32 is float32's own
    norm = array("f", [math.sqrt(sum(count * count for count in counts.values()))])[0]
    return tuple(zip(counts, array("f", [count / norm for count in counts.values()])))


@lru_cache(maxsize=65_536)
def hashed_words(text: str, dim: int) -> np.ndarray:
    """The counts of ``text``'s lower-cased words hashed into ``dim`` buckets (CRC-32: the same
    buckets in every process), scaled to unit length (zeros for a text without words)."""
    out = np.zeros(dim, dtype=np.float32)
    for bucket, value in _bag(text, dim):  # a few entries: set one by one
        out[bucket] = value
    out.flags.writeable = False
    return out


@lru_cache(maxsize=65_536)
def bag_entries(text: str, dim: int) -> tuple[tuple[int, float], ...]:
    """The nonzero entries of :func:`hashed_words` (``text``, ``dim``) as ``(bucket, value)`` pairs, each value
    a float32's: what the rows and result blocks write entry by entry."""
    return _bag(text, dim)


class FeatureEncoder:
    """Episode -> ``Box(float32, (size,))``, the concatenation of (in this order):

    - ``task``: the task's request (:meth:`~.scenario.Scenario.request_text` of the prompt) as a
      hashed bag of words (``task_dim``);
    - ``calls``: valid calls per tool so far, over ``max_turns`` (``n_tools``);
    - ``used``: per tool and entity row, 1 when the last valid call was of that tool and named
      the row, 0.5 when only an earlier one did (``n_tools * max_entities``): the ``result``
      below belongs to the rows at 1;
    - ``turn``: calls so far over ``max_turns``; ``last``: whether the last call was valid,
      and correct (2);
    - ``rows``: per entity row, filled, its kind one-hot (the kinds tools take, then "other")
      and a hashed bag of its text (``max_entities * (2 + n_kinds + row_dim)``), so rows of the
      same kind can be told apart;
    - ``result``: the last tool result (or error) as a hashed bag (``result_dim``);
    - ``verdicts``, only for a scenario that :attr:`~.scenario.Scenario.gives_verdicts`: per
      entity row, the last verdict a result gave on it (:meth:`~.scenario.Scenario.verdict`),
      one-hot good / bad, zeros for none (``max_entities * 2``): what the episode learnt about
      each row stays in view after the next call (coding: which programs passed the examples);
    - ``hint``, only for a scenario that :attr:`~.scenario.Scenario.gives_hints`: the level's
      hint (:meth:`~.scenario.Scenario.hint`: CustomerSupport's ``Category:`` line) as a hashed
      bag of its own (``hint_dim``; zeros at a level without one), so that its words are not
      lost among the task's others: the task bag read the ticket kind from the ``Category:``
      line of train tickets, but not always through the unseen wording of test tickets.

    ``slices`` names each part's position. Every entry lies in [0, 1] and the vector stays
    short (the bags have unit length, the rows block is scaled by ``1 / sqrt(max_entities)``):
    SB3's ``MlpPolicy`` starts with tanh units that a long input saturates, and a saturated
    actor cannot learn which part of the input tells tasks apart (measured: the actor's action
    probabilities were the same to 4 decimals on tickets of different kinds).
    """

    def __init__(self, scenario: Scenario, max_turns: int, task_dim: int = 128, row_dim: int = 16, result_dim: int = 64,
                 hint_dim: int = 16) -> None:
        self.max_turns, self.task_dim, self.row_dim, self.result_dim = max_turns, task_dim, row_dim, result_dim
        self.scenario = scenario
        self.n_tools, self.max_entities = len(scenario.tools), scenario.max_entities
        self.kinds = sorted({arg.entity for tool in scenario.tools for arg in tool.args})
        self._kind_index = {kind: i for i, kind in enumerate(self.kinds)}
        self.row_width = 1 + len(self.kinds) + 1 + row_dim
        sizes = {
            "task": task_dim,
            "calls": self.n_tools,
            "used": self.n_tools * self.max_entities,
            "turn": 1,
            "last": 2,
            "rows": self.max_entities * self.row_width,
            "result": result_dim,
            "verdicts": self.max_entities * 2 if scenario.gives_verdicts else 0,
            "hint": hint_dim if scenario.gives_hints else 0,
        }
        ends = np.cumsum(list(sizes.values()))
        self.slices = {name: slice(int(end - size), int(end)) for (name, size), end in zip(sizes.items(), ends)}
        self._chars = (scenario.max_prompt_chars, scenario.max_result_chars, scenario.max_entity_chars)
        self.space = spaces.Box(0.0, 1.0, shape=(int(ends[-1]),), dtype=np.float32)
        self._row_scale = float(1.0 / np.sqrt(self.max_entities))
        # where step writes: the calls, used, turn and last entries, and the result's bag
        self._calls, self._used = self.slices["calls"].start, self.slices["used"].start
        self._turn, self._last, self._result = self.slices["turn"].start, self.slices["last"].start, self.slices["result"]
        self._vector = np.zeros(self.space.shape, dtype=np.float32)
        self._rows = 0  # entity rows already written
        self._last_used: list[int] = []  # the vector's ``used`` entries of the last call, at 1
        self._result_entries: list[int] = []  # the vector's nonzero ``result`` entries
        self._blank: tuple[EntityTable, np.ndarray] | None = None  # a static table and a vector holding only its rows

    def reset(self, episode: Episode) -> np.ndarray:
        """The features of a fresh episode."""
        self._vector = self._blank_of(episode.static_entities).copy()  # every episode starts with these rows
        self._vector[self.slices["task"]] = hashed_words(self.scenario.request_text(episode.prompt), self.task_dim)
        if self.scenario.gives_hints:
            hint = self.slices["hint"]
            self._vector[hint] = hashed_words(self.scenario.hint(episode.task), hint.stop - hint.start)
        self._rows = len(episode.static_entities)
        self._last_used, self._result_entries = [], []
        self._write_rows(episode)
        return self._vector.copy()

    def step(self, episode: Episode, report: CallReport) -> np.ndarray:
        """The features after one call (the episode's :attr:`~Episode.last_call`)."""
        v = self._vector
        if episode.last_call is not None:
            tool, rows = episode.last_call
            v[self._calls + tool] += 1.0 / self.max_turns
            # the ``used`` entries: the last call's rows at 1, earlier calls' at 0.5
            start = self._used + tool * self.max_entities
            for entry in self._last_used:
                v[entry] = 0.5
            self._last_used = [start + row for row in rows]
            for entry in self._last_used:
                v[entry] = 1.0
            if report.verdict is not None and rows:
                verdicts = v[self.slices["verdicts"]].reshape(self.max_entities, 2)
                verdicts[list(rows)] = (1.0, 0.0) if report.verdict else (0.0, 1.0)
        v[self._turn] = episode.calls / self.max_turns
        v[self._last], v[self._last + 1] = report.valid, report.correct
        for entry in self._result_entries:  # the last result's bag, zeroed entry by entry
            v[entry] = 0.0
        start = self._result.start
        self._result_entries = []
        for bucket, value in bag_entries(report.result[: self._chars[1]], self.result_dim):
            v[start + bucket] = value
            self._result_entries.append(start + bucket)
        self._write_rows(episode)
        return v.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restored from a pickle; one pickled before the encoder kept its result's entries (a checkpoint
        of an earlier version) reads them off its vector, so that the next step clears them."""
        self.__dict__.update(state)
        if "_result_entries" not in state:
            start = self._result.start
            self._result_entries = [start + int(entry) for entry in np.flatnonzero(self._vector[self._result])]

    def _write_rows(self, episode: Episode) -> None:
        rows = episode.entities.rows
        if len(rows) == self._rows:  # no row was added
            return
        self._fill_rows(self._vector, self._rows, rows[self._rows :])
        self._rows = len(rows)

    def _blank_of(self, table: EntityTable) -> np.ndarray:
        """A vector of zeros but a static table's rows (computed once per table; read-only)."""
        if self._blank is None or self._blank[0] is not table:
            blank = np.zeros(self.space.shape, dtype=np.float32)
            self._fill_rows(blank, 0, table.rows)
            blank.flags.writeable = False
            self._blank = (table, blank)
        return self._blank[1]

    def _fill_rows(self, vector: np.ndarray, first: int, rows: Sequence[Entity]) -> None:
        """Write ``rows`` into ``vector``'s rows part from row ``first`` on (zeros until then), scaled by
        ``1 / sqrt(max_entities)``: filled (a row's entry 0), the kind one-hot, then the text's hashed bag
        (the last ``row_dim`` entries)."""
        other, limit, scale, width = len(self.kinds), self._chars[2], self._row_scale, self.row_width
        line = self.slices["rows"].start + first * width
        bag = width - self.row_dim
        for row in rows:
            vector[line] = vector[line + 1 + self._kind_index.get(row.kind, other)] = scale
            for bucket, value in bag_entries(row.text[:limit], self.row_dim):
                vector[line + bag + bucket] = scale * value
            line += width
