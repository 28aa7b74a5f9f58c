"""How the carrier's database and the customer's phone stay in step (upstream
``TelecomEnvironment.sync_tools``), and the telecom policy text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentgym_envs.core.tools import ToolError

from ..files import require_file
from ..toolkit import Tau2World
from .tools import bill_by_id, bills_awaiting_payment, carrier, customer_by_phone, line_by_phone, plan_by_id
from .user_models import PaymentRequest


def sync(world: Tau2World[Any]) -> None:
    """After every call: the phone learns whether its line is active, may roam and is over its
    data limit; a paid payment request marks its bill paid; a bill awaiting payment becomes
    the phone's payment request. Raises :class:`ToolError` when the phone's number has no
    line or its plan is unknown (a broken task)."""
    surroundings = world.user_db.data.surroundings
    phone = surroundings.phone_number
    if phone is None:
        return
    db = carrier(world)
    try:
        line = line_by_phone(db, phone)
    except ToolError:
        raise ToolError(f"Wrong scenario, line not found for phone number: {phone}") from None
    surroundings.line_active = line.status == "Active"
    surroundings.roaming_allowed = line.roaming_enabled
    try:
        plan = plan_by_id(db, line.plan_id)
    except ToolError:
        raise ToolError(f"Wrong scenario, invalid plan id ({line.plan_id}) for the phone number {phone}") from None
    surroundings.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb
    request = surroundings.payment_request
    if request is not None and request.paid:
        bill_by_id(db, request.bill_id).status = "Paid"
        surroundings.payment_request = request = None
    if request is None:
        waiting = bills_awaiting_payment(db, customer_by_phone(db, phone))
        if waiting:
            surroundings.payment_request = PaymentRequest(waiting[0].bill_id, waiting[0].total_due)


def policy(folder: Path, solo: bool) -> str:
    """Upstream's telecom policy: the main policy (``main_policy_solo.md`` in solo mode) and the
    tech-support manual, each in its tag."""
    main = require_file(folder / ("main_policy_solo.md" if solo else "main_policy.md"), "policy").read_text(encoding="utf-8")
    manual = require_file(folder / "tech_support_manual.md", "policy").read_text(encoding="utf-8")
    return (f"<main_policy>\n{main}\n</main_policy>\n"
            f"<tech_support_policy>\n{manual}\n</tech_support_policy>")
