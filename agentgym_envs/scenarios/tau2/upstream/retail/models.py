"""Retail database records (upstream ``tau2.domains.retail.data_model``) and the database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..records import Record
from ..shared_models import Name
from ..store import Table, Tau2DB

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CancelReason = Literal["no longer needed", "ordered by mistake"]


@dataclass
class Variant(Record):
    """One purchasable variant (item) of a product."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


@dataclass
class Product(Record):
    name: str
    product_id: str
    variants: dict[str, Variant]


@dataclass
class Address(Record):
    address1: str
    address2: str
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
    balance: float


@dataclass
class Paypal(PaymentMethod, tags=("paypal",)):
    pass


@dataclass
class User(Record):
    user_id: str
    name: Name
    address: Address
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


@dataclass
class Fulfillment(Record):
    tracking_id: list[str]
    item_ids: list[str]


@dataclass
class OrderItem(Record):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


@dataclass
class OrderPayment(Record):
    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


@dataclass
class Order(Record):
    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[Fulfillment]
    payment_history: list[OrderPayment]
    cancel_reason: CancelReason | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(Tau2DB):
    """The retail database (upstream ``RetailDB``): products, users and orders."""

    TABLES = {"products": Product, "users": User, "orders": Order}

    @property
    def products(self) -> Table[Product]:
        return self.table("products")

    @property
    def users(self) -> Table[User]:
        return self.table("users")

    @property
    def orders(self) -> Table[Order]:
        return self.table("orders")
