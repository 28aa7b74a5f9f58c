"""Every retail and airline write tool's effect, the database hash and the scoring of a few
tasks, on the tiny fixture data in ``tests/tau2/fixture`` (upstream's schema: db.json,
tasks.json, split_tasks.json per domain; no external data needed).

Each effect is written here as an edit of the fixture's JSON, following upstream's tool
semantics, and the expected hash is computed here the way upstream's evaluator computes it
(SHA-256 of the sorted-keys JSON dump), so neither is derived from the code under test.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentgym_envs.scenarios.tau2 import AIRLINE, RETAIL, dict_hash, score_episode

FIXTURE = Path(__file__).parent / "fixture"
DOMAINS = {"retail": RETAIL, "airline": AIRLINE}
# the fixtures' hashes, computed once with upstream's formula and pinned
PINNED_HASH = {
    "retail": "e14e515b3d003a8748f856827b55401688d132d30c8b4aab049cec564603a360",
    "airline": "a59ea577672603c5297ea19d1930b4a4b2128edaf5b52dbd0f13e04252ad4b99",
}
RETAIL_ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                         "exchange_price_difference", "return_items", "return_payment_method_id")
GIFT, CARD, PAYPAL = "gift_card_8168843", "credit_card_4100001", "paypal_4100002"
MIA_CARD, MIA_GIFT, MIA_CERTIFICATE = "credit_card_4421486", "gift_card_7100001", "certificate_7504069"


def upstream_db(domain: str) -> dict[str, Any]:
    """The fixture as upstream's ``model_dump()`` gives it: the file, with the optional
    fields a record omits present as null."""
    data = json.loads((FIXTURE / domain / "db.json").read_text())
    if domain == "retail":
        for order in data["orders"].values():
            for name in RETAIL_ORDER_OPTIONAL:
                order.setdefault(name, None)
    else:
        for user in data["users"].values():
            user["address"].setdefault("address2", None)
        for reservation in data["reservations"].values():
            reservation.setdefault("status", None)
    return data


def upstream_hash(data: dict[str, Any]) -> str:
    """Upstream's ``get_dict_hash``: SHA-256 of the JSON dump with sorted keys."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


@pytest.fixture(params=DOMAINS)
def fixture_domain(request: pytest.FixtureRequest) -> str:
    return request.param


def _world(domain: str):
    return DOMAINS[domain].new_world(FIXTURE)


def test_the_fixture_loads_as_upstreams_model_dump(fixture_domain):
    assert _world(fixture_domain).db.to_dict() == upstream_db(fixture_domain)


def test_the_fixture_hash_is_upstreams_sorted_keys_sha256(fixture_domain):
    db = _world(fixture_domain).db
    expected = upstream_hash(upstream_db(fixture_domain))
    assert db.hash() == dict_hash(db.to_dict()) == expected == PINNED_HASH[fixture_domain]


def test_the_hash_depends_on_sorting_the_keys(fixture_domain):
    """The fixture's fields are not in alphabetical order, so a hash of the unsorted dump differs."""
    data = _world(fixture_domain).db.to_dict()
    unsorted = hashlib.sha256(json.dumps(data, default=str).encode("utf-8")).hexdigest()
    assert unsorted != upstream_hash(data)


# ---- the effects, written as edits of the fixture's JSON -------------------------------

def _retail_cancel(db):
    order = db["orders"]["#W1000001"]  # paid by gift card: the refund goes back on it at once
    order["status"], order["cancel_reason"] = "cancelled", "ordered by mistake"
    order["payment_history"].append({"transaction_type": "refund", "amount": 206.66, "payment_method_id": GIFT})
    db["users"]["ava_moore_2033"]["payment_methods"][GIFT]["balance"] = 275.66  # 69.00 + 206.66
    return order


NEW_ADDRESS = {"address1": "1 Harbor Way", "address2": "Apt 2", "city": "Boston", "country": "USA", "state": "MA",
               "zip": "02110"}


