"""The entities airline tool outputs reveal (see :mod:`..reveal`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..reveal import Rows, json_output, number, reveal_calculate


def _passenger(p: Mapping[str, Any]) -> dict[str, str]:
    return {"first_name": p["first_name"], "last_name": p["last_name"], "dob": p["dob"]}


def _segment(flight_number: str, date: str) -> Rows:
    return [
        ("flight", {"flight_number": flight_number, "date": date}),
        ("flight_number", flight_number),
        ("date", date),
    ]


def _airline_user(user: Mapping[str, Any]) -> Rows:
    rows: Rows = [("user_id", user["user_id"])]
    rows += [("reservation_id", rid) for rid in user.get("reservations", [])]
    for pid, method in user.get("payment_methods", {}).items():
        rows.append(("payment_method_id", pid))
        if isinstance(method.get("amount"), (int, float)):  # gift card / certificate balance
            rows.append(("amount", number(method["amount"])))
    name = user.get("name") or {}
    if name and user.get("dob"):
        rows.append(("passenger", _passenger({**name, "dob": user["dob"]})))
    rows += [("passenger", _passenger(p)) for p in user.get("saved_passengers", [])]
    return rows


def _airline_reservation(reservation: Mapping[str, Any]) -> Rows:
    rows: Rows = [("reservation_id", reservation["reservation_id"]), ("user_id", reservation["user_id"])]
    rows += [("airport", reservation["origin"]), ("airport", reservation["destination"])]
    for flight in reservation.get("flights", []):
        rows += _segment(flight["flight_number"], flight["date"])
    rows += [("passenger", _passenger(p)) for p in reservation.get("passengers", [])]
    rows += [("payment_method_id", p["payment_id"]) for p in reservation.get("payment_history", [])]
    return rows


def _found_flights(arguments: Mapping[str, Any], data: Any) -> Rows:
    rows: Rows = []
    for entry in data if isinstance(data, list) else []:
        legs = entry if isinstance(entry, list) else [entry]
        for leg in legs:
            rows += _segment(leg["flight_number"], leg.get("date") or arguments["date"])
            if not isinstance(entry, list):  # direct flights: their cabin prices
                rows += [("amount", price) for price in leg.get("prices", {}).values()]
    return rows


def reveal_airline(name: str, arguments: Mapping[str, Any], output: str) -> Rows:
    """Entities revealed by a successful airline call."""
    if name == "calculate":
        return reveal_calculate(arguments, output)
    if name in ("search_direct_flight", "search_onestop_flight"):
        return _found_flights(arguments, json_output(output))
    data = json_output(output)
    if not isinstance(data, dict):
        return []
    if name == "get_user_details":
        return _airline_user(data)
    if name == "get_reservation_details":
        return _airline_reservation(data)
    return []
