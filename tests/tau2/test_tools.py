"""Tool schemas, kinds and the behaviour (outputs, errors, effects) the gold tasks do not
exercise, checked against upstream's semantics."""

from __future__ import annotations

import copy
import inspect
import json

import pytest

from agentgym_envs.core.tools import ToolError
from agentgym_envs.scenarios.tau2 import AIRLINE, RETAIL, dict_hash, run_tool

S, INT, A = "string", "integer", "array"
UPSTREAM_SIGNATURES = {
    "retail": {
        "calculate": [("expression", S)],
        "cancel_pending_order": [("order_id", S), ("reason", S)],
        "exchange_delivered_order_items": [
            ("order_id", S),
            ("item_ids", A),
            ("new_item_ids", A),
            ("payment_method_id", S),
        ],
        "find_user_id_by_name_zip": [("first_name", S), ("last_name", S), ("zip", S)],
        "find_user_id_by_email": [("email", S)],
        "get_order_details": [("order_id", S)],
        "get_product_details": [("product_id", S)],
        "get_item_details": [("item_id", S)],
        "get_user_details": [("user_id", S)],
        "list_all_product_types": [],
        "modify_pending_order_address": [("order_id", S)]
        + [(f, S) for f in ("address1", "address2", "city", "state", "country", "zip")],
        "modify_pending_order_items": [
            ("order_id", S),
            ("item_ids", A),
            ("new_item_ids", A),
            ("payment_method_id", S),
        ],
        "modify_pending_order_payment": [("order_id", S), ("payment_method_id", S)],
        "modify_user_address": [("user_id", S)]
        + [(f, S) for f in ("address1", "address2", "city", "state", "country", "zip")],
        "return_delivered_order_items": [("order_id", S), ("item_ids", A), ("payment_method_id", S)],
        "transfer_to_human_agents": [("summary", S)],
    },
    "airline": {
        "book_reservation": [
            ("user_id", S),
            ("origin", S),
            ("destination", S),
            ("flight_type", S),
            ("cabin", S),
            ("flights", A),
            ("passengers", A),
            ("payment_methods", A),
            ("total_baggages", INT),
            ("nonfree_baggages", INT),
            ("insurance", S),
        ],
        "calculate": [("expression", S)],
        "cancel_reservation": [("reservation_id", S)],
        "get_reservation_details": [("reservation_id", S)],
        "get_user_details": [("user_id", S)],
        "list_all_airports": [],
        "search_direct_flight": [("origin", S), ("destination", S), ("date", S)],
        "search_onestop_flight": [("origin", S), ("destination", S), ("date", S)],
        "send_certificate": [("user_id", S), ("amount", INT)],
        "transfer_to_human_agents": [("summary", S)],
        "update_reservation_baggages": [
            ("reservation_id", S),
            ("total_baggages", INT),
            ("nonfree_baggages", INT),
            ("payment_id", S),
        ],
        "update_reservation_flights": [
            ("reservation_id", S),
            ("cabin", S),
            ("flights", A),
            ("payment_id", S),
        ],
        "update_reservation_passengers": [("reservation_id", S), ("passengers", A)],
        "get_flight_status": [("flight_number", S), ("date", S)],
    },
}
WRITE_TOOLS = {
    "retail": {
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    },
    "airline": {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    },
}
DOMAINS = {"retail": RETAIL, "airline": AIRLINE}


def test_tool_schemas_match_upstream_names_arguments_types_and_required(domain):
    tools = DOMAINS[domain].tools_by_name
    assert set(tools) == set(UPSTREAM_SIGNATURES[domain])
    for name, expected in UPSTREAM_SIGNATURES[domain].items():
        function = tools[name].schema()["function"]
        properties = function["parameters"]["properties"]
        assert [(arg, spec["type"]) for arg, spec in properties.items()] == expected, name
        assert function["parameters"]["required"] == [arg for arg, _ in expected], name
        assert list(inspect.signature(tools[name].fn).parameters)[1:] == [arg for arg, _ in expected], name