def _retail_modify_address(db):
    order = db["orders"]["#W1000006"]  # "pending (item modified)" may still change its address
    order["address"] = dict(NEW_ADDRESS)
    return order


def _retail_modify_payment(db):
    order = db["orders"]["#W1000002"]
    order["payment_history"] += [
        {"transaction_type": "payment", "amount": 47.76, "payment_method_id": GIFT},
        {"transaction_type": "refund", "amount": 47.76, "payment_method_id": CARD},
    ]
    db["users"]["ava_moore_2033"]["payment_methods"][GIFT]["balance"] = 21.24  # 69.00 - 47.76
    return order


KETTLE_2L = {"capacity": "2L", "material": "stainless steel", "color": "black"}


def _retail_modify_items(db):
    order = db["orders"]["#W1000001"]
    difference = (54.85 - 47.76) + (153.0 - 158.9)  # new minus old, line by line, not rounded
    order["payment_history"].append({"transaction_type": "payment", "amount": difference, "payment_method_id": GIFT})
    db["users"]["ava_moore_2033"]["payment_methods"][GIFT]["balance"] = 67.81  # 69.00 - 1.19
    # upstream's quirk: every modified line takes the price and options of the last new variant
    order["items"][0].update(item_id="4579334072", price=153.0, options=dict(KETTLE_2L))
    order["items"][1].update(item_id="4458619711", price=153.0, options=dict(KETTLE_2L))
    order["status"] = "pending (item modified)"
    return order


def _retail_exchange(db):
    order = db["orders"]["#W1000004"]
    order.update(status="exchange requested", exchange_items=["6777246137", "9624127908"],
                 exchange_new_items=["4458619711", "4579334072"], exchange_payment_method_id=PAYPAL,
                 exchange_price_difference=1.19)  # (153.00 - 158.90) + (54.85 - 47.76), rounded
    return order


def _retail_return(db):
    order = db["orders"]["#W1000004"]
    order.update(status="return requested", return_items=["6777246137", "9624127908"], return_payment_method_id=GIFT)
    return order


def _retail_modify_user_address(db):
    user = db["users"]["raj_kim_5151"]
    user["address"] = dict(NEW_ADDRESS)
    return user


def _airline_book(db):
    user = db["users"]["mia_li_3668"]
    del user["payment_methods"][MIA_CERTIFICATE]  # a certificate is used up whatever is left on it
    user["payment_methods"][MIA_GIFT]["amount"] = 140.0  # 200 - 60
    user["reservations"].append("HATHAT")
    db["flights"]["HAT001"]["dates"]["2024-05-21"]["available_seats"]["economy"] = 2
    reservation = {
        "reservation_id": "HATHAT", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SFO",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"origin": "JFK", "destination": "SFO", "flight_number": "HAT001", "date": "2024-05-21", "price": 130}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_history": [{"payment_id": MIA_CERTIFICATE, "amount": 150}, {"payment_id": MIA_GIFT, "amount": 60}],
        "created_at": "2024-05-15T15:00:00", "total_baggages": 2, "nonfree_baggages": 1, "insurance": "yes",
        "status": None,
    }
    db["reservations"]["HATHAT"] = reservation
    return reservation


def _airline_cancel(db):
    reservation = db["reservations"]["4WQ150"]  # no refund to any balance, no seats released
    reservation["payment_history"].append({"payment_id": MIA_CARD, "amount": -640})
    reservation["status"] = "cancelled"
    return reservation


def _airline_change_date(db):
    reservation = db["reservations"]["4WQ150"]
    reservation["flights"][0].update(date="2024-05-21", price=130)  # the unchanged return keeps its 170
    reservation["payment_history"].append({"payment_id": MIA_GIFT, "amount": -40})  # (130 + 170 - 320) x 2
    db["users"]["mia_li_3668"]["payment_methods"][MIA_GIFT]["amount"] = 240.0
    return reservation


def _airline_upgrade(db):
    reservation = db["reservations"]["4WQ150"]
    reservation["cabin"] = "business"
    reservation["flights"][0]["price"], reservation["flights"][1]["price"] = 400, 450
    reservation["payment_history"].append({"payment_id": MIA_CARD, "amount": 1060})  # (850 - 320) x 2
    return reservation


