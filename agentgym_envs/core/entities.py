"""The numbered entity table: the values a structured action can put into tool arguments."""

from __future__ import annotations

from typing import Any, NamedTuple

from .text import sanitize


class Entity(NamedTuple):
    """One row of the entity table: its kind (e.g. ``user_id``), value and display text."""

    kind: str
    value: Any
    text: str


def entity_text(value: Any) -> str:
    """How an entity value is displayed (and tokenized)."""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = value if isinstance(value, str) else str(value)
    return text if text.isascii() and text.isprintable() else sanitize(text)


class EntityTable:
    """An append-only table of at most ``capacity`` distinct entities.

    Rows never move, so a slot index keeps its meaning for the whole episode. Adding an
    entity that is already present, or adding beyond capacity, changes nothing (``add``
    returns the row index or None).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.rows: list[Entity] = []
        self.row_texts: list[str] = []  # "[i] kind: text", as the observation shows row i
        self._index: dict[tuple[str, str], int] = {}
        self.dropped = 0

    def add(self, kind: str, value: Any) -> int | None:
        text = entity_text(value)
        key = (kind, text)
        if key in self._index:
            return self._index[key]
        if len(self.rows) >= self.capacity:
            self.dropped += 1
            return None
        index = self._index[key] = len(self.rows)
        self.rows.append(Entity(kind, value, text))
        self.row_texts.append(f"[{index}] {kind}: {text}")
        return index

    def copy(self) -> EntityTable:
        """An independent table with the same rows."""
        table = EntityTable(self.capacity)
        table.rows, table.row_texts, table._index = list(self.rows), list(self.row_texts), dict(self._index)
        table.dropped = self.dropped
        return table

    def find(self, kind: str, value: Any) -> int | None:
        """Row index of an entity, or None."""
        return self._index.get((kind, entity_text(value)))

    def __len__(self) -> int:
        return len(self.rows)
