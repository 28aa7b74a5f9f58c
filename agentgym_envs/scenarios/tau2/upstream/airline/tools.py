"""The airline domain's 14 tools, with upstream's checks, error messages, effects and quirks
(``tau2.domains.airline.tools.AirlineTools``)."""

from __future__ import annotations

from agentgym_envs.core.tools import Arg, Tool, ToolError

from ..arguments import upstream_model
from ..generic_tools import CALCULATE, TRANSFER_TO_HUMAN_AGENTS, object_items, record_list, render
from ..toolkit import Tau2World
from .models import (
    CABINS,
    FLIGHT_TYPES,
    INSURANCE,
    AirlineDB,
    AirportCode,
    Cabin,
    Certificate,
    DirectFlight,
    Flight,
    FlightDate,
    FlightDateAvailable,
    FlightInfo,
    FlightType,
    GiftCard,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)

World = Tau2World[AirlineDB]
NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


# ---- lookups (upstream's _get_* helpers and their messages) ----------------------------


def _user(db: AirlineDB, user_id: str) -> User:
    user = db.users.get(user_id)
    if user is None:
        raise ToolError(f"User {user_id} not found")
    return user


def _reservation(db: AirlineDB, reservation_id: str) -> Reservation:
    reservation = db.reservations.get(reservation_id)
    if reservation is None:
        raise ToolError(f"Reservation {reservation_id} not found")
    return reservation


def _flight(db: AirlineDB, flight_number: str) -> Flight:
    flight = db.flights.get(flight_number)
    if flight is None:
        raise ToolError(f"Flight {flight_number} not found")
    return flight


def _flight_date(db: AirlineDB, flight_number: str, date: str) -> FlightDate:
    status = _flight(db, flight_number).dates.get(date)
    if status is None:
        raise ToolError(f"Flight {flight_number} not found on date {date}")
    return status


def _bookable(db: AirlineDB, info: FlightInfo, cabin: str, seats: int) -> FlightDateAvailable:
    """The flight date of ``info`` if it is available with ``seats`` free seats in ``cabin``."""
    status = _flight_date(db, info.flight_number, info.date)
    if not isinstance(status, FlightDateAvailable):
        raise ToolError(f"Flight {info.flight_number} not available on date {info.date}")
    if status.available_seats[cabin] < seats:
        raise ToolError(f"Not enough seats on flight {info.flight_number}")
    return status


def _search_direct(
    db: AirlineDB, date: str, origin: str | None, destination: str | None, leave_after: str | None = None
) -> list[DirectFlight]:
    results = []
    flights = db.flights
    for number in db.flight_numbers(origin, destination):
        flight = flights[number]
        status = flight.dates.get(date)
        if (
            (origin is None or flight.origin == origin)
            and (destination is None or flight.destination == destination)
            and isinstance(status, FlightDateAvailable)
            and (leave_after is None or flight.scheduled_departure_time_est >= leave_after)
        ):
            results.append(
                DirectFlight(
                    flight.flight_number,
                    flight.origin,
                    flight.destination,
                    "available",
                    flight.scheduled_departure_time_est,
                    flight.scheduled_arrival_time_est,
                    None,
                    dict(status.available_seats),
                    dict(status.prices),
                )
            )
    return results


def _charge_for_update(db: AirlineDB, user_id: str, payment_id: str, total_price: int) -> Payment | None:
    """Upstream's ``_payment_for_update``: charge (or, if negative, credit) ``total_price``."""
    method = _user(db, user_id).payment_methods.get(payment_id)
    if method is None:
        raise ToolError("Payment method not found")
    if isinstance(method, Certificate):
        raise ToolError("Certificate cannot be used to update reservation")
    if isinstance(method, GiftCard):
        if method.amount < total_price:
            raise ToolError("Gift card balance is not enough")
        card = db.users.edit(user_id).payment_methods[payment_id]
        assert isinstance(card, GiftCard)
        card.amount -= total_price
    return Payment(payment_id, total_price) if total_price != 0 else None


# ---- READ ------------------------------------------------------------------------------


def get_user_details(world: World, user_id: str) -> str:
    return render(_user(world.db, user_id))


def get_reservation_details(world: World, reservation_id: str) -> str:
    return render(_reservation(world.db, reservation_id))