def test_airline_enums_and_array_items_follow_upstream_models():
    book = AIRLINE.tools_by_name["book_reservation"].schema()["function"]["parameters"]["properties"]
    assert book["flight_type"]["enum"] == ["round_trip", "one_way"]
    assert book["cabin"]["enum"] == ["business", "economy", "basic_economy"]
    assert book["insurance"]["enum"] == ["yes", "no"]
    assert book["flights"]["items"]["required"] == ["flight_number", "date"]
    assert book["passengers"]["items"]["required"] == ["first_name", "last_name", "dob"]
    assert book["payment_methods"]["items"]["properties"]["amount"] == {"type": "integer"}


def test_tool_kinds_and_terminal_transfer(domain):
    for tool in DOMAINS[domain].tools:
        expected = "write" if tool.name in WRITE_TOOLS[domain] else "read"
        if tool.name in ("calculate", "transfer_to_human_agents"):
            expected = "generic"
        assert tool.kind == expected, tool.name
        assert tool.terminal == (tool.name == "transfer_to_human_agents")
    assert len(DOMAINS[domain].tools) == {"retail": 16, "airline": 14}[domain]


def _upstream_calculate(expression: str) -> str:
    """Upstream's implementation, used here as the oracle."""
    if not all(char in "0123456789+-*/(). " for char in expression):
        return "Error: Invalid characters in expression"
    try:
        return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))
    except Exception as exc:  # noqa: BLE001 - upstream turns every exception into "Error: ..."
        return f"Error: {exc}"


@pytest.mark.parametrize(
    "expression",
    [
        "2 + 2",
        "10 / 3",
        "1/0",
        "1.0 / 0",
        "(1 + 2) * 3.5",
        "  7 // 2",
        "2 ** 10",
        "-(3 - 5)",
        "1.005 * 100",
        "(1 +",
        "",
        "1 2",
        "()",
        "...",
        "3 $",
        "1e5",
        "0 ** -1",
        "(-8) ** 0.5",
        "10 ** 400",
        "10.0 ** 400",
    ],
)
def test_calculate_matches_upstream_eval(expression, data_dir):
    outcome = run_tool(
        RETAIL.new_world(data_dir), RETAIL.tools_by_name["calculate"], {"expression": expression}
    )
    assert outcome.output == _upstream_calculate(expression)
    assert outcome.error == outcome.output.startswith("Error: ")


def test_calculate_fails_cleanly_on_pathological_input(data_dir):
    calculate = AIRLINE.tools_by_name["calculate"].fn
    with pytest.raises(ToolError, match="Exponent too large"):  # eval would hang
        calculate(AIRLINE.new_world(data_dir), expression="9 ** 99999999")
    with pytest.raises(ToolError):
        calculate(AIRLINE.new_world(data_dir), expression="-" * 10_000 + "1")


def test_argument_problems_and_unknown_tools_are_error_outputs(data_dir):
    world = AIRLINE.new_world(data_dir)
    assert (
        AIRLINE.call(world, "fly_me_to_the_moon", {}).output == "Error: Tool 'fly_me_to_the_moon' not found."
    )
    missing = AIRLINE.call(world, "get_user_details", {})
    assert missing.error and "missing required argument 'user_id'" in missing.output
    bad_item = AIRLINE.call(
        world,
        "update_reservation_flights",
        {
            "reservation_id": "EHGLP3",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT001"}],
            "payment_id": "x",
        },
    )
    assert bad_item.output == "Error: argument 'flights' item 0: FlightInfo: missing field 'date'"
    bad_ids = RETAIL.call(
        RETAIL.new_world(data_dir),
        "return_delivered_order_items",
        {"order_id": "#W4817420", "item_ids": [1], "payment_method_id": "gift_card_8168843"},
    )
    assert bad_ids.output == "Error: tool 'return_delivered_order_items': argument 'item_ids' item 0 must be of type string, got integer"


def test_episode_copies_are_independent_and_share_the_records_they_did_not_edit(data_dir):
    first, second = RETAIL.new_world(data_dir), RETAIL.new_world(data_dir)
    RETAIL.call(first, "cancel_pending_order", {"order_id": "#W5918442", "reason": "ordered by mistake"})
    assert first.db.orders["#W5918442"].status == "cancelled"
    assert second.db.orders["#W5918442"].status == "pending"
    assert first.db.hash() != second.db.hash() == dict_hash(second.db.to_dict())
    # copy-on-write: a record is copied once an episode edits it, the others are the snapshot's
    assert first.db.orders["#W5918442"] is not second.db.orders["#W5918442"]
    untouched = next(key for key in second.db.orders.keys() if key != "#W5918442")
    assert first.db.orders[untouched] is second.db.orders[untouched]


