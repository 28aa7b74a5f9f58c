"""The airline list builders: flight segments, passengers and payments."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core.tools import Arg

from ..episode_tools import ListBuilder


def _flight(flight: dict[str, Any]) -> dict[str, Any]:
    return {"flight_number": flight.get("flight_number"), "date": flight.get("date")}


def _passenger(passenger: dict[str, Any]) -> dict[str, Any]:
    return {k: passenger.get(k) for k in ("first_name", "last_name", "dob")}


def _payment(payment_method_id: str, amount: float) -> dict[str, Any]:
    return {"payment_id": payment_method_id, "amount": int(amount) if float(amount).is_integer() else amount}


FLIGHT_LIST = ListBuilder(
    "flight", "flights",
    (Arg("flight", "object", "flight", "A flight segment {flight_number, date}."),), _flight,
)
PASSENGER_LIST = ListBuilder(
    "passenger", "passengers",
    (Arg("passenger", "object", "passenger", "A passenger {first_name, last_name, dob}."),), _passenger,
)
PAYMENT_LIST = ListBuilder(
    "payment", "payments",
    (
        Arg("payment_method_id", "string", "payment_method_id", "A payment method id of the user's profile."),
        Arg("amount", "number", "amount", "The amount to pay with it."),
    ),
    _payment,
    lambda payment: {"payment_method_id": payment["payment_id"], "amount": payment["amount"]},
)
BUILDERS = (FLIGHT_LIST, PASSENGER_LIST, PAYMENT_LIST)