def _airline_baggages(db):
    reservation = db["reservations"]["4WQ150"]
    reservation.update(total_baggages=4, nonfree_baggages=2)
    reservation["payment_history"].append({"payment_id": MIA_GIFT, "amount": 100})  # 2 x 50
    db["users"]["mia_li_3668"]["payment_methods"][MIA_GIFT]["amount"] = 100.0
    return reservation


TRAVELLERS = [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"},
              {"first_name": "Noah", "last_name": "Li", "dob": "2015-06-01"}]


def _airline_passengers(db):
    reservation = db["reservations"]["4WQ150"]
    reservation["passengers"] = copy.deepcopy(TRAVELLERS)
    return reservation


def _airline_certificate(db):
    certificate = {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}
    db["users"]["omar_rossi_1241"]["payment_methods"]["certificate_3221322"] = certificate
    return "Certificate certificate_3221322 added to user omar_rossi_1241 with amount 100."


EFFECTS: list[tuple[str, str, dict[str, Any], Callable[[dict], Any]]] = [
    ("retail", "cancel_pending_order", {"order_id": "#W1000001", "reason": "ordered by mistake"}, _retail_cancel),
    ("retail", "modify_pending_order_address", {"order_id": "#W1000006", **NEW_ADDRESS}, _retail_modify_address),
    ("retail", "modify_pending_order_payment", {"order_id": "#W1000002", "payment_method_id": GIFT}, _retail_modify_payment),
    ("retail", "modify_pending_order_items", {"order_id": "#W1000001", "item_ids": ["6777246137", "9624127908"],
                                              "new_item_ids": ["4579334072", "4458619711"], "payment_method_id": GIFT},
     _retail_modify_items),
    ("retail", "exchange_delivered_order_items", {"order_id": "#W1000004", "item_ids": ["9624127908", "6777246137"],
                                                  "new_item_ids": ["4458619711", "4579334072"], "payment_method_id": PAYPAL},
     _retail_exchange),
    ("retail", "return_delivered_order_items", {"order_id": "#W1000004", "item_ids": ["9624127908", "6777246137"],
                                                "payment_method_id": GIFT}, _retail_return),
    ("retail", "modify_user_address", {"user_id": "raj_kim_5151", **NEW_ADDRESS}, _retail_modify_user_address),
    ("airline", "book_reservation", {
        "user_id": "mia_li_3668", "origin": "JFK", "destination": "SFO", "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-21"}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [{"payment_id": MIA_CERTIFICATE, "amount": 150}, {"payment_id": MIA_GIFT, "amount": 60}],
        "total_baggages": 2, "nonfree_baggages": 1, "insurance": "yes",  # 130 + 30 insurance + 50 bag
    }, _airline_book),
    ("airline", "cancel_reservation", {"reservation_id": "4WQ150"}, _airline_cancel),
    ("airline", "update_reservation_flights", {
        "reservation_id": "4WQ150", "cabin": "economy", "payment_id": MIA_GIFT,
        "flights": [{"flight_number": "HAT001", "date": "2024-05-21"}, {"flight_number": "HAT002", "date": "2024-05-25"}],
    }, _airline_change_date),
    ("airline", "update_reservation_flights", {
        "reservation_id": "4WQ150", "cabin": "business", "payment_id": MIA_CARD,
        "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}, {"flight_number": "HAT002", "date": "2024-05-25"}],
    }, _airline_upgrade),
    ("airline", "update_reservation_baggages", {"reservation_id": "4WQ150", "total_baggages": 4, "nonfree_baggages": 2,
                                                "payment_id": MIA_GIFT}, _airline_baggages),
    ("airline", "update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": TRAVELLERS},
     _airline_passengers),
    ("airline", "send_certificate", {"user_id": "omar_rossi_1241", "amount": 100}, _airline_certificate),
]


