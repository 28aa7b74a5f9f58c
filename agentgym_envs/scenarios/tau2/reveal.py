"""Which entities a tau2 tool's output reveals to the structured action mode: what both
domains share (the per-domain readers are ``retail/reveal.py`` and ``airline/reveal.py``).

Each domain tool returns upstream's output string; the readers read it back (JSON)
and list the ``(kind, value)`` rows worth adding to the entity table: ids, payment
methods (and the balances of gift cards and certificates), available variants, flight segments ``{flight_number, date}``, passengers
``{first_name, last_name, dob}`` and the cabin prices of found flights (``amount``).
Unavailable variants are not revealed (they would fill the table without being usable as
arguments).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

Rows = list[tuple[str, Any]]


def json_output(output: str) -> Any:
    """A tool's output read back as JSON (None if it is not JSON)."""
    try:
        return json.loads(output)
    except (json.JSONDecodeError, TypeError):
        return None


def number(value: float) -> int | float:
    """An amount as the entity table holds it: an int when whole, else rounded to cents."""
    return int(value) if float(value).is_integer() else round(float(value), 2)


def reveal_calculate(arguments: Mapping[str, Any], output: str) -> Rows:
    """The result of ``calculate`` as an ``amount`` and as a message stating it."""
    try:
        value = float(output)
    except ValueError:
        return []
    return [("amount", number(value)), ("message", f"The amount is {output}.")]
