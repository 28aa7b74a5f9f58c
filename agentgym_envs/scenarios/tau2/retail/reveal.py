"""The entities retail tool outputs reveal (see :mod:`..reveal`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..reveal import Rows, json_output, reveal_calculate


def _retail_user(user: Mapping[str, Any]) -> Rows:
    rows: Rows = [("user_id", user["user_id"])]
    rows += [("order_id", order_id) for order_id in user.get("orders", [])]
    rows += [("payment_method_id", pid) for pid in user.get("payment_methods", {})]
    return rows


def _retail_order(order: Mapping[str, Any]) -> Rows:
    rows: Rows = [("order_id", order["order_id"]), ("user_id", order["user_id"])]
    for item in order.get("items", []):
        rows += [("item_id", item["item_id"]), ("product_id", item["product_id"])]
    rows += [("payment_method_id", p["payment_method_id"]) for p in order.get("payment_history", [])]
    return rows


def _retail_product(product: Mapping[str, Any]) -> Rows:
    rows: Rows = [("product_id", product["product_id"])]
    rows += [("item_id", item_id) for item_id, v in product.get("variants", {}).items() if v.get("available")]
    return rows


RETAIL_READERS: dict[str, Callable[[Any], Rows]] = {
    "get_user_details": _retail_user,
    "get_order_details": _retail_order,
    "get_product_details": _retail_product,
    "get_item_details": lambda data: [("item_id", data["item_id"])],
}


def reveal_retail(name: str, arguments: Mapping[str, Any], output: str) -> Rows:
    """Entities revealed by a successful retail call."""
    if name == "calculate":
        return reveal_calculate(arguments, output)
    if name in ("find_user_id_by_email", "find_user_id_by_name_zip"):
        return [("user_id", output)]
    if name == "list_all_product_types":
        catalogue = json_output(output)
        return [("product_id", pid) for pid in catalogue.values()] if isinstance(catalogue, dict) else []
    reader = RETAIL_READERS.get(name)
    data = json_output(output) if reader is not None else None
    return reader(data) if isinstance(data, dict) else []