def test_every_write_tool_has_an_effect_test():
    for domain, tools in DOMAINS.items():
        writes = {tool.name for tool in tools.tools if tool.kind == "write"}
        assert writes == {name for d, name, _, _ in EFFECTS if d == domain}, domain


@pytest.mark.parametrize("domain, name, arguments, edit", EFFECTS, ids=[f"{e[0]}-{e[3].__name__[1:]}" for e in EFFECTS])
def test_a_write_tool_has_exactly_its_upstream_effect_and_hash(domain, name, arguments, edit):
    world = _world(domain)
    outcome = DOMAINS[domain].call(world, name, copy.deepcopy(arguments))
    assert not outcome.error, outcome.output
    expected = upstream_db(domain)
    changed = edit(expected)
    assert world.db.to_dict() == expected
    assert world.db.hash() == upstream_hash(expected) != PINNED_HASH[domain]
    assert (json.loads(outcome.output) if isinstance(changed, dict) else outcome.output) == changed
    assert _world(domain).db.hash() == PINNED_HASH[domain]  # a fresh episode starts from the fixture


FAILING_CHECKS = [
    ("retail", "cancel_pending_order", {"order_id": "#W1000003", "reason": "no longer needed"},
     "Non-pending order cannot be cancelled"),
    ("retail", "cancel_pending_order", {"order_id": "#W1000002", "reason": "too expensive"}, "Invalid reason"),
    ("retail", "modify_pending_order_address", {"order_id": "#W1000004", **NEW_ADDRESS},
     "Non-pending order cannot be modified"),
    ("retail", "modify_pending_order_payment", {"order_id": "#W1000006", "payment_method_id": GIFT},
     "There should be exactly one payment for a pending order"),
    ("retail", "modify_pending_order_payment", {"order_id": "#W1000002", "payment_method_id": CARD},
     "The new payment method should be different from the current one"),
    ("retail", "modify_pending_order_items", {"order_id": "#W1000002", "item_ids": ["6777246137"],
                                              "new_item_ids": ["1434748144"], "payment_method_id": CARD},
     "New item 1434748144 not found or available"),
    ("retail", "modify_pending_order_items", {"order_id": "#W1000002", "item_ids": ["6777246137"],
                                              "new_item_ids": ["4458619711"], "payment_method_id": CARD},
     "Variant not found"),
    ("retail", "modify_pending_order_items", {"order_id": "#W1000006", "item_ids": ["4579334072"],
                                              "new_item_ids": ["6777246137"], "payment_method_id": CARD},
     "Non-pending order cannot be modified"),
    ("retail", "exchange_delivered_order_items", {"order_id": "#W1000002", "item_ids": ["6777246137"],
                                                  "new_item_ids": ["4579334072"], "payment_method_id": CARD},
     "Non-delivered order cannot be exchanged"),
    ("retail", "return_delivered_order_items", {"order_id": "#W1000004", "item_ids": ["6777246137"],
                                                "payment_method_id": PAYPAL},
     "Payment method should be the original payment method"),
    ("retail", "modify_user_address", {"user_id": "nobody", **NEW_ADDRESS}, "User not found"),
    ("airline", "book_reservation", {**EFFECTS[7][2], "payment_methods": [{"payment_id": MIA_CARD, "amount": 200}]},
     "Payment amount does not add up, total price is 210, but paid 200"),
    ("airline", "book_reservation", {**EFFECTS[7][2], "flights": [{"flight_number": "HAT001", "date": "2024-05-14"}]},
     "Flight HAT001 not available on date 2024-05-14"),
    ("airline", "book_reservation", {**EFFECTS[7][2], "cabin": "business", "passengers": TRAVELLERS * 2},
     "Not enough seats on flight HAT001"),
    ("airline", "cancel_reservation", {"reservation_id": "ZZZZZZ"}, "Reservation ZZZZZZ not found"),
    ("airline", "update_reservation_flights", {**EFFECTS[10][2], "payment_id": MIA_CERTIFICATE},
     "Certificate cannot be used to update reservation"),
    ("airline", "update_reservation_baggages", {"reservation_id": "4WQ150", "total_baggages": 7, "nonfree_baggages": 5,
                                                "payment_id": MIA_GIFT}, "Gift card balance is not enough"),
    ("airline", "update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": TRAVELLERS[:1]},
     "Number of passengers does not match"),
    ("airline", "send_certificate", {"user_id": "ghost", "amount": 100}, "User ghost not found"),
]