def list_all_airports(world: World) -> str:
    return render([AirportCode(iata, city) for iata, city in AIRPORTS])


def search_direct_flight(world: World, origin: str, destination: str, date: str) -> str:
    return render(_search_direct(world.db, date, origin, destination))


def search_onestop_flight(world: World, origin: str, destination: str, date: str) -> str:
    results = []
    for first in _search_direct(world.db, date, origin, None):
        first.date = date
        # upstream quirk: the next day is written without zero padding ("2024-05-6")
        date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first.scheduled_arrival_time_est else date
        for second in _search_direct(
            world.db, date2, first.destination, destination, first.scheduled_arrival_time_est
        ):
            second.date = date2
            results.append([first, second])
    return render(results)


def get_flight_status(world: World, flight_number: str, date: str) -> str:
    return _flight_date(world.db, flight_number, date).status


# ---- WRITE -----------------------------------------------------------------------------


def book_reservation(
    world: World,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: FlightType,
    cabin: Cabin,
    flights: list[dict],
    passengers: list[dict],
    payment_methods: list[dict],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Insurance,
) -> str:
    db = world.db
    flight_infos = record_list(world, "flights", flights, FlightInfo)
    travellers = record_list(world, "passengers", passengers, Passenger)
    payments = record_list(world, "payment_methods", payment_methods, Payment)
    user = _user(db, user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if r not in db.reservations), None)
    if reservation_id is None:
        raise ToolError("Too many reservations")
    given = {
        "user_id": user_id, "origin": origin, "destination": destination, "flight_type": flight_type,
        "cabin": cabin, "total_baggages": total_baggages, "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    stored = upstream_model(world, "Reservation", Reservation, given, tuple(given))

    segments, total_price = [], 0
    for info in flight_infos:
        flight = _flight(db, info.flight_number)
        price = _bookable(db, info, cabin, len(travellers)).prices[cabin]
        segments.append(
            ReservationFlight(info.flight_number, flight.origin, flight.destination, info.date, price)
        )
        total_price += price * len(travellers)
    if insurance == "yes":
        total_price += 30 * len(travellers)
    total_price += 50 * nonfree_baggages

    for payment in payments:
        method = user.payment_methods.get(payment.payment_id)
        if method is None:
            raise ToolError(f"Payment method {payment.payment_id} not found")
        if isinstance(method, (GiftCard, Certificate)) and method.amount < payment.amount:
            raise ToolError(f"Not enough balance in payment method {payment.payment_id}")
    total_payment = sum(payment.amount for payment in payments)
    if total_payment != total_price:
        raise ToolError(
            f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}"
        )

    user = db.users.edit(user_id)
    for payment in payments:
        method = user.payment_methods.get(payment.payment_id)
        if method is None:  # a certificate listed twice: upstream's dict lookup raises KeyError
            raise ToolError(repr(payment.payment_id))
        if isinstance(method, GiftCard):
            method.amount -= payment.amount
        elif isinstance(method, Certificate):
            del user.payment_methods[payment.payment_id]
    for info in flight_infos:
        status = db.flights.edit(info.flight_number).dates[info.date]
        assert isinstance(status, FlightDateAvailable)
        status.available_seats[cabin] -= len(travellers)
    reservation = Reservation(
        reservation_id=reservation_id,
        flights=segments,
        passengers=travellers,
        payment_history=payments,
        created_at=NOW,
        **stored,
    )
    db.reservations.add(reservation_id, reservation)
    user.reservations.append(reservation_id)
    return render(reservation)


def cancel_reservation(world: World, reservation_id: str) -> str:
    _reservation(world.db, reservation_id)
    reservation = world.db.reservations.edit(reservation_id)
    # upstream: no policy checks, seats are not released and no balance is restored
    reservation.payment_history.extend(
        [Payment(p.payment_id, -p.amount) for p in reservation.payment_history]
    )
    reservation.status = "cancelled"
    return render(reservation)


def send_certificate(world: World, user_id: str, amount: int) -> str:
    user = _user(world.db, user_id)
    for payment_id in NEW_CERTIFICATE_IDS:
        if payment_id not in user.payment_methods:
            user = world.db.users.edit(user_id)
            given = {"source": "certificate", "id": payment_id, "amount": amount}
            certificate = upstream_model(world, "Certificate", Certificate, given)
            user.payment_methods[payment_id] = Certificate("certificate", payment_id, float(certificate["amount"]))
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise ToolError("Too many certificates")


