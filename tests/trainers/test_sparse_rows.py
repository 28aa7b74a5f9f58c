"""SparseRows: the expert dataset's rows kept as nonzero entries come back exactly as appended."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.sparse_rows import SparseRows


def filled(rows: list[np.ndarray]) -> SparseRows:
    store = SparseRows()
    for row in rows:
        store.append(row)
    return store


def test_rows_come_back_dense_and_bit_for_bit_by_int_slice_and_array():
    rng = np.random.default_rng(0)
    rows = [np.where(rng.random((3, 5)) < 0.3, rng.normal(size=(3, 5)), 0.0).astype(np.float32) for _ in range(7)]
    rows[2][0, 0] = -0.0
    store = filled(rows)
    assert len(store) == 7
    assert np.array_equal(store[2], rows[2]) and np.signbit(store[2][0, 0])
    assert store[[4, 0, 4]].tobytes() == np.stack([rows[4], rows[0], rows[4]]).tobytes()
    assert store[1:3].tobytes() == np.stack(rows[1:3]).tobytes()
    assert np.asarray(store).tobytes() == np.stack(rows).tobytes() and store[0].dtype == np.float32


def test_masks_and_ids_keep_their_dtype_and_rows_appended_after_a_read_are_found():
    store = filled([np.array([True, False, True]), np.zeros(3, dtype=bool)])
    assert store[0].tolist() == [True, False, True] and store[1].dtype == bool
    store.append(np.array([False, True, False]))
    assert np.asarray(store).tolist() == [[True, False, True], [False, False, False], [False, True, False]]
    ids = filled([np.array([5, 0, 0, 9], dtype=np.int64)])
    assert ids[0].tolist() == [5, 0, 0, 9] and ids[0].dtype == np.int64


def test_a_row_of_another_shape_or_dtype_is_refused():
    store = filled([np.zeros(4, dtype=np.float32)])
    with pytest.raises(ValueError, match="expected"):
        store.append(np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        store.append(np.zeros(4, dtype=np.float64))
