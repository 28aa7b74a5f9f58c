"""Seeded airline tasks: book, change flights, change bags, cancel, compensation, drawn
from the airline database under the airline policy as of 2024-05-15 15:00 EST.

- book: a one-way direct flight for the user alone (cabin drawn; bags within the free
  allowance; no insurance), paid with one credit card or a gift card that covers it;
- change flights: a one-way or two-segment round trip (not basic economy, not flown) moves
  its last segment to another date of the same route;
- change bags: one or two more checked bags, the non-free ones paid by card;
- cancel: a reservation not flown and cancellable (booked within 24 h, business, or
  insured and cancelled for health reasons);
- compensation: a silver/gold, insured or business traveller whose flight was cancelled
  gets a certificate of $100 per passenger.
Reference calls: read the user (and the reservation), search when flights change, write.
"""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cached_property
from typing import Any

from ..generator import Solved, make_task, task_rng, user_split
from ..upstream.airline.models import (
    AirlineDB,
    CreditCard,
    FlightDateAvailable,
    FlightDateCancelled,
    GiftCard,
    Reservation,
    User,
)
from ..user import UserFacts

KINDS = ("book", "change_flights", "change_bags", "cancel", "compensation")
TODAY = "2024-05-15"
NOW = "2024-05-15T15:00:00"
DAY_BEFORE = "2024-05-14T15:00:00"
FREE_BAGS = {  # per passenger, by membership and cabin
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
MAX_COMPENSATED_PASSENGERS = 5


class AirlineTaskGenerator:
    """Draws airline tasks from ``db`` (read only): ``generate(split, index)`` is pure; ``version``
    fixes which users each split holds (:func:`..generator.user_split`)."""

    kinds = KINDS
    domain = "airline"

    def __init__(self, db: AirlineDB, version: int = 0) -> None:
        self.db, self.version = db, version

    def _split(self, user_id: str) -> str:
        return user_split(user_id, self.version)

    @cached_property
    def _users(self) -> dict[str, list[str]]:
        by_split: dict[str, list[str]] = {}
        for user_id in sorted(self.db.users.keys()):
            by_split.setdefault(self._split(user_id), []).append(user_id)
        return by_split

    @cached_property
    def _routes(self) -> list[tuple[str, str, str]]:
        """(flight_number, origin, destination) of every flight, sorted."""
        return sorted((f.flight_number, f.origin, f.destination) for f in self.db.flights.values())

    @cached_property
    def _candidates(self) -> dict[tuple[str, str], list[str]]:
        """Reservation ids eligible for each (split, kind) but ``book``."""
        found: dict[tuple[str, str], list[str]] = {}
        for rid in sorted(self.db.reservations.keys()):
            reservation = self.db.reservations[rid]
            user = self.db.users.get(reservation.user_id)
            if user is None or reservation.status is not None:
                continue
            for kind in KINDS[1:]:
                if self._eligible(kind, reservation, user):
                    found.setdefault((self._split(user.user_id), kind), []).append(rid)
        return found

    def split_users(self, split: str, kinds: tuple[str, ...] = KINDS) -> set[str]:
        """The users the tasks of ``split`` and ``kinds`` can be about (every user of the split
        when booking is among them, else those with an eligible reservation)."""
        users = set(self._users.get(split, ())) if "book" in kinds else set()
        return users | {self.db.reservations[rid].user_id for kind in kinds for rid in self._candidates.get((split, kind), ())}

    def _not_flown(self, reservation: Reservation) -> bool:
        return all(f.date > TODAY for f in reservation.flights)

    def _eligible(self, kind: str, r: Reservation, user: User) -> bool:
        if kind == "cancel":
            return self._not_flown(r) and (r.cabin == "business" or r.insurance == "yes" or r.created_at >= DAY_BEFORE)
        if kind == "change_bags":
            return self._not_flown(r) and self._card(user, 100) is not None
        if kind == "change_flights":
            shape = (r.flight_type, len(r.flights)) in (("one_way", 1), ("round_trip", 2))
            return shape and r.cabin != "basic_economy" and self._not_flown(r) and self._card(user, 10**9) is not None
        return (
            len(r.passengers) <= MAX_COMPENSATED_PASSENGERS
            and (user.membership in ("silver", "gold") or r.insurance == "yes" or r.cabin == "business")
            and self._cancelled_segment(r) is not None
        )

    def _cancelled_segment(self, r: Reservation) -> Any:
        for segment in r.flights:
            flight = self.db.flights.get(segment.flight_number)
            if flight is not None and isinstance(flight.dates.get(segment.date), FlightDateCancelled):
                return segment
        return None

    @staticmethod
    def _card(user: User, amount: float) -> str | None:
        """A credit card of the user, else a gift card holding ``amount``."""
        for pid, method in sorted(user.payment_methods.items()):
            if isinstance(method, CreditCard):
                return pid
        for pid, method in sorted(user.payment_methods.items()):
            if isinstance(method, GiftCard) and method.amount >= amount:
                return pid
        return None

    def generate(self, split: str, index: int, kinds: tuple[str, ...] = KINDS) -> Any:
        """The task ``"<split>-<index>"`` of one of ``kinds`` (all by default)."""
        rng = task_rng(self.domain, split, index)
        while True:
            kind = rng.choice(kinds)
            if kind == "book":
                solved = self._book(rng, self.db.users[rng.choice(self._users[split])])
            else:
                reservations = self._candidates.get((split, kind))
                solved = self._solve(rng, kind, self.db.reservations[rng.choice(reservations)]) if reservations else None
            if solved is not None:
                return make_task(self.domain, split, index, solved)

    # ---- the scripted solver ---------------------------------------------------------
    def _available(self, flight_number: str, date: str, cabin: str, seats: int) -> FlightDateAvailable | None:
        status = self.db.flights[flight_number].dates.get(date)
        if isinstance(status, FlightDateAvailable) and status.available_seats.get(cabin, 0) >= seats:
            return status
        return None

    def _options(self, origin: str, destination: str, cabin: str, seats: int, after: str) -> list[tuple[str, str, int]]:
        """(flight_number, date, price) of the direct flights bookable after ``after``."""
        options = []
        for number, o, d in self._routes:
            if (o, d) != (origin, destination):
                continue
            for date in sorted(self.db.flights[number].dates):
                status = self._available(number, date, cabin, seats) if date > after else None
                if status is not None:
                    options.append((number, date, status.prices[cabin]))
        return options

    def _book(self, rng: random.Random, user: User) -> Solved | None:
        number, origin, destination = rng.choice(self._routes)
        cabin = rng.choice(("basic_economy", "economy", "business"))
        dates = [d for d in sorted(self.db.flights[number].dates) if d > TODAY and self._available(number, d, cabin, 1)]
        if not dates:
            return None
        date = rng.choice(dates)
        status = self._available(number, date, cabin, 1)
        assert status is not None
        price = status.prices[cabin]
        payment = self._card(user, price)
        if payment is None:
            return None
        bags = rng.randint(0, FREE_BAGS[user.membership][cabin])
        me = {"first_name": user.name.first_name, "last_name": user.name.last_name, "dob": user.dob}
        calls = [
            ("get_user_details", {"user_id": user.user_id}),
            ("search_direct_flight", {"origin": origin, "destination": destination, "date": date}),
            ("book_reservation", {
                "user_id": user.user_id, "origin": origin, "destination": destination, "flight_type": "one_way",
                "cabin": cabin, "flights": [{"flight_number": number, "date": date}], "passengers": [me],
                "payment_methods": [{"payment_id": payment, "amount": price}], "total_baggages": bags,
                "nonfree_baggages": 0, "insurance": "no",
            }),
        ]
        reason = (
            f"You want to book a one-way {cabin.replace('_', ' ')} flight from {origin} to {destination} on {date} "
            f"for yourself only, flight {number}, with {bags} checked bag(s) and no travel insurance. "
            f"You pay with {payment}."
        )
        facts = UserFacts(first_name=user.name.first_name, last_name=user.name.last_name, user_id=user.user_id, date=date)
        return Solved("book", reason, f"Your user id is {user.user_id}.", _ANSWER, facts, calls)

    def _solve(self, rng: random.Random, kind: str, r: Reservation) -> Solved | None:
        user = self.db.users[r.user_id]
        facts = UserFacts(first_name=user.name.first_name, last_name=user.name.last_name, user_id=user.user_id,
                          reservation_ids=(r.reservation_id,))
        calls: list[tuple[str, dict[str, Any]]] = [
            ("get_user_details", {"user_id": user.user_id}),
            ("get_reservation_details", {"reservation_id": r.reservation_id}),
        ]
        known = f"Your user id is {user.user_id}."
        rid = r.reservation_id
        if kind == "cancel":
            calls.append(("cancel_reservation", {"reservation_id": rid}))
            why = "of a health issue" if r.insurance == "yes" and r.cabin != "business" and r.created_at < DAY_BEFORE else "your plans changed"
            return Solved(kind, f"You want to cancel reservation {rid} because {why}.", known, _ANSWER, facts, calls)
        if kind == "change_bags":
            added = rng.randint(1, 2)
            total = r.total_baggages + added
            free = FREE_BAGS[user.membership][r.cabin] * len(r.passengers)
            nonfree = max(r.nonfree_baggages, total - free)
            payment = self._card(user, 50 * max(0, nonfree - r.nonfree_baggages))
            calls.append(("update_reservation_baggages", {"reservation_id": rid, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": payment}))
            reason = f"You want to add {added} checked bag(s) to reservation {rid} ({total} in all, {nonfree} of them paid); you pay with {payment}."
            return Solved(kind, reason, known, _ANSWER, facts, calls)
        if kind == "change_flights":
            return self._change_flights(rng, r, user, facts, known, calls)
        segment = self._cancelled_segment(r)
        amount = 100 * len(r.passengers)
        calls += [("get_flight_status", {"flight_number": segment.flight_number, "date": segment.date}),
                  ("send_certificate", {"user_id": user.user_id, "amount": amount})]
        reason = (f"Your flight {segment.flight_number} on {segment.date} (reservation {rid}) was cancelled and you "
                  f"want compensation for the {len(r.passengers)} passenger(s).")
        return Solved(kind, reason, known, _ANSWER, facts, calls)

    def _change_flights(self, rng: random.Random, r: Reservation, user: User, facts: UserFacts, known: str,
                        calls: list[tuple[str, dict[str, Any]]]) -> Solved | None:
        last = r.flights[-1]
        after = r.flights[0].date if len(r.flights) == 2 else TODAY
        options = [o for o in self._options(last.origin, last.destination, r.cabin, len(r.passengers), after)
                   if o[1] != last.date]
        if not options:
            return None
        number, date, price = rng.choice(options)
        payment = self._card(user, max(0, (price - last.price) * len(r.passengers)))
        if payment is None:
            return None
        flights = [{"flight_number": f.flight_number, "date": f.date} for f in r.flights[:-1]]
        flights.append({"flight_number": number, "date": date})
        calls += [
            ("search_direct_flight", {"origin": last.origin, "destination": last.destination, "date": date}),
            ("update_reservation_flights", {"reservation_id": r.reservation_id, "cabin": r.cabin, "flights": flights, "payment_id": payment}),
        ]
        facts = replace(facts, date=date)
        reason = (f"In reservation {r.reservation_id} you want to move your {last.origin}-{last.destination} flight "
                  f"from {last.date} to flight {number} on {date}, same cabin; any difference is paid with {payment}.")
        return Solved("change_flights", reason, known, _ANSWER, facts, calls)


_ANSWER = "Answer the agent's questions with what you know and confirm the change when asked."