# ---- retail ----------------------------------------------------------------------------


def _retail(data_dir, name, **arguments):
    world = RETAIL.new_world(data_dir)
    return world, RETAIL.call(world, name, arguments)


def test_retail_lookups_ignore_case_of_email_and_names(data_dir):
    user = RETAIL.new_world(data_dir).db.users["sofia_rossi_8776"]
    _, by_email = _retail(data_dir, "find_user_id_by_email", email=user.email.upper())
    assert by_email.output == "sofia_rossi_8776"
    _, by_name = _retail(
        data_dir, "find_user_id_by_name_zip", first_name="SOFIA", last_name="rossi", zip=user.address.zip
    )
    assert by_name.output == "sofia_rossi_8776"
    _, wrong_zip = _retail(
        data_dir, "find_user_id_by_name_zip", first_name="Sofia", last_name="Rossi", zip="00000"
    )
    assert wrong_zip.output == "Error: User not found"


def test_retail_product_types_are_a_sorted_json_object(data_dir):
    _, outcome = _retail(data_dir, "list_all_product_types")
    types = json.loads(outcome.output)
    assert len(types) == 50 and list(types) == sorted(types)
    assert outcome.output.startswith('{"Action Camera": ')


def test_retail_write_checks_give_upstreams_messages(data_dir):
    cases = [
        (
            "cancel_pending_order",
            {"order_id": "#W2611340", "reason": "no longer needed"},
            "Non-pending order cannot be cancelled",
        ),
        ("cancel_pending_order", {"order_id": "#W5918442", "reason": "too expensive"}, "Invalid reason"),
        ("cancel_pending_order", {"order_id": "W5918442", "reason": "no longer needed"}, "Order not found"),
        (
            "modify_pending_order_payment",
            {"order_id": "#W5918442", "payment_method_id": "credit_card_5051208"},
            "The new payment method should be different from the current one",
        ),
        (
            "modify_pending_order_payment",
            {"order_id": "#W5918442", "payment_method_id": "paypal_0"},
            "Payment method not found",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": "#W5918442",
                "item_ids": ["1725100896"],
                "new_item_ids": ["1725100896"],
                "payment_method_id": "credit_card_5051208",
            },
            "The new item id should be different from the old item id",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": "#W5918442",
                "item_ids": ["1725100896", "1725100896"],
                "new_item_ids": ["9007697085"] * 2,
                "payment_method_id": "credit_card_5051208",
            },
            "1725100896 not found",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": "#W5918442",
                "item_ids": ["1725100896"],
                "new_item_ids": [],
                "payment_method_id": "credit_card_5051208",
            },
            "The number of items to be exchanged should match",
        ),
        (
            "exchange_delivered_order_items",
            {
                "order_id": "#W5918442",
                "item_ids": [],
                "new_item_ids": [],
                "payment_method_id": "credit_card_5051208",
            },
            "Non-delivered order cannot be exchanged",
        ),
        (
            "return_delivered_order_items",
            {"order_id": "#W5918442", "item_ids": [], "payment_method_id": "credit_card_5051208"},
            "Non-delivered order cannot be returned",
        ),
        (
            "modify_user_address",
            {
                "user_id": "nobody",
                "address1": "",
                "address2": "",
                "city": "",
                "state": "",
                "country": "",
                "zip": "",
            },
            "User not found",
        ),
    ]
    for name, arguments, message in cases:
        world, outcome = _retail(data_dir, name, **arguments)
        assert outcome.output == f"Error: {message}", name
        assert world.db.hash() == RETAIL.new_world(data_dir).db.hash()  # checks run before any change


