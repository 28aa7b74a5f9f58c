"""Equal-shaped arrays kept as their nonzero entries, handed back dense.

An expert dataset of features observations and joint masks is mostly zeros: a tau2 step is
14,550 floats and 9,728 mask flags, of which a few hundred are set. Stored dense, behaviour
cloning's 102,400 steps of it take 7 GB (and twice that while they are stacked); as nonzero
entries, megabytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SparseRows:
    """Rows of one shape and dtype, appended one by one; ``rows[index]`` (an int, a slice or an
    array of row numbers) gives them dense, ``np.asarray(rows)`` all of them. Every value comes back
    exactly as it was appended (a negative zero included)."""

    def __init__(self) -> None:
        self.shape: tuple[int, ...] | None = None
        self.dtype: np.dtype | None = None
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []  # appended since the last read: (columns, values)
        self._columns = np.zeros(0, dtype=np.int32)  # the flat column of every kept entry, row after row
        self._values = np.zeros(0)
        self._offsets = np.zeros(1, dtype=np.int64)  # row r's entries: [_offsets[r], _offsets[r + 1])

    def append(self, row: Any) -> None:
        row = np.asarray(row)
        if self.shape is None:
            self.shape, self.dtype = row.shape, row.dtype
            self._values = np.zeros(0, dtype=row.dtype)
        elif row.shape != self.shape or row.dtype != self.dtype:
            raise ValueError(f"a row of shape {row.shape} and dtype {row.dtype}, expected {self.shape} and {self.dtype}")
        flat = row.reshape(-1)
        kept = flat != 0
        if flat.dtype.kind == "f":
            kept |= np.signbit(flat)  # -0.0 == 0, but is kept as it was
        columns = np.flatnonzero(kept).astype(np.int32)
        self._pending.append((columns, flat[columns]))

    def __len__(self) -> int:
        return len(self._offsets) - 1 + len(self._pending)

    def __getitem__(self, index: Any) -> np.ndarray:
        self._pack()
        rows = np.arange(len(self))[index]
        single = np.ndim(rows) == 0
        rows = np.atleast_1d(rows)
        starts, counts = self._offsets[rows], np.diff(self._offsets)[rows]
        owner = np.repeat(np.arange(len(rows)), counts)
        entries = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(starts, counts)
        width = int(np.prod(self.shape)) if self.shape is not None else 0
        dense = np.zeros((len(rows), width), dtype=self.dtype)
        dense[owner, self._columns[entries]] = self._values[entries]
        dense = dense.reshape(len(rows), *(self.shape or ()))
        return dense[0] if single else dense

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self[:]
        return dense if dtype is None else dense.astype(dtype)

    def _pack(self) -> None:
        """Move the rows appended since the last read into the flat arrays."""
        if not self._pending:
            return
        columns, values = zip(*self._pending)
        self._columns = np.concatenate([self._columns, *columns])
        self._values = np.concatenate([self._values, *values])
        self._offsets = np.concatenate([self._offsets, self._offsets[-1] + np.cumsum([len(c) for c in columns])])
        self._pending = []
