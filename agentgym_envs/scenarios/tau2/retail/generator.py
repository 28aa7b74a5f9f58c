"""Seeded retail tasks: cancel, modify address / payment / items of a pending order,
exchange or return items of a delivered order, drawn from the retail database.

A draw picks a kind, then an eligible (user, order) of the split's users; the scripted
solver writes the reference calls (identify the user by email or name + zip, read the
user, the order and the products concerned, make the one write the policy allows) and the user's
instructions, which name the order and describe the items by product and options.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from functools import cached_property
from typing import Any

from ..generator import Solved, make_task, task_rng, user_split
from ..upstream.retail.models import GiftCard, Order, RetailDB, User
from ..upstream.retail.tools import CANCEL_REASONS
from ..user import UserFacts

KINDS = ("cancel", "modify_address", "modify_payment", "modify_items", "exchange", "return")
ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")


def _options(options: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in options.items())


class RetailTaskGenerator:
    """Draws retail tasks from ``db`` (read only): ``generate(split, index)`` is pure; ``version``
    fixes which users each split holds (:func:`..generator.user_split`)."""

    kinds = KINDS
    domain = "retail"

    def __init__(self, db: RetailDB, version: int = 0) -> None:
        self.db, self.version = db, version

    def _split(self, user_id: str) -> str:
        return user_split(user_id, self.version)

    @cached_property
    def _candidates(self) -> dict[tuple[str, str], list[str]]:
        """Order ids eligible for each (split, kind)."""
        found: dict[tuple[str, str], list[str]] = {}
        for order_id in sorted(self.db.orders.keys()):
            order = self.db.orders[order_id]
            user = self.db.users.get(order.user_id)
            if user is None:
                continue
            split = self._split(user.user_id)
            for kind in KINDS:
                if self._eligible(kind, order, user):
                    found.setdefault((split, kind), []).append(order_id)
        return found

    def split_users(self, split: str, kinds: tuple[str, ...] = KINDS) -> set[str]:
        """The users the tasks of ``split`` and ``kinds`` can be about (those with an eligible order)."""
        return {self.db.orders[oid].user_id for kind in kinds for oid in self._candidates.get((split, kind), ())}

    @cached_property
    def _name_zip_counts(self) -> Counter[tuple[str, str, str]]:
        return Counter(
            (u.name.first_name.lower(), u.name.last_name.lower(), u.address.zip) for u in self.db.users.values()
        )

    @cached_property
    def _split_addresses(self) -> dict[str, list[dict[str, str]]]:
        addresses: dict[str, list[dict[str, str]]] = {}
        for user_id in sorted(self.db.users.keys()):
            address = self.db.users[user_id].address.to_dict()
            addresses.setdefault(self._split(user_id), []).append({k: address[k] for k in ADDRESS_FIELDS})
        return addresses

    def _changeable(self, order: Order) -> list[int]:
        """Positions of items whose product has another available variant."""
        return [
            i for i, item in enumerate(order.items)
            if any(v.available and v.item_id != item.item_id for v in self.db.products[item.product_id].variants.values())
        ]

    def _eligible(self, kind: str, order: Order, user: User) -> bool:
        if kind in ("cancel", "modify_address", "modify_items"):
            return order.status == "pending" and (kind != "modify_items" or bool(self._changeable(order)))
        if kind == "modify_payment":
            return order.status == "pending" and len(order.payment_history) == 1 and bool(self._other_methods(order, user))
        if kind == "exchange":
            return order.status == "delivered" and bool(self._changeable(order))
        return order.status == "delivered" and order.payment_history[0].payment_method_id in user.payment_methods

    def _other_methods(self, order: Order, user: User) -> list[str]:
        paid = order.payment_history[0]
        return [
            pid for pid, m in sorted(user.payment_methods.items())
            if pid != paid.payment_method_id and (not isinstance(m, GiftCard) or m.balance >= paid.amount)
        ]

    def generate(self, split: str, index: int, kinds: tuple[str, ...] = KINDS) -> Any:
        """The task ``"<split>-<index>"`` of one of ``kinds`` (all by default)."""
        rng = task_rng(self.domain, split, index)
        while True:
            kind = rng.choice(kinds)
            orders = self._candidates.get((split, kind))
            if orders:
                solved = self._solve(rng, kind, self.db.orders[rng.choice(orders)])
                if solved is not None:
                    return make_task(self.domain, split, index, solved)

    # ---- the scripted solver ---------------------------------------------------------
    def _identify(self, rng: random.Random, user: User) -> tuple[UserFacts, str, tuple[str, dict[str, Any]]]:
        key = (user.name.first_name.lower(), user.name.last_name.lower(), user.address.zip)
        if rng.random() < 0.5 and self._name_zip_counts[key] == 1:
            facts = UserFacts(first_name=user.name.first_name, last_name=user.name.last_name, zip=user.address.zip)
            known = f"You are {user.name.first_name} {user.name.last_name} in zip code {user.address.zip}."
            call = ("find_user_id_by_name_zip", {"first_name": user.name.first_name, "last_name": user.name.last_name, "zip": user.address.zip})
            return facts, known, call
        facts = UserFacts(first_name=user.name.first_name, last_name=user.name.last_name, email=user.email)
        return facts, f"You are {user.name.first_name} {user.name.last_name}; your email is {user.email}.", (
            "find_user_id_by_email", {"email": user.email})

    def _solve(self, rng: random.Random, kind: str, order: Order) -> Solved | None:
        user = self.db.users[order.user_id]
        facts, known, identify = self._identify(rng, user)
        facts = replace(facts, order_ids=(order.order_id,))
        calls: list[tuple[str, dict[str, Any]]] = [
            identify,
            ("get_user_details", {"user_id": user.user_id}),
            ("get_order_details", {"order_id": order.order_id}),
        ]
        oid = order.order_id
        instructions = "Answer the agent's questions with what you know and confirm the change when asked."
        if kind == "cancel":
            reason = rng.choice(CANCEL_REASONS)
            why = "it is no longer needed" if reason == "no longer needed" else "you ordered it by mistake"
            calls.append(("cancel_pending_order", {"order_id": oid, "reason": reason}))
            return Solved(kind, f"You want to cancel your pending order {oid} because {why}.", known, instructions, facts, calls)
        if kind == "modify_address":
            current = self._address(order)
            address = rng.choice([a for a in self._split_addresses[self._split(user.user_id)] if a != current] or [None])
            if address is None:
                return None
            facts = replace(facts, new_address=address)
            calls.append(("modify_pending_order_address", {"order_id": oid, **address}))
            where = ", ".join(address[k] for k in ADDRESS_FIELDS if address[k])
            return Solved(kind, f"You want the shipping address of your pending order {oid} changed to {where}.", known, instructions, facts, calls)
        if kind == "modify_payment":
            method = rng.choice(self._other_methods(order, user))
            calls.append(("modify_pending_order_payment", {"order_id": oid, "payment_method_id": method}))
            return Solved(kind, f"You want to pay for your pending order {oid} with your payment method {method} instead.", known, instructions, facts, calls)
        if kind == "return":
            positions = sorted(rng.sample(range(len(order.items)), rng.randint(1, min(3, len(order.items)))))
            items = [order.items[i] for i in positions]
            method = order.payment_history[0].payment_method_id
            calls.append(("return_delivered_order_items", {"order_id": oid, "item_ids": [i.item_id for i in items], "payment_method_id": method}))
            what = "; ".join(f"the {i.name} ({_options(i.options)})" for i in items)
            return Solved(kind, f"You want to return {what} from your delivered order {oid}, refunded to the original "
                                f"payment method {method}.", known, instructions, facts, calls)
        return self._solve_item_change(rng, kind, order, user, facts, known, instructions, calls)

    def _solve_item_change(self, rng: random.Random, kind: str, order: Order, user: User, facts: UserFacts,
                           known: str, instructions: str, calls: list[tuple[str, dict[str, Any]]]) -> Solved | None:
        changeable = self._changeable(order)
        positions = sorted(rng.sample(changeable, rng.randint(1, min(2, len(changeable)))))
        items = [order.items[i] for i in positions]
        new_variants = []
        for item in items:
            variants = self.db.products[item.product_id].variants
            new_variants.append(rng.choice([v for _, v in sorted(variants.items()) if v.available and v.item_id != item.item_id]))
        difference = sum(v.price - i.price for v, i in zip(new_variants, items))
        method = self._payment_for(order, user, difference)
        if method is None:
            return None
        for product_id in dict.fromkeys(i.product_id for i in items):
            calls.append(("get_product_details", {"product_id": product_id}))
        tool = "modify_pending_order_items" if kind == "modify_items" else "exchange_delivered_order_items"
        calls.append((tool, {
            "order_id": order.order_id,
            "item_ids": [i.item_id for i in items],
            "new_item_ids": [v.item_id for v in new_variants],
            "payment_method_id": method,
        }))
        what = "; ".join(f"the {i.name} ({_options(i.options)}) for the one with {_options(v.options)}" for i, v in zip(items, new_variants))
        state = "pending" if kind == "modify_items" else "delivered"
        verb = "change" if kind == "modify_items" else "exchange"
        reason = f"In your {state} order {order.order_id} you want to {verb} {what}. Any price difference goes through {method}."
        return Solved(kind, reason, known, instructions, facts, calls)

    @staticmethod
    def _address(order: Order) -> dict[str, str]:
        address = order.address.to_dict()
        return {k: address[k] for k in ADDRESS_FIELDS}

    @staticmethod
    def _payment_for(order: Order, user: User, difference: float) -> str | None:
        """The original payment method if it can pay ``difference``, else another that can."""
        original = order.payment_history[0].payment_method_id
        ordered = [original] + sorted(p for p in user.payment_methods if p != original)
        for pid in ordered:
            method = user.payment_methods.get(pid)
            if method is not None and (not isinstance(method, GiftCard) or method.balance >= difference):
                return pid
        return None