def test_modify_items_gives_every_line_the_last_new_variants_price_and_options(data_dir):
    world, outcome = _retail(
        data_dir,
        "modify_pending_order_items",
        order_id="#W5918442",
        item_ids=["1725100896", "5312063289"],
        new_item_ids=["9007697085", "6843647669"],
        payment_method_id="credit_card_5051208",
    )
    assert not outcome.error
    order = json.loads(outcome.output)
    last = world.db.products[order["items"][1]["product_id"]].variants["6843647669"]
    assert [item["item_id"] for item in order["items"][:2]] == ["9007697085", "6843647669"]
    for item in order["items"][:2]:  # upstream quirk
        assert (item["price"], item["options"]) == (last.price, last.options)
    assert order["status"] == "pending (item modified)"
    assert order["payment_history"][-1]["payment_method_id"] == "credit_card_5051208"


def test_return_to_a_gift_card_or_the_original_method_only(data_dir):
    world, outcome = _retail(
        data_dir,
        "return_delivered_order_items",
        order_id="#W4817420",
        item_ids=[],
        payment_method_id="gift_card_8168843",
    )
    assert json.loads(outcome.output)["status"] == "return requested"
    order = RETAIL.new_world(data_dir).db.orders["#W4817420"]
    items = sorted(item.item_id for item in order.items)
    _, outcome = _retail(
        data_dir,
        "return_delivered_order_items",
        order_id="#W4817420",
        item_ids=items[::-1],
        payment_method_id="gift_card_8168843",
    )
    assert json.loads(outcome.output)["return_items"] == items


# ---- airline ---------------------------------------------------------------------------


def _airline(world, name, **arguments):
    return AIRLINE.call(world, name, arguments)


def test_airports_status_and_direct_search(data_dir):
    world = AIRLINE.new_world(data_dir)
    airports = _airline(world, "list_all_airports").output
    assert airports.startswith(
        '[{"iata": "SFO", "city": "San Francisco"}, {"iata": "JFK", "city": "New York"}'
    )
    assert len(json.loads(airports)) == 20
    assert _airline(world, "get_flight_status", flight_number="HAT018", date="2024-05-11").output == "delayed"
    assert _airline(world, "get_flight_status", flight_number="HAT018", date="2024-06-11").output == (
        "Error: Flight HAT018 not found on date 2024-06-11"
    )
    assert _airline(world, "get_flight_status", flight_number="HAT999", date="2024-05-11").output == (
        "Error: Flight HAT999 not found"
    )
    results = json.loads(
        _airline(world, "search_direct_flight", origin="JFK", destination="SFO", date="2024-05-20").output
    )
    assert results and all(r["origin"] == "JFK" and r["destination"] == "SFO" for r in results)
    assert list(results[0]) == [
        "flight_number",
        "origin",
        "destination",
        "status",
        "scheduled_departure_time_est",
        "scheduled_arrival_time_est",
        "date",
        "available_seats",
        "prices",
    ]
    assert {r["status"] for r in results} == {"available"} and {r["date"] for r in results} == {None}
    assert (
        _airline(world, "search_direct_flight", origin="JFK", destination="SFO", date="2024-05-01").output
        == "[]"
    )


def test_onestop_search_pairs_connecting_legs(data_dir):
    world = AIRLINE.new_world(data_dir)
    pairs = json.loads(
        _airline(world, "search_onestop_flight", origin="LGA", destination="SEA", date="2024-05-20").output
    )
    assert pairs
    for first, second in pairs:
        assert (first["origin"], first["destination"], second["destination"]) == (
            "LGA",
            second["origin"],
            "SEA",
        )
        assert first["date"] == "2024-05-20"
        assert second["date"] == (
            "2024-05-21" if "+1" in first["scheduled_arrival_time_est"] else "2024-05-20"
        )
        assert second["scheduled_departure_time_est"] >= first["scheduled_arrival_time_est"]


def _scanned(db, date, origin, destination):
    """The flight numbers a search must find, by a scan of every flight."""
    return [f.flight_number for f in db.flights.values()
            if f.origin == origin and f.destination == destination and f.dates.get(date) is not None
            and getattr(f.dates[date], "status", None) == "available"]


