"""Which airline entity rows the flat admissible layout holds back until the episode names them
(:class:`~agentgym_envs.core.flat_rows.FlatRows`): the airports, the dates and the counts
above 0 every episode starts with (20 x 20 x 30 searches, 21 x 21 bag counts: far more calls
than a tool's block holds), and the empty flight, passenger and payment lists (a booking that
names them fills the block before the lists the booking takes are drafted). The airports and
dates a text names, and its counts where the customer speaks (the request, the replies: tool
outputs list seat counts), are offered as they are named."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .lists import BUILDERS

HELD_KINDS = frozenset({"airport", "date"})
LIST_KINDS = frozenset(builder.kind for builder in BUILDERS)
_AIRPORT = re.compile(r"\b[A-Z]{3}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_COUNT = re.compile(r"(?<![\w.:/-])\d{1,2}(?![\w.:/-])")  # a small integer on its own: not part of a date, time or id
_SPOKEN = (None, "respond")  # the request and the customer's replies


def held(kind: str, value: Any) -> bool:
    """Whether the layout holds back an initial row of ``kind`` and ``value`` until it is named."""
    return kind in HELD_KINDS or (kind == "count" and value != 0) or (kind in LIST_KINDS and value == [])


def names(text: str, tool: str | None) -> Iterator[tuple[str, Any]]:
    """The airports and dates ``text`` names and, in the request or a reply (``tool`` None or
    ``respond``), its counts."""
    yield from (("airport", code) for code in _AIRPORT.findall(text))
    yield from (("date", date) for date in _DATE.findall(text))
    if tool in _SPOKEN:
        yield from (("count", int(number)) for number in _COUNT.findall(text))
