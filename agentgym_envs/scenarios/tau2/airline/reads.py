"""The reads the airline expert makes first: they reveal the entities its calls need."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolCall

from ..expert import argument_values
from ..user import UserFacts


def airline_reads(actions: list[Any], db: Any, facts: UserFacts) -> list[ToolCall]:
    """Read the user and the reservations the reference calls touch, and search the direct
    flights of every new flight segment they name."""
    reservations = [r for r in argument_values(actions, "reservation_id") if r in db.reservations]
    users = argument_values(actions, "user_id") + [db.reservations[r].user_id for r in reservations]
    reads = [ToolCall("get_user_details", {"user_id": u}) for u in dict.fromkeys(users)]
    reads += [ToolCall("get_reservation_details", {"reservation_id": r}) for r in reservations]
    known = {(f.flight_number, f.date) for r in reservations for f in db.reservations[r].flights}
    searches: dict[str, ToolCall] = {}
    for action in actions:
        for segment in action.arguments.get("flights") or ():
            if not isinstance(segment, dict) or (segment.get("flight_number"), segment.get("date")) in known:
                continue
            flight = db.flights.get(segment.get("flight_number"))
            if flight is not None and isinstance(segment.get("date"), str):
                call = ToolCall("search_direct_flight", {"origin": flight.origin, "destination": flight.destination, "date": segment["date"]})
                searches.setdefault(call.key, call)
    return reads + list(searches.values())