@pytest.mark.parametrize("domain, name, arguments, message", FAILING_CHECKS,
                         ids=[f"{c[0]}-{c[1]}-{n}" for n, c in enumerate(FAILING_CHECKS)])
def test_a_write_whose_check_fails_gives_upstreams_message_and_changes_nothing(domain, name, arguments, message):
    world = _world(domain)
    outcome = DOMAINS[domain].call(world, name, copy.deepcopy(arguments))
    assert (outcome.error, outcome.output) == (True, f"Error: {message}")
    assert world.db.hash() == PINNED_HASH[domain]
    assert world.db.to_dict() == upstream_db(domain)


# ---- scoring on the fixture's tasks ------------------------------------------------------

def _task(domain: str, task_id: str):
    return next(task for task in DOMAINS[domain].load_tasks("base", FIXTURE) if task.id == task_id)


def _gold_calls(task) -> list[tuple[str, dict]]:
    return [(action.name, copy.deepcopy(action.arguments)) for action in task.evaluation_criteria.actions]


@pytest.mark.parametrize("domain, task_id, edit, messages", [
    ("retail", "0", _retail_cancel, []),
    ("retail", "1", lambda db: None, ["Order #W1000001 cost $206.66."]),
    ("airline", "0", _airline_book, ["The total is $210."]),
    ("airline", "1", _airline_cancel, []),
])
def test_replaying_the_reference_actions_scores_one_with_the_hand_written_end_state(domain, task_id, edit, messages):
    task = _task(domain, task_id)
    score = score_episode(task, _gold_calls(task), messages, data_dir=FIXTURE)
    expected = upstream_db(domain)
    edit(expected)
    assert (score.reward, score.success) == (1.0, True)
    assert score.db_hash == score.gold_db_hash == upstream_hash(expected)


@pytest.mark.parametrize("calls", [
    [],  # nothing done
    [("cancel_pending_order", {"order_id": "#W1000001", "reason": "no longer needed"})],  # the wrong reason
    [("cancel_pending_order", {"order_id": "#W1000002", "reason": "ordered by mistake"})],  # the wrong order
    [("cancel_pending_order", {"order_id": "#W1000001", "reason": "ordered by mistake"}),
     ("modify_user_address", {"user_id": "raj_kim_5151", **NEW_ADDRESS})],  # one write too many
], ids=["nothing", "wrong-reason", "wrong-order", "extra-write"])
def test_a_missing_wrong_or_extra_write_scores_zero(calls):
    score = score_episode(_task("retail", "0"), calls, [], data_dir=FIXTURE)
    assert score.components["DB"] == 0.0 and score.reward == 0.0
    assert score.db_hash != score.gold_db_hash


def test_reads_are_harmless_and_a_write_fails_a_task_that_changes_nothing():
    task = _task("retail", "1")
    reads = [("find_user_id_by_email", {"email": "ava.moore6020@example.com"}),
             ("get_order_details", {"order_id": "#W1000001"})]
    assert score_episode(task, reads, ["It cost $206.66."], data_dir=FIXTURE).reward == 1.0
    write = [("modify_pending_order_address", {"order_id": "#W1000001", **NEW_ADDRESS})]
    assert score_episode(task, reads + write, ["It cost $206.66."], data_dir=FIXTURE).reward == 0.0


def test_the_required_information_must_be_communicated():
    task = _task("airline", "0")
    score = score_episode(task, _gold_calls(task), ["Booked."], data_dir=FIXTURE)
    assert score.components == {**score.components, "DB": 1.0, "COMMUNICATE": 0.0} and score.reward == 0.0
