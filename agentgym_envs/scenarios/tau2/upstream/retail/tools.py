"""The retail domain's 16 tools, with upstream's checks, error messages, effects and quirks
(``tau2.domains.retail.tools.RetailTools``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal, cast, get_args

from agentgym_envs.core.tools import Arg, Tool, ToolError

from ..arguments import upstream_model
from ..generic_tools import CALCULATE, TRANSFER_TO_HUMAN_AGENTS, render
from ..toolkit import Tau2World
from .models import (
    Address,
    CancelReason,
    GiftCard,
    Order,
    OrderPayment,
    PaymentMethod,
    Product,
    RetailDB,
    User,
    Variant,
)

World = Tau2World[RetailDB]
CANCEL_REASONS: tuple[str, ...] = get_args(CancelReason)


# ---- lookups (upstream's _get_* helpers and their messages) ----------------------------


def _order(db: RetailDB, order_id: str) -> Order:
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError("Order not found")
    return order


def _user(db: RetailDB, user_id: str) -> User:
    user = db.users.get(user_id)
    if user is None:
        raise ToolError("User not found")
    return user


def _product(db: RetailDB, product_id: str) -> Product:
    product = db.products.get(product_id)
    if product is None:
        raise ToolError("Product not found")
    return product


def _variant(db: RetailDB, product_id: str, item_id: str) -> Variant:
    variant = _product(db, product_id).variants.get(item_id)
    if variant is None:
        raise ToolError("Variant not found")
    return variant


def _payment_method(db: RetailDB, user_id: str, payment_method_id: str) -> PaymentMethod:
    method = _user(db, user_id).payment_methods.get(payment_method_id)
    if method is None:
        raise ToolError("Payment method not found")
    return method


def _add_to_gift_card(db: RetailDB, user_id: str, payment_method_id: str, amount: float) -> None:
    """Add ``amount`` to a gift card's balance, rounded to cents (no-op for other methods)."""
    if isinstance(_payment_method(db, user_id, payment_method_id), GiftCard):
        card = db.users.edit(user_id).payment_methods[payment_method_id]
        assert isinstance(card, GiftCard)
        card.balance = round(card.balance + amount, 2)


def _new_address(world: World, *fields: str) -> Address:
    """A new address from the tool's arguments (upstream builds a ``UserAddress`` model)."""
    names = ("address1", "address2", "city", "country", "state", "zip")
    return Address(**upstream_model(world, "UserAddress", Address, dict(zip(names, fields))))


def _check_item_counts(order: Order, item_ids: list[str], message: Callable[[str], str]) -> None:
    """Every id of ``item_ids`` (duplicates counted) must be an item of ``order``."""
    in_order = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > in_order.count(item_id):
            raise ToolError(message(item_id))


def _price_difference(
    db: RetailDB, order: Order, item_ids: list[str], new_item_ids: list[str], allow_same: bool
) -> tuple[float, Variant | None]:
    """Sum of (new price - old price) over the pairs, and the last new variant."""
    diff_price: float = 0
    variant = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if not allow_same and item_id == new_item_id:
            raise ToolError("The new item id should be different from the old item id")
        item = next((item for item in order.items if item.item_id == item_id), None)
        if item is None:
            raise ToolError(f"Item {item_id} not found")
        variant = _variant(db, item.product_id, new_item_id)
        if not variant.available:
            raise ToolError(f"New item {new_item_id} not found or available")
        diff_price += variant.price - item.price
    return diff_price, variant


# ---- READ ------------------------------------------------------------------------------


def find_user_id_by_email(world: World, email: str) -> str:
    for user_id, user in world.db.users.items():
        if user.email.lower() == email.lower():
            return user_id
    raise ToolError("User not found")


def find_user_id_by_name_zip(world: World, first_name: str, last_name: str, zip: str) -> str:
    for user_id, user in world.db.users.items():
        if (
            user.name.first_name.lower() == first_name.lower()
            and user.name.last_name.lower() == last_name.lower()
            and user.address.zip == zip
        ):
            return user_id
    raise ToolError("User not found")


