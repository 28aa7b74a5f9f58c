"""Keys and values of a batch of sequences of different lengths, kept across forward passes.

One row per live sequence; row ``r`` holds its ``lengths[r]`` tokens at positions ``0 ..
lengths[r] - 1`` of one tensor per layer ``[rows, heads, capacity, head_dim]`` (no padding
before a sequence; the space after it is free; a pass writes its tokens' keys and values
with one ``index_copy_`` over the flattened rows, heads and positions, and attends over a
view in which each head's keys are contiguous). A forward pass feeds some rows ``Q`` new
tokens each (fewer, right-padded, for some): :meth:`RaggedCache.step` says which rows, and
returns the position ids and the attention mask (query ``i`` of row ``r`` sees keys ``0 ..
lengths[r] + i``) to pass to the model with the cache; the attention layers then write the
new keys and values at their positions through :meth:`RaggedCache.update`. A padded query
writes past the row's length: harmless, as the next tokens fed there overwrite it. Rows
join (:meth:`add_rows`) and leave (:meth:`keep_rows`) between passes, in place: the tensors
hold ``slots`` rows, the live ones first, and are allocated again only when rows outgrow them
(twice the slots) or positions outgrow the capacity, so that a decode step captured in a CUDA
graph (:mod:`~.decode_graph`) stays valid while sequences come and go. A row that joins with
a context another row has fed can take that prefix's keys and values (:meth:`copy_prefix`)
instead of computing them again. Rows that took a prefix that way, one after another in the
cache, make a :class:`SharedRun` of a decode step (every row feeding one token): attention
then reads that prefix's keys and values once for the run instead of once per row
(:func:`~.decoder.cascade_attention`, "cascade" attention), a decode step's main cost on a CPU
when many rows share a long system prompt.

It takes the place of a ``transformers`` ``Cache`` (``model(..., past_key_values=cache)``)
for attention implementations that take a 4D mask (``sdpa``, ``eager``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

GROWTH = 256  # capacity grows in steps of this many positions
MIN_SHARED = 64  # a decode step reads a prefix once per run of rows when some run of two or more shares this many


@dataclass(frozen=True)
class SharedRun:
    """Rows ``start .. end - 1`` of a decode step: the first ``shared`` positions of each hold
    the same keys and values (row ``start``'s are read for all), the positions ``shared ..
    width - 1`` are each row's own, ``own_hidden[k, j]`` (``[rows, width - shared]``) whether
    row ``start + k`` does not see its own position ``shared + j``."""

    start: int
    end: int
    shared: int
    width: int
    own_hidden: torch.Tensor


class RaggedCache:
    """The KV cache of a batch of sequences of different lengths (see the module's docstring)."""

    def __init__(self, layers: int, device: torch.device, attention: str = "sdpa", cascade: bool = False) -> None:
        if attention not in ("sdpa", "eager"):
            raise ValueError(f"the rollout engine needs 'sdpa' or 'eager' attention (a 4D mask), not {attention!r}")
        self.device = device
        self.attention = attention
        self.cascade = cascade  # prepare shared_runs for decode steps (a forward that reads them: the engine decides)
        self.keys: list[torch.Tensor | None] = [None] * layers
        self.values: list[torch.Tensor | None] = [None] * layers
        self.lengths: list[int] = []  # tokens held per row
        self.prefixes: list[tuple[int, int] | None] = []  # per row: (prefix id, length) of a prefix it shares
        self._prefix_ids = 0
        self.shared_runs: list[SharedRun] | None = None  # the runs of the pass prepared (None: plain attention)
        self.packed: torch.Tensor | None = None  # the pass's real queries, flat (row * Q + query); None: no padding
        self.causal = False  # every row of the pass held nothing before it: the mask is the causal one
        self.capacity = 0
        self._rows: torch.Tensor | None = None  # the rows of the current pass (on the CPU)
        self._selected: torch.Tensor | None = None  # the same on the device, where it is not every row
        self._every_row = True  # the pass is over every row, in order
        self._positions: torch.Tensor | None = None  # [rows, Q] the positions the pass writes
        self._write: torch.Tensor | None = None  # [rows * heads * Q] flat (row, head, position) indices
        self._width = 0  # key positions the pass attends over

    @property
    def rows(self) -> int:
        return len(self.lengths)

    @property
    def slots(self) -> int:
        """Rows the tensors have room for (0 before the first pass)."""
        return 0 if self.keys[0] is None else self.keys[0].shape[0]

    def add_rows(self, count: int) -> None:
        """Append ``count`` empty rows."""
        self.lengths += [0] * count
        self.prefixes += [None] * count
        if self.slots and self.rows > self.slots:
            extra = max(self.rows, 2 * self.slots) - self.slots
            for store in (self.keys, self.values):
                for layer, tensor in enumerate(store):
                    store[layer] = torch.cat([tensor, tensor.new_zeros((extra, *tensor.shape[1:]))])

    def keep_rows(self, rows: Sequence[int]) -> None:
        """Keep only ``rows`` (in that order, moved to the first slots); the others leave. Only
        the rows that change slots are copied, over the positions they hold."""
        if list(rows) == list(range(self.rows)):
            return
        self.lengths = [self.lengths[r] for r in rows]
        self.prefixes = [self.prefixes[r] for r in rows]
        moved = [slot for slot, r in enumerate(rows) if slot != r]
        if not moved or not self.slots:
            return
        width = max(self.lengths[slot] for slot in moved)
        target = torch.tensor(moved, dtype=torch.long, device=self.device)
        source = torch.tensor([rows[slot] for slot in moved], dtype=torch.long, device=self.device)
        for store in (self.keys, self.values):
            for tensor in store:
                tensor[target, :, :width] = tensor[source, :, :width]

    def copy_prefix(self, source: int, target: int, length: int) -> None:
        """Give row ``target``, which holds nothing yet, the keys and values of row ``source``'s
        first ``length`` tokens (the caller knows the two contexts begin with the same tokens)."""
        if self.lengths[target] or not 0 < length <= self.lengths[source]:
            raise ValueError(f"cannot copy {length} positions of row {source} (holding {self.lengths[source]}) "
                             f"to row {target} (holding {self.lengths[target]})")
        for store in (self.keys, self.values):
            for tensor in store:
                if tensor is not None:
                    tensor[target, :, :length] = tensor[source, :, :length]
        self.lengths[target] = length
        shared = self.prefixes[source]
        if shared is not None and MIN_SHARED <= length < shared[1]:
            # the rows that share the source's prefix share this shorter one with the target too
            self.prefixes = [(shared[0], length) if prefix == shared else prefix for prefix in self.prefixes]
            shared = (shared[0], length)
        elif shared is None or length < shared[1]:  # a prefix of its own, the source's too unless it has one
            shared = (self._prefix_ids, length)
            self._prefix_ids += 1
            if self.prefixes[source] is None:
                self.prefixes[source] = shared
        self.prefixes[target] = shared

    def step(self, rows: Sequence[int] | None, fed: Sequence[int], width: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Prepare a pass over ``rows`` (None: every row, in order) feeding ``fed[k]`` real tokens
        to the k-th of them, right-padded to ``width`` queries; returns ``(position_ids,
        attention_mask)`` for the model and counts the fed tokens into ``lengths`` (the pass
        must follow)."""
        chosen = list(range(self.rows)) if rows is None else list(rows)
        starts = torch.tensor([self.lengths[r] for r in chosen], dtype=torch.long)
        positions = starts[:, None] + torch.arange(width)[None, :]  # [rows, Q]
        self._width = int(positions.max()) + 1
        self.reserve(self._width)
        keys = torch.arange(self._width)
        visible = keys[None, None, None, :] <= positions[:, None, :, None]  # [rows, 1, Q, keys]
        if self.attention == "eager":
            mask = torch.zeros(visible.shape).masked_fill(~visible, torch.finfo(torch.float32).min)
        else:
            mask = visible
        self._rows = torch.tensor(chosen, dtype=torch.long)
        self._every_row = rows is None
        self._selected = None if rows is None else self._rows.to(self.device)
        self._positions, self._write = positions, None
        self.causal = not any(self.lengths[r] for r in chosen)
        for r, count in zip(chosen, fed):
            self.lengths[r] += count
        self.packed = None if min(fed) == width else \
            (torch.arange(width)[None, :] < torch.tensor(fed)[:, None]).view(-1).nonzero().squeeze(1).to(self.device)
        self.shared_runs = self._shared_runs(visible[:, 0, 0]) if self.cascade and rows is None and width == 1 else None
        return positions.to(self.device), mask.to(self.device)

    def _shared_runs(self, visible: torch.Tensor) -> list[SharedRun] | None:
        """The runs of a decode step of every row (``visible``: ``[rows, keys]``): rows next to
        each other that share one prefix, each other row a run of its own with nothing shared;
        None where no run of two or more rows shares :data:`MIN_SHARED` positions."""
        runs, start = [], 0
        for end in range(1, self.rows + 1):
            if end < self.rows and self.prefixes[end] is not None and self.prefixes[end] == self.prefixes[start]:
                continue
            shared = self.prefixes[start][1] if self.prefixes[start] is not None and end - start > 1 else 0
            width = max(self.lengths[start:end])
            runs.append(SharedRun(start, end, shared, width, ~visible[start:end, shared:width].to(self.device)))
            start = end
        return runs if any(run.shared >= MIN_SHARED for run in runs) else None

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Write one layer's new keys and values ``[rows, heads, Q, head_dim]`` and return that
        layer's keys and values of the pass's rows over the pass's width, ``[rows, heads, width,
        head_dim]`` (views where the pass is over every row: the ``Cache`` call)."""
        heads, head_dim = key.shape[1], key.shape[3]
        if self._write is None or self._write.numel() != self._positions.numel() * heads:
            rows = self._rows[:, None, None] * heads + torch.arange(heads)[None, :, None]  # [rows, heads, 1]
            self._write = (rows * self.capacity + self._positions[:, None, :]).view(-1).to(self.device)
        out = []
        for store, new in ((self.keys, key), (self.values, value)):
            if store[layer_idx] is None:
                store[layer_idx] = new.new_zeros((self.rows, heads, self.capacity, head_dim))
            tensor = store[layer_idx]
            tensor.view(-1, head_dim).index_copy_(0, self._write, new.reshape(-1, head_dim).to(tensor.dtype))
            held = tensor[: self.rows, :, : self._width]
            out.append(held if self._every_row else held.index_select(0, self._selected))
        return out[0], out[1]

    def advance(self) -> list[int]:
        """Prepare a decode step in which every row feeds one token (:mod:`~.decode_graph`):
        make room for it, count it into ``lengths`` and return the position each row writes."""
        positions = list(self.lengths)
        self.reserve(max(positions) + 1)
        self.lengths = [length + 1 for length in positions]
        return positions

    def get_seq_length(self, *args: Any, **kwargs: Any) -> int:
        """The longest row (what ``transformers`` asks a cache; the engine passes positions itself)."""
        return max(self.lengths, default=0)

    def reserve(self, width: int) -> None:
        """Make room for ``width`` positions per row (the capacity grows in steps of :data:`GROWTH`)."""
        if width <= self.capacity:
            return
        capacity = -(-width // GROWTH) * GROWTH
        for store in (self.keys, self.values):
            for layer, tensor in enumerate(store):
                if tensor is not None:
                    grown = tensor.new_empty((*tensor.shape[:2], capacity, tensor.shape[3]))
                    grown[:, :, : self.capacity] = tensor
                    grown[:, :, self.capacity:] = 0
                    store[layer] = grown
        self.capacity = capacity
