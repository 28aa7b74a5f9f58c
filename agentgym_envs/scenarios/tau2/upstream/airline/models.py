"""Airline database records (upstream ``tau2.domains.airline.data_model``) and the database."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from ..records import Record
from ..shared_models import Name
from ..store import Table, Tau2DB

Cabin = Literal["business", "economy", "basic_economy"]
FlightType = Literal["round_trip", "one_way"]
Insurance = Literal["yes", "no"]
CABINS: tuple[str, ...] = get_args(Cabin)
FLIGHT_TYPES: tuple[str, ...] = get_args(FlightType)
INSURANCE: tuple[str, ...] = get_args(Insurance)


@dataclass(kw_only=True)
class Address(Record):
    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


@dataclass
class PaymentMethod(Record):
    """A saved payment method; loading picks the kind from ``source``."""

    TAG_FIELD = "source"
    source: str
    id: str


@dataclass
class CreditCard(PaymentMethod, tags=("credit_card",)):
    brand: str
    last_four: str


@dataclass
class GiftCard(PaymentMethod, tags=("gift_card",)):
    amount: float


@dataclass
class Certificate(PaymentMethod, tags=("certificate",)):
    amount: float


@dataclass
class Passenger(Record):
    first_name: str
    last_name: str
    dob: str


@dataclass
class FlightDate(Record):
    """The status of a flight on one date; loading picks the kind from ``status``."""

    TAG_FIELD = "status"
    status: str


@dataclass
class FlightDateAvailable(FlightDate, tags=("available",)):
    available_seats: dict[str, int]
    prices: dict[str, int]


@dataclass
class FlightDateLanded(FlightDate, tags=("landed",)):
    actual_departure_time_est: str
    actual_arrival_time_est: str


@dataclass
class FlightDateCancelled(FlightDate, tags=("cancelled",)):
    pass


@dataclass
class FlightDateEstimated(FlightDate, tags=("delayed", "on time")):
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


@dataclass
class FlightDateFlying(FlightDate, tags=("flying",)):
    actual_departure_time_est: str
    estimated_arrival_time_est: str


@dataclass
class Flight(Record):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDate]


@dataclass
class DirectFlight(Record):
    """A search result: a flight available on a date (upstream ``DirectFlight``)."""

    flight_number: str
    origin: str
    destination: str
    status: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None
    available_seats: dict[str, int]
    prices: dict[str, int]


@dataclass
class ReservationFlight(Record):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


@dataclass
class FlightInfo(Record):
    """A flight segment as tools take it: a flight number and a date."""

    flight_number: str
    date: str


@dataclass
class Payment(Record):
    payment_id: str
    amount: int


@dataclass
class User(Record):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


@dataclass
class Reservation(Record):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: Cabin
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


@dataclass
class AirportCode(Record):
    iata: str
    city: str


class AirlineDB(Tau2DB):
    """The airline database (upstream ``FlightDB``): flights, users and reservations."""

    TABLES = {"flights": Flight, "users": User, "reservations": Reservation}

    @property
    def flights(self) -> Table[Flight]:
        return self.table("flights")

    def flight_numbers(self, origin: str | None, destination: str | None) -> Iterable[str]:
        """The numbers of the flights that may go from ``origin`` to ``destination`` (None: any),
        in the table's order: from the snapshot's index by origin or destination (no tool changes
        either) while the table holds the snapshot's flights, else every flight."""
        flights = self.flights
        if flights.added or (origin is None and destination is None):
            return flights.keys()
        field, value = ("origin", origin) if origin is not None else ("destination", destination)
        return self.snapshot.grouped("flights", field).get(value, ())

    @property
    def users(self) -> Table[User]:
        return self.table("users")

    @property
    def reservations(self) -> Table[Reservation]:
        return self.table("reservations")