def test_direct_search_finds_what_a_scan_of_every_flight_finds_in_table_order(data_dir):
    world = AIRLINE.new_world(data_dir)
    codes = [airport["iata"] for airport in json.loads(_airline(world, "list_all_airports").output)]
    for origin in codes[:6]:
        for destination in codes:
            found = json.loads(_airline(world, "search_direct_flight", origin=origin, destination=destination,
                                        date="2024-05-20").output) if origin != destination else []
            expected = _scanned(world.db, "2024-05-20", origin, destination) if origin != destination else []
            assert [flight["flight_number"] for flight in found] == expected
    # a flight added in the episode is not in the snapshot's index: the search scans again
    added = copy.deepcopy(world.db.flights["HAT018"])
    added.flight_number = "HAT900"
    world.db.flights.add("HAT900", added)
    found = json.loads(_airline(world, "search_direct_flight", origin=added.origin, destination=added.destination,
                                date="2024-05-20").output)
    assert [flight["flight_number"] for flight in found] == _scanned(world.db, "2024-05-20", added.origin,
                                                                      added.destination)
    assert "HAT900" in [flight["flight_number"] for flight in found]  # HAT018 flies on 2024-05-20


def test_send_certificate_uses_upstreams_ids_and_stores_a_float(data_dir):
    world = AIRLINE.new_world(data_dir)
    messages = [
        _airline(world, "send_certificate", user_id="mei_hernandez_8984", amount=150).output for _ in range(4)
    ]
    assert messages[:3] == [
        f"Certificate certificate_322132{n} added to user mei_hernandez_8984 with amount 150."
        for n in (2, 3, 4)
    ]
    assert messages[3] == "Error: Too many certificates"
    certificate = world.db.to_dict()["users"]["mei_hernandez_8984"]["payment_methods"]["certificate_3221322"]
    assert certificate == {"source": "certificate", "id": "certificate_3221322", "amount": 150.0}


def _economy_flight(world, origin, destination, date):
    results = json.loads(
        _airline(world, "search_direct_flight", origin=origin, destination=destination, date=date).output
    )
    return results[0]


