"""Records with the same schema in both domains."""

from __future__ import annotations

from dataclasses import dataclass

from .records import Record


@dataclass
class Name(Record):
    first_name: str
    last_name: str
