"""The entities telecom tool outputs reveal (see :mod:`..reveal`): the ids in customers,
lines and bills."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..reveal import Rows, json_output


def _record(data: Mapping[str, Any]) -> Rows:
    rows: Rows = []
    for key in ("customer_id", "line_id", "bill_id", "plan_id", "device_id", "phone_number"):
        if isinstance(data.get(key), str):
            rows.append((key, data[key]))
    rows += [("line_id", line) for line in data.get("line_ids") or () if isinstance(line, str)]
    rows += [("bill_id", bill) for bill in data.get("bill_ids") or () if isinstance(bill, str)]
    if isinstance(data.get("line"), Mapping):
        rows += _record(data["line"])
    return rows


def reveal_telecom(name: str, arguments: Mapping[str, Any], output: str) -> Rows:
    """Entities revealed by a successful telecom call (an agent or phone tool)."""
    data = json_output(output)
    records = data if isinstance(data, list) else [data]
    return [row for record in records if isinstance(record, Mapping) for row in _record(record)]