def test_book_reservation_pays_removes_the_certificate_and_takes_seats(data_dir):
    world = AIRLINE.new_world(data_dir)
    flight = _economy_flight(world, "JFK", "SFO", "2024-05-20")
    price = flight["prices"]["economy"] + 30 + 50  # insurance, one non-free bag
    payments = [
        {"payment_id": "certificate_7502997", "amount": 250},
        {"payment_id": "gift_card_5309492", "amount": 1},
        {"payment_id": "credit_card_2140654", "amount": price - 251},
    ]
    booking = {
        "user_id": "mei_hernandez_8984",
        "origin": "JFK",
        "destination": "SFO",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": flight["flight_number"], "date": "2024-05-20"}],
        "passengers": [
            {"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-01", "extra": "ignored"}
        ],
        "payment_methods": payments,
        "total_baggages": 1,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    reservation = json.loads(AIRLINE.call(world, "book_reservation", booking).output)
    assert reservation["reservation_id"] == "HATHAT" and reservation["created_at"] == "2024-05-15T15:00:00"
    assert reservation["flights"][0]["price"] == flight["prices"]["economy"]
    assert reservation["passengers"] == [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-01"}]
    assert reservation["payment_history"] == payments and reservation["status"] is None
    user = world.db.users["mei_hernandez_8984"]
    assert "certificate_7502997" not in user.payment_methods
    assert user.payment_methods["gift_card_5309492"].amount == 97.0
    assert user.reservations[-1] == "HATHAT"
    seats = world.db.flights[flight["flight_number"]].dates["2024-05-20"].available_seats["economy"]
    assert seats == flight["available_seats"]["economy"] - 1
    again = {**booking, "payment_methods": [{"payment_id": "credit_card_2140654", "amount": price}]}
    assert json.loads(AIRLINE.call(world, "book_reservation", again).output)["reservation_id"] == "HATHAU"


def test_book_reservation_checks_give_upstreams_messages(data_dir):
    world = AIRLINE.new_world(data_dir)
    flight = _economy_flight(world, "JFK", "SFO", "2024-05-20")
    base = {
        "user_id": "mei_hernandez_8984",
        "origin": "JFK",
        "destination": "SFO",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": flight["flight_number"], "date": "2024-05-20"}],
        "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1981-01-01"}],
        "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 1}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    price = flight["prices"]["economy"]
    cases = [
        ({}, f"Payment amount does not add up, total price is {price}, but paid 1"),
        ({"user_id": "ghost"}, "User ghost not found"),
        (
            {"flights": [{"flight_number": "HAT018", "date": "2024-05-11"}]},
            "Flight HAT018 not available on date 2024-05-11",
        ),
        (
            {"payment_methods": [{"payment_id": "gift_card_5309492", "amount": price}]},
            "Not enough balance in payment method gift_card_5309492",
        ),
        (
            {"payment_methods": [{"payment_id": "paypal_1", "amount": price}]},
            "Payment method paypal_1 not found",
        ),
    ]
    for change, message in cases:
        assert AIRLINE.call(world, "book_reservation", {**base, **change}).output == f"Error: {message}"
    assert world.db.hash() == AIRLINE.new_world(data_dir).db.hash()


def test_reservation_updates_check_payment_and_passenger_count(data_dir):
    world = AIRLINE.new_world(data_dir)
    original = AIRLINE.new_world(data_dir).db.reservations["R9QDGB"]
    assert original.user_id == "mei_hernandez_8984"
    update = {
        "reservation_id": "R9QDGB",
        "total_baggages": 9,
        "nonfree_baggages": original.nonfree_baggages + 9,
    }
    for payment_id, message in [
        ("certificate_7502997", "Certificate cannot be used to update reservation"),
        ("gift_card_5309492", "Gift card balance is not enough"),
        ("nope", "Payment method not found"),
    ]:
        assert (
            _airline(world, "update_reservation_baggages", **update, payment_id=payment_id).output
            == f"Error: {message}"
        )
    assert _airline(
        world, "update_reservation_passengers", reservation_id="R9QDGB", passengers=[]
    ).output == ("Error: Number of passengers does not match")
    assert world.db.hash() == AIRLINE.new_world(data_dir).db.hash()
    assert (
        _airline(world, "cancel_reservation", reservation_id="ZZZZZZ").output
        == "Error: Reservation ZZZZZZ not found"
    )
    cancelled = json.loads(_airline(world, "cancel_reservation", reservation_id="R9QDGB").output)
    paid = [p["amount"] for p in original.to_dict()["payment_history"]]
    assert [p["amount"] for p in cancelled["payment_history"]] == paid + [-a for a in paid]
    assert cancelled["status"] == "cancelled"


def test_resubmitting_the_same_itinerary_keeps_segments_and_charges_nothing(data_dir):
    world = AIRLINE.new_world(data_dir)
    original = world.db.reservations["R9QDGB"]
    flights = [{"flight_number": f.flight_number, "date": f.date} for f in original.flights]
    outcome = _airline(
        world,
        "update_reservation_flights",
        reservation_id="R9QDGB",
        cabin=original.cabin,
        flights=flights,
        payment_id="gift_card_5309492",
    )
    assert json.loads(outcome.output)["flights"] == original.to_dict()["flights"]
    assert world.db.hash() == AIRLINE.new_world(data_dir).db.hash()


def test_a_cabin_downgrade_reprices_every_segment_and_credits_the_gift_card(data_dir):
    world = AIRLINE.new_world(data_dir)
    original = world.db.reservations["4WQ150"]  # business, 3 passengers, both flights still available
    flights = [{"flight_number": f.flight_number, "date": f.date} for f in original.flights]
    new_prices = [world.db.flights[f["flight_number"]].dates[f["date"]].prices["economy"] for f in flights]
    difference = (sum(new_prices) - sum(f.price for f in original.flights)) * 3
    outcome = _airline(
        world,
        "update_reservation_flights",
        reservation_id="4WQ150",
        cabin="economy",
        flights=flights,
        payment_id="gift_card_3576581",
    )
    updated = json.loads(outcome.output)
    assert updated["cabin"] == "economy" and [f["price"] for f in updated["flights"]] == new_prices
    assert updated["payment_history"][-1] == {"payment_id": "gift_card_3576581", "amount": difference}
    assert (
        world.db.users["chen_jackson_3290"].payment_methods["gift_card_3576581"].amount == 245.0 - difference
    )
    seats = world.db.flights[flights[0]["flight_number"]].dates[flights[0]["date"]].available_seats
    assert (
        seats
        == AIRLINE.new_world(data_dir)
        .db.flights[flights[0]["flight_number"]]
        .dates[flights[0]["date"]]
        .available_seats
    )
