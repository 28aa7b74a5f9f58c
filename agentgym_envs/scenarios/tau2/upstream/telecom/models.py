"""Telecom carrier database records (upstream ``tau2.domains.telecom.data_model``) and the
database (``db.toml``): plans, customers, lines, bills and devices, each a list."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Literal

from ..records import Record
from ..store import DocumentDB

LineStatus = Literal["Active", "Suspended", "Pending Activation", "Closed"]
BillStatus = Literal["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"]
DEFAULT_START_DATE = datetime.date(2025, 1, 1)
TODAY = datetime.date(2025, 2, 25)  # upstream's get_today()


@dataclass
class Address(Record):
    street: str
    city: str
    state: str
    zip_code: str


@dataclass
class Plan(Record):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


@dataclass(kw_only=True)
class Device(Record):
    device_id: str
    device_type: Literal["phone", "router", "tablet", "watch", "other"]
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: datetime.datetime | None = None
    last_esim_transfer_date: datetime.datetime | None = None


@dataclass(kw_only=True)
class Line(Record):
    line_id: str
    phone_number: str
    status: LineStatus = "Pending Activation"
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: datetime.date | None = None
    last_plan_change_date: datetime.date | None = None
    last_sim_replacement_date: datetime.date | None = None
    suspension_start_date: datetime.date | None = None


@dataclass
class LineItem(Record):
    description: str
    amount: float
    date: datetime.date
    item_type: str


@dataclass(kw_only=True)
class Bill(Record):
    bill_id: str
    customer_id: str
    period_start: datetime.date
    period_end: datetime.date
    issue_date: datetime.date
    total_due: float
    due_date: datetime.date
    line_items: list[LineItem] = field(default_factory=list)
    status: BillStatus = "Draft"


@dataclass
class PaymentMethod(Record):
    method_type: Literal["Credit Card", "Debit Card", "PayPal"]
    account_number_last_4: str
    expiration_date: str


@dataclass(kw_only=True)
class Customer(Record):
    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: Literal["Active", "Suspended", "Pending Verification", "Closed"] = "Pending Verification"
    payment_methods: list[PaymentMethod] = field(default_factory=list)
    line_ids: list[str] = field(default_factory=list)
    bill_ids: list[str] = field(default_factory=list)
    created_at: datetime.datetime = DEFAULT_START_DATE  # type: ignore[assignment]  # upstream's default is a date
    last_extension_date: datetime.date | None = None
    goodwill_credit_used_this_year: float = 0.0


@dataclass
class Carrier(Record):
    """The whole carrier database (upstream ``TelecomDB``)."""

    plans: list[Plan] = field(default_factory=list)
    customers: list[Customer] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    bills: list[Bill] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)


class TelecomDB(DocumentDB[Carrier]):
    """The carrier's database of an episode (``world.db.data`` is the :class:`Carrier`)."""

    ROOT = Carrier