def update_reservation_baggages(
    world: World, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> str:
    db = world.db
    reservation = _reservation(db, reservation_id)
    _user(db, reservation.user_id)
    total_price = 50 * max(0, nonfree_baggages - reservation.nonfree_baggages)
    payment = _charge_for_update(db, reservation.user_id, payment_id, total_price)
    reservation = db.reservations.edit(reservation_id)
    if payment is not None:
        reservation.payment_history.append(payment)
    reservation.total_baggages = total_baggages
    reservation.nonfree_baggages = nonfree_baggages
    return render(reservation)


def update_reservation_flights(
    world: World, reservation_id: str, cabin: Cabin, flights: list[dict], payment_id: str
) -> str:
    db = world.db
    flight_infos = record_list(world, "flights", flights, FlightInfo)
    reservation = _reservation(db, reservation_id)
    _user(db, reservation.user_id)
    reservation = db.reservations.edit(reservation_id)
    passengers = len(reservation.passengers)
    segments, total_price = [], 0
    for info in flight_infos:
        # keep an unchanged segment (same number, date and cabin) at the price paid for it
        kept = next(
            (
                segment
                for segment in reservation.flights
                if segment.flight_number == info.flight_number
                and segment.date == info.date
                and cabin == reservation.cabin
            ),
            None,
        )
        if kept is None:
            flight = _flight(db, info.flight_number)
            price = _bookable(db, info, cabin, passengers).prices[cabin]
            kept = ReservationFlight(info.flight_number, flight.origin, flight.destination, info.date, price)
        total_price += kept.price * passengers
        segments.append(kept)
    total_price -= sum(segment.price for segment in reservation.flights) * passengers
    payment = _charge_for_update(db, reservation.user_id, payment_id, total_price)
    if payment is not None:
        reservation.payment_history.append(payment)
    reservation.flights = segments
    reservation.cabin = cabin
    # upstream: seat counts are not updated
    return render(reservation)


def update_reservation_passengers(world: World, reservation_id: str, passengers: list[dict]) -> str:
    travellers = record_list(world, "passengers", passengers, Passenger)
    if len(travellers) != len(_reservation(world.db, reservation_id).passengers):
        raise ToolError("Number of passengers does not match")
    reservation = world.db.reservations.edit(reservation_id)
    reservation.passengers = travellers
    return render(reservation)


# ---- declarations ----------------------------------------------------------------------

_USER_ID = Arg("user_id", "string", "user_id", "The user ID, such as 'sara_doe_496'.")
_RESERVATION_ID = Arg("reservation_id", "string", "reservation_id", "The reservation ID, such as 'ZFA04Y'.")
_CABIN = Arg(
    "cabin",
    "string",
    "cabin",
    "The cabin class such as 'basic_economy', 'economy', or 'business'.",
    enum=CABINS,
)
_FLIGHTS_ITEMS = object_items({"flight_number": "string", "date": "string"})
_PASSENGERS = Arg(
    "passengers",
    "array",
    "passengers",
    "An array of objects containing details about each passenger.",
    items=object_items({"first_name": "string", "last_name": "string", "dob": "string"}),
)
_PAYMENT_ID = Arg(
    "payment_id",
    "string",
    "payment_method_id",
    "The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', "
    "'certificate_7815826'.",
)


def _route(example_date: str) -> tuple[Arg, Arg, Arg]:
    return (
        Arg("origin", "string", "airport", "The origin city airport in three letters, such as 'JFK'."),
        Arg(
            "destination",
            "string",
            "airport",
            "The destination city airport in three letters, such as 'LAX'.",
        ),
        Arg(
            "date",
            "string",
            "date",
            f"The date of the flight in the format 'YYYY-MM-DD', such as '{example_date}'.",
        ),
    )


TOOLS: tuple[Tool, ...] = (
    Tool(
        "book_reservation",
        "Book a reservation.",
        (
            Arg(
                "user_id",
                "string",
                "user_id",
                "The ID of the user to book the reservation such as 'sara_doe_496'.",
            ),
            Arg("origin", "string", "airport", "The IATA code for the origin city such as 'SFO'."),
            Arg("destination", "string", "airport", "The IATA code for the destination city such as 'JFK'."),
            Arg(
                "flight_type",
                "string",
                "flight_type",
                "The type of flight such as 'one_way' or 'round_trip'.",
                enum=FLIGHT_TYPES,
            ),
            _CABIN,
            Arg(
                "flights",
                "array",
                "flights",
                "An array of objects containing details about each piece of flight.",
                items=_FLIGHTS_ITEMS,
            ),
            _PASSENGERS,
            Arg(
                "payment_methods",
                "array",
                "payments",
                "An array of objects containing details about each payment method.",
                items=object_items({"payment_id": "string", "amount": "integer"}),
            ),
            Arg(
                "total_baggages",
                "integer",
                "count",
                "The total number of baggage items to book the reservation.",
            ),
            Arg(
                "nonfree_baggages",
                "integer",
                "count",
                "The number of non-free baggage items to book the reservation.",
            ),
            Arg("insurance", "string", "insurance", "Whether the reservation has insurance.", enum=INSURANCE),
        ),
        book_reservation,
        kind="write",
    ),
    CALCULATE,
    Tool(
        "cancel_reservation",
        "Cancel the whole reservation.",
        (_RESERVATION_ID,),
        cancel_reservation,
        kind="write",
    ),
    Tool(
        "get_reservation_details",
        "Get the details of a reservation.",
        (Arg("reservation_id", "string", "reservation_id", "The reservation ID, such as '8JX2WO'."),),
        get_reservation_details,
    ),
    Tool(
        "get_user_details",
        "Get the details of a user, including their reservations.",
        (_USER_ID,),
        get_user_details,
    ),
    Tool("list_all_airports", "Returns a list of all available airports.", (), list_all_airports),
    Tool(
        "search_direct_flight",
        "Search for direct flights between two cities on a specific date.",
        _route("2024-01-01"),
        search_direct_flight,
    ),
    Tool(
        "search_onestop_flight",
        "Search for one-stop flights between two cities on a specific date.",
        _route("2024-05-01"),
        search_onestop_flight,
    ),
    Tool(
        "send_certificate",
        "Send a certificate to a user. Be careful!",
        (
            Arg(
                "user_id",
                "string",
                "user_id",
                "The ID of the user to book the reservation, such as 'sara_doe_496'.",
            ),
            Arg("amount", "integer", "amount", "The amount of the certificate to send."),
        ),
        send_certificate,
        kind="write",
    ),
    TRANSFER_TO_HUMAN_AGENTS,
    Tool(
        "update_reservation_baggages",
        "Update the baggage information of a reservation.",
        (
            Arg("reservation_id", "string", "reservation_id", "The reservation ID, such as 'ZFA04Y'"),
            Arg(
                "total_baggages",
                "integer",
                "count",
                "The updated total number of baggage items included in the reservation.",
            ),
            Arg(
                "nonfree_baggages",
                "integer",
                "count",
                "The updated number of non-free baggage items included in the reservation.",
            ),
            _PAYMENT_ID,
        ),
        update_reservation_baggages,
        kind="write",
    ),
    Tool(
        "update_reservation_flights",
        "Update the flight information of a reservation.",
        (
            _RESERVATION_ID,
            Arg("cabin", "string", "cabin", "The cabin class of the reservation", enum=CABINS),
            Arg(
                "flights",
                "array",
                "flights",
                "An array of objects containing details about each piece of flight in the ENTIRE new "
                "reservation. Even if the a flight segment is not changed, it should still be included "
                "in the array.",
                items=_FLIGHTS_ITEMS,
            ),
            _PAYMENT_ID,
        ),
        update_reservation_flights,
        kind="write",
    ),
    Tool(
        "update_reservation_passengers",
        "Update the passenger information of a reservation.",
        (_RESERVATION_ID, _PASSENGERS),
        update_reservation_passengers,
        kind="write",
    ),
    Tool(
        "get_flight_status",
        "Get the status of a flight.",
        (
            Arg("flight_number", "string", "flight_number", "The flight number."),
            Arg("date", "string", "date", "The date of the flight."),
        ),
        get_flight_status,
    ),
)
