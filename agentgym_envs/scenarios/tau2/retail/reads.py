"""The reads the retail expert makes first: they reveal the entities its calls need."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolCall

from ..expert import argument_values
from ..user import UserFacts


def retail_reads(actions: list[Any], db: Any, facts: UserFacts) -> list[ToolCall]:
    """Find the user (from what it said), read it, the orders and the products the
    reference calls touch (and the catalogue, for a product outside those orders): this
    reveals their ids, items, variants and payment methods."""
    orders = [o for o in argument_values(actions, "order_id") if o in db.orders]
    users = argument_values(actions, "user_id") + [db.orders[o].user_id for o in orders]
    reads: list[ToolCall] = []
    if users and facts.user_id != users[0]:
        if facts.email:
            reads.append(ToolCall("find_user_id_by_email", {"email": facts.email}))
        elif facts.first_name and facts.last_name and facts.zip:
            reads.append(ToolCall("find_user_id_by_name_zip", {"first_name": facts.first_name, "last_name": facts.last_name, "zip": facts.zip}))
    reads += [ToolCall("get_user_details", {"user_id": u}) for u in dict.fromkeys(users)]
    reads += [ToolCall("get_order_details", {"order_id": o}) for o in orders]
    items = {i for a in actions for key in ("item_ids", "new_item_ids") for i in a.arguments.get(key) or () if isinstance(i, str)}
    products = [pid for pid, p in db.products.items() if items & set(p.variants)]
    products += [a.arguments["product_id"] for a in actions if isinstance(a.arguments.get("product_id"), str)]
    in_orders = {item.product_id for o in orders for item in db.orders[o].items}
    if set(products) - in_orders:
        reads.append(ToolCall("list_all_product_types", {}))
    reads += [ToolCall("get_product_details", {"product_id": pid}) for pid in dict.fromkeys(products)]
    return reads