def get_order_details(world: World, order_id: str) -> str:
    return render(_order(world.db, order_id))


def get_product_details(world: World, product_id: str) -> str:
    return render(_product(world.db, product_id))


def get_item_details(world: World, item_id: str) -> str:
    for product in world.db.products.values():
        if item_id in product.variants:
            return render(product.variants[item_id])
    raise ToolError("Item not found")


def get_user_details(world: World, user_id: str) -> str:
    return render(_user(world.db, user_id))


def list_all_product_types(world: World) -> str:
    return json.dumps({p.name: p.product_id for p in world.db.products.values()}, sort_keys=True)


# ---- WRITE -----------------------------------------------------------------------------


def cancel_pending_order(world: World, order_id: str, reason: str) -> str:
    db = world.db
    if _order(db, order_id).status != "pending":
        raise ToolError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError("Invalid reason")
    order = db.orders.edit(order_id)
    refunds = []
    for payment in order.payment_history:
        refunds.append(OrderPayment("refund", payment.amount, payment.payment_method_id))
        _add_to_gift_card(db, order.user_id, payment.payment_method_id, payment.amount)
    order.status = "cancelled"
    order.cancel_reason = cast(CancelReason, reason)
    order.payment_history.extend(refunds)
    return render(order)


def exchange_delivered_order_items(
    world: World, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    db = world.db
    order = _order(db, order_id)
    if order.status != "delivered":
        raise ToolError("Non-delivered order cannot be exchanged")
    _check_item_counts(order, item_ids, lambda item_id: f"Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match.")
    diff_price, _ = _price_difference(db, order, item_ids, new_item_ids, allow_same=True)
    diff_price = round(diff_price, 2)
    method = _payment_method(db, order.user_id, payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff_price:
        raise ToolError("Insufficient gift card balance to pay for the price difference")
    order = db.orders.edit(order_id)
    order.status = "exchange requested"
    order.exchange_items = sorted(item_ids)
    order.exchange_new_items = sorted(new_item_ids)
    order.exchange_payment_method_id = payment_method_id
    order.exchange_price_difference = diff_price
    return render(order)


def modify_pending_order_address(
    world: World, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    if "pending" not in _order(world.db, order_id).status:
        raise ToolError("Non-pending order cannot be modified")
    order = world.db.orders.edit(order_id)
    order.address = _new_address(world, address1, address2, city, country, state, zip)
    return render(order)


def modify_pending_order_items(
    world: World, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> str:
    db = world.db
    order = _order(db, order_id)
    if order.status != "pending":
        raise ToolError("Non-pending order cannot be modified")
    _check_item_counts(order, item_ids, lambda item_id: f"{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match")
    diff_price, variant = _price_difference(db, order, item_ids, new_item_ids, allow_same=False)
    method = _payment_method(db, order.user_id, payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff_price:
        raise ToolError("Insufficient gift card balance to pay for the new item")
    order = db.orders.edit(order_id)
    kind: Literal["payment", "refund"] = "payment" if diff_price > 0 else "refund"
    order.payment_history.append(OrderPayment(kind, float(abs(diff_price)), payment_method_id))
    _add_to_gift_card(db, order.user_id, payment_method_id, -diff_price)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next((item for item in order.items if item.item_id == item_id), None)
        if item is None:
            raise ToolError(f"Item {item_id} not found")
        assert variant is not None
        # upstream quirk: every modified line gets the price and options of the LAST new variant
        item.item_id = new_item_id
        item.price = variant.price
        item.options = dict(variant.options)
    order.status = "pending (item modified)"
    return render(order)


def modify_pending_order_payment(world: World, order_id: str, payment_method_id: str) -> str:
    db = world.db
    order = _order(db, order_id)
    if "pending" not in order.status:
        raise ToolError("Non-pending order cannot be modified")
    method = _payment_method(db, order.user_id, payment_method_id)
    history = order.payment_history
    if len(history) != 1 or history[0].transaction_type != "payment":
        raise ToolError("There should be exactly one payment for a pending order")
    old_method_id = history[0].payment_method_id
    if old_method_id == payment_method_id:
        raise ToolError("The new payment method should be different from the current one")
    amount = history[0].amount
    if isinstance(method, GiftCard) and method.balance < amount:
        raise ToolError("Insufficient gift card balance to pay for the order")
    order = db.orders.edit(order_id)
    order.payment_history.extend(
        [OrderPayment("payment", amount, payment_method_id), OrderPayment("refund", amount, old_method_id)]
    )
    _add_to_gift_card(db, order.user_id, payment_method_id, -amount)
    _add_to_gift_card(db, order.user_id, old_method_id, amount)
    return render(order)


def modify_user_address(
    world: World, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> str:
    _user(world.db, user_id)
    user = world.db.users.edit(user_id)
    user.address = _new_address(world, address1, address2, city, country, state, zip)
    return render(user)


def return_delivered_order_items(
    world: World, order_id: str, item_ids: list[str], payment_method_id: str
) -> str:
    db = world.db
    order = _order(db, order_id)
    if order.status != "delivered":
        raise ToolError("Non-delivered order cannot be returned")
    method = _payment_method(db, order.user_id, payment_method_id)
    if not order.payment_history:
        raise ToolError("list index out of range")  # what upstream's history[0] raises
    if not isinstance(method, GiftCard) and payment_method_id != order.payment_history[0].payment_method_id:
        raise ToolError("Payment method should be the original payment method")
    _check_item_counts(order, item_ids, lambda item_id: "Some item not found")
    order = db.orders.edit(order_id)
    order.status = "return requested"
    order.return_items = sorted(item_ids)
    order.return_payment_method_id = payment_method_id
    return render(order)


# ---- declarations ----------------------------------------------------------------------

_ORDER_ID = Arg(
    "order_id",
    "string",
    "order_id",
    "The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.",
)
_USER_ID = Arg("user_id", "string", "user_id", "The user id, such as 'sara_doe_496'.")
_PAYMENT_METHOD_ID = Arg(
    "payment_method_id",
    "string",
    "payment_method_id",
    "The payment method id to pay or receive refund for the item price difference, such as "
    "'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.",
)
_STRINGS = {"type": "string"}
_ADDRESS = (
    Arg("address1", "string", "address1", "The first line of the address, such as '123 Main St'."),
    Arg("address2", "string", "address2", "The second line of the address, such as 'Apt 1' or ''."),
    Arg("city", "string", "city", "The city, such as 'San Francisco'."),
    Arg("state", "string", "state", "The state, such as 'CA'."),
    Arg("country", "string", "country", "The country, such as 'USA'."),
    Arg("zip", "string", "zip", "The zip code, such as '12345'."),
)


def _item_ids(name: str, purpose: str) -> Arg:
    """An ``item_ids`` / ``new_item_ids`` argument: the ids of the items to be ``purpose``."""
    description = f"The item ids to be {purpose}, each such as '1008292230'. "
    description += "There could be duplicate items in the list."
    if name == "new_item_ids":
        description += (
            " Each new item id should match the item id in the same position and be of the same product."
        )
    return Arg(name, "array", "item_ids", description, items=_STRINGS)


_CONFIRM = (
    "The agent needs to explain the {} detail and ask for explicit user confirmation (yes/no) to proceed."
)

TOOLS: tuple[Tool, ...] = (
    CALCULATE,
    Tool(
        "cancel_pending_order",
        "Cancel a pending order. If the order is already processed or delivered, it cannot be cancelled. "
        + _CONFIRM.format("cancellation")
        + " If the user confirms, the order status will be changed to 'cancelled' and the payment will be "
        "refunded. The refund will be added to the user's gift card balance immediately if the payment was "
        "made using a gift card, otherwise the refund would take 5-7 business days to process. The function "
        "returns the order details after the cancellation.",
        (
            _ORDER_ID,
            Arg(
                "reason",
                "string",
                "reason",
                "The reason for cancellation, which should be either 'no longer needed' or "
                "'ordered by mistake'.",
            ),
        ),
        cancel_pending_order,
        kind="write",
    ),
    Tool(
        "exchange_delivered_order_items",
        "Exchange items in a delivered order to new items of the same product type. For a delivered order, "
        "return or exchange can be only done once by the agent. " + _CONFIRM.format("exchange"),
        (
            _ORDER_ID,
            _item_ids("item_ids", "exchanged"),
            _item_ids("new_item_ids", "exchanged for"),
            _PAYMENT_METHOD_ID,
        ),
        exchange_delivered_order_items,
        kind="write",
    ),
    Tool(
        "find_user_id_by_name_zip",
        "Find user id by first name, last name, and zip code. If the user is not found, the function will "
        "return an error message. By default, find user id by email, and only call this function if the user "
        "is not found by email or cannot remember email.",
        (
            Arg("first_name", "string", "first_name", "The first name of the customer, such as 'John'."),
            Arg("last_name", "string", "last_name", "The last name of the customer, such as 'Doe'."),
            Arg("zip", "string", "zip", "The zip code of the customer, such as '12345'."),
        ),
        find_user_id_by_name_zip,
    ),
    Tool(
        "find_user_id_by_email",
        "Find user id by email. If the user is not found, the function will return an error message.",
        (Arg("email", "string", "email", "The email of the user, such as 'something@example.com'."),),
        find_user_id_by_email,
    ),
    Tool("get_order_details", "Get the status and details of an order.", (_ORDER_ID,), get_order_details),
    Tool(
        "get_product_details",
        "Get the inventory details of a product.",
        (
            Arg(
                "product_id",
                "string",
                "product_id",
                "The product id, such as '6086499569'. Be careful the product id is different from the "
                "item id.",
            ),
        ),
        get_product_details,
    ),
    Tool(
        "get_item_details",
        "Get the inventory details of an item.",
        (
            Arg(
                "item_id",
                "string",
                "item_id",
                "The item id, such as '6086499569'. Be careful the item id is different from the product id.",
            ),
        ),
        get_item_details,
    ),
    Tool(
        "get_user_details",
        "Get the details of a user, including their orders.",
        (_USER_ID,),
        get_user_details,
    ),
    Tool(
        "list_all_product_types",
        "List the name and product id of all product types. Each product type has a variety of different "
        "items with unique item ids and options. There are only 50 product types in the store.",
        (),
        list_all_product_types,
    ),
    Tool(
        "modify_pending_order_address",
        "Modify the shipping address of a pending order. " + _CONFIRM.format("modification"),
        (_ORDER_ID, *_ADDRESS),
        modify_pending_order_address,
        kind="write",
    ),
    Tool(
        "modify_pending_order_items",
        "Modify items in a pending order to new items of the same product type. For a pending order, this "
        "function can only be called once. " + _CONFIRM.format("exchange"),
        (
            _ORDER_ID,
            _item_ids("item_ids", "modified"),
            _item_ids("new_item_ids", "modified for"),
            _PAYMENT_METHOD_ID,
        ),
        modify_pending_order_items,
        kind="write",
    ),
    Tool(
        "modify_pending_order_payment",
        "Modify the payment method of a pending order. " + _CONFIRM.format("modification"),
        (_ORDER_ID, _PAYMENT_METHOD_ID),
        modify_pending_order_payment,
        kind="write",
    ),
    Tool(
        "modify_user_address",
        "Modify the default address of a user. " + _CONFIRM.format("modification"),
        (_USER_ID, *_ADDRESS),
        modify_user_address,
        kind="write",
    ),
    Tool(
        "return_delivered_order_items",
        "Return some items of a delivered order. The order status will be changed to 'return requested'. "
        + _CONFIRM.format("return")
        + " The user will receive follow-up email for how and where to return the item.",
        (
            _ORDER_ID,
            _item_ids("item_ids", "returned"),
            _PAYMENT_METHOD_ID,
        ),
        return_delivered_order_items,
        kind="write",
    ),
    TRANSFER_TO_HUMAN_AGENTS,
)
