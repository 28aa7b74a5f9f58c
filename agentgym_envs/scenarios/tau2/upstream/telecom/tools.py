"""The carrier agent's 13 tools and the carrier-side functions tasks call to set up and check
an episode, with upstream's checks, messages and effects (``tau2.domains.telecom.tools.TelecomTools``)."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from agentgym_envs.core.tools import Arg, Tool, ToolError

from ..generic_tools import TRANSFER_TO_HUMAN_AGENTS, render
from ..toolkit import Tau2World
from .models import TODAY, Bill, Carrier, Customer, Device, Line, LineItem, Plan

World = Tau2World[Any]


def carrier(world: World) -> Carrier:
    """The episode's carrier database."""
    return world.db.data


# ---- lookups (upstream's _get_* helpers and their messages) ----------------------------


def _find(records: Iterable[Any], field: str, value: str, label: str) -> Any:
    """The record whose ``field`` is ``value``, else upstream's "<label> <value> not found"."""
    for record in records:
        if getattr(record, field) == value:
            return record
    raise ToolError(f"{label} {value} not found")


def customer_by_id(db: Carrier, customer_id: str) -> Customer:
    return _find(db.customers, "customer_id", customer_id, "Customer with ID")


def line_by_id(db: Carrier, line_id: str) -> Line:
    return _find(db.lines, "line_id", line_id, "Line with ID")


def line_by_phone(db: Carrier, phone_number: str) -> Line:
    return _find(db.lines, "phone_number", phone_number, "Line with phone number")


def plan_by_id(db: Carrier, plan_id: str) -> Plan:
    return _find(db.plans, "plan_id", plan_id, "Plan with ID")


def _device_by_id(db: Carrier, device_id: str) -> Device:
    return _find(db.devices, "device_id", device_id, "Device with ID")


def bill_by_id(db: Carrier, bill_id: str) -> Bill:
    return _find(db.bills, "bill_id", bill_id, "Bill with ID")


def _target_line(db: Carrier, customer_id: str, line_id: str) -> Line:
    customer = customer_by_id(db, customer_id)
    if line_id not in customer.line_ids:
        raise ToolError(f"Line {line_id} not found for customer {customer_id}")
    return line_by_id(db, line_id)


def customer_by_phone(db: Carrier, phone_number: str) -> Customer:
    for customer in db.customers:
        if customer.phone_number == phone_number:
            return customer
        for line_id in customer.line_ids:
            if line_by_id(db, line_id).phone_number == phone_number:
                return customer
    raise ToolError(f"Customer with phone number {phone_number} not found")


def bills_awaiting_payment(db: Carrier, customer: Customer) -> list[Bill]:
    """The customer's bills in status "Awaiting Payment", in ``bill_ids`` order."""
    return [bill for bill in (bill_by_id(db, b) for b in customer.bill_ids) if bill.status == "Awaiting Payment"]


# ---- tools -----------------------------------------------------------------------------


def get_customer_by_phone(world: World, phone_number: str) -> str:
    return render(customer_by_phone(carrier(world), phone_number))


def get_customer_by_id(world: World, customer_id: str) -> str:
    return render(customer_by_id(carrier(world), customer_id))


def get_customer_by_name(world: World, full_name: str, dob: str) -> str:
    return render([c for c in carrier(world).customers
                   if c.full_name.lower() == full_name.lower() and c.date_of_birth == dob])


_BY_PREFIX: dict[str, Callable[[Carrier, str], Any]] = {
    "L": line_by_id, "D": _device_by_id, "B": bill_by_id, "C": customer_by_id, "P": plan_by_id,
}


def get_details_by_id(world: World, id: str) -> str:  # noqa: A002  (upstream's argument name)
    for prefix, lookup in _BY_PREFIX.items():
        if id.startswith(prefix):
            return render(lookup(carrier(world), id))
    raise ToolError(f"Unknown ID format or type: {id}")


def suspend_line(world: World, customer_id: str, line_id: str, reason: str) -> str:
    line = _target_line(carrier(world), customer_id, line_id)
    if line.status != "Active":
        raise ToolError("Line must be active to suspend")
    line.status, line.suspension_start_date = "Suspended", TODAY
    return render({"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line})


def resume_line(world: World, customer_id: str, line_id: str) -> str:
    line = _target_line(carrier(world), customer_id, line_id)
    if line.status not in ("Suspended", "Pending Activation"):
        raise ToolError("Line must be suspended to resume")
    line.status, line.suspension_start_date = "Active", None
    return render({"message": "Line resumed successfully", "line": line})


def get_bills_for_customer(world: World, customer_id: str, limit: int = 12) -> str:
    db = carrier(world)
    bills = [bill_by_id(db, b) for b in customer_by_id(db, customer_id).bill_ids]
    return render(sorted(bills, key=lambda bill: bill.issue_date, reverse=True)[:limit])


def send_payment_request(world: World, customer_id: str, bill_id: str) -> str:
    db = carrier(world)
    customer = customer_by_id(db, customer_id)
    if bills_awaiting_payment(db, customer):
        raise ToolError("A bill is already awaiting payment for this customer")
    if bill_id not in customer.bill_ids:
        raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
    bill = bill_by_id(db, bill_id)
    bill.status = "Awaiting Payment"
    return f"Payment request sent to the customer for bill {bill.bill_id}"


def _next_month_start(day: datetime.date) -> datetime.date:
    return (day.replace(day=1) + datetime.timedelta(days=32)).replace(day=1)


def _apply_one_time_charge(db: Carrier, customer_id: str, amount: float, description: str) -> None:
    """Add a charge to the customer's draft bill, creating the bill when there is none. Upstream
    names a new bill ``B`` + 8 random hex digits (``uuid4``); here the digits come from a hash
    of the customer and the number of bills, so that episodes are reproducible."""
    customer = customer_by_id(db, customer_id)
    draft = next((bill for bill in (bill_by_id(db, b) for b in customer.bill_ids) if bill.status == "Draft"), None)
    if draft is None:
        start = _next_month_start(TODAY)
        bill_id = "B" + hashlib.sha256(f"{customer_id}/{len(db.bills)}".encode()).hexdigest()[:8]
        draft = Bill(
            bill_id=bill_id, customer_id=customer_id, period_start=start,
            period_end=_next_month_start(start) - datetime.timedelta(days=1), issue_date=start, total_due=0.0,
            due_date=start + datetime.timedelta(days=14), status="Draft",
        )
        db.bills.append(draft)
        customer.bill_ids.append(bill_id)
    draft.line_items.append(LineItem(description, amount, TODAY, "Credit" if amount < 0 else "Charge"))
    draft.total_due += amount


def get_data_usage(world: World, customer_id: str, line_id: str) -> str:
    db = carrier(world)
    line = _target_line(db, customer_id, line_id)
    plan = plan_by_id(db, line.plan_id)
    return render({
        "line_id": line_id,
        "data_used_gb": line.data_used_gb,
        "data_limit_gb": plan.data_limit_gb,
        "data_refueling_gb": line.data_refueling_gb,
        "cycle_end_date": _next_month_start(TODAY) - datetime.timedelta(days=1),
    })


def enable_roaming(world: World, customer_id: str, line_id: str) -> str:
    line = _target_line(carrier(world), customer_id, line_id)
    if line.roaming_enabled:
        return "Roaming was already enabled"
    line.roaming_enabled = True
    return "Roaming enabled successfully"


def disable_roaming(world: World, customer_id: str, line_id: str) -> str:
    line = _target_line(carrier(world), customer_id, line_id)
    if not line.roaming_enabled:
        return "Roaming was already disabled"
    line.roaming_enabled = False
    return "Roaming disabled successfully"


def refuel_data(world: World, customer_id: str, line_id: str, gb_amount: float) -> str:
    db = carrier(world)
    line = _target_line(db, customer_id, line_id)
    if gb_amount <= 0:
        raise ToolError("Refuel amount must be positive")
    plan = plan_by_id(db, line.plan_id)
    charge = gb_amount * plan.data_refueling_price_per_gb
    line.data_refueling_gb += gb_amount
    _apply_one_time_charge(db, customer_id, charge, f"Data refueling: {gb_amount} GB at ${plan.data_refueling_price_per_gb}/GB")
    return render({
        "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
        "new_data_refueling_gb": line.data_refueling_gb,
        "charge": charge,
    })


# ---- task functions: set-up and assertions (not tools) ---------------------------------


def set_data_usage(world: World, customer_id: str, line_id: str, data_used_gb: float) -> str:
    _target_line(carrier(world), customer_id, line_id).data_used_gb = data_used_gb
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


def suspend_line_for_overdue_bill(world: World, customer_id: str, line_id: str, new_bill_id: str,
                                  contract_ended: bool) -> str:
    db = carrier(world)
    line = line_by_id(db, line_id)
    if line.status != "Active":
        raise ToolError("Line must be active to suspend for unpaid bill")
    amount = plan_by_id(db, line.plan_id).price_per_month
    if amount <= 0:
        raise ToolError("Amount must be positive for overdue bill")
    customer = customer_by_id(db, customer_id)
    if any(bill_by_id(db, b).status == "Overdue" for b in customer.bill_ids):
        raise ToolError("Customer already has an overdue bill")
    last_month_end = TODAY.replace(day=1) - datetime.timedelta(days=1)
    last_month_start = last_month_end.replace(day=1)
    bill = Bill(
        bill_id=new_bill_id, customer_id=customer_id, period_start=last_month_start, period_end=last_month_end,
        issue_date=last_month_start, total_due=0.0, due_date=last_month_start + datetime.timedelta(days=14),
        status="Overdue",
    )
    bill.line_items.append(LineItem(f"Charge for line {line.line_id}", amount, TODAY, "Charge" if amount > 0 else "Credit"))
    bill.total_due += amount
    db.bills.append(bill)
    customer.bill_ids.append(new_bill_id)
    line.status, line.suspension_start_date = "Suspended", TODAY
    if contract_ended:
        line.contract_end_date = last_month_end
    return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"


def assert_data_refueling_amount(world: World, customer_id: str, line_id: str, expected_amount: float) -> bool:
    return abs(_target_line(carrier(world), customer_id, line_id).data_refueling_gb - expected_amount) < 1e-6


def assert_line_status(world: World, customer_id: str, line_id: str, expected_status: str) -> bool:
    return _target_line(carrier(world), customer_id, line_id).status == expected_status


def assert_overdue_bill_exists(world: World, customer_id: str, overdue_bill_id: str) -> bool:
    db = carrier(world)
    customer = customer_by_id(db, customer_id)
    if overdue_bill_id not in customer.bill_ids:
        raise ToolError(f"Overdue bill {overdue_bill_id} not found")
    if bill_by_id(db, overdue_bill_id).status != "Overdue":
        raise ToolError(f"Overdue bill {overdue_bill_id} is not overdue")
    return True


def assert_no_overdue_bill(world: World, overdue_bill_id: str) -> bool:
    try:
        return bill_by_id(carrier(world), overdue_bill_id).status == "Paid"
    except ToolError:
        return True


# ---- declarations ----------------------------------------------------------------------

_CUSTOMER = Arg("customer_id", "string", "customer_id", "ID of the customer who owns the line.")


def _line(purpose: str) -> Arg:
    return Arg("line_id", "string", "line_id", f"ID of the line to {purpose}.")


TOOLS: tuple[Tool, ...] = (
    Tool("get_customer_by_phone", "Finds a customer by their primary contact or line phone number.",
         (Arg("phone_number", "string", "phone_number", "The phone number to search for."),), get_customer_by_phone),
    Tool("get_customer_by_id", "Retrieves a customer directly by their unique ID.",
         (Arg("customer_id", "string", "customer_id", "The unique identifier of the customer."),), get_customer_by_id),
    Tool("get_customer_by_name",
         "Searches for customers by name and DOB. May return multiple matches if names are similar,\n\n"
         "DOB helps disambiguate.",
         (Arg("full_name", "string", "full_name", "The full name of the customer."),
          Arg("dob", "string", "dob", "Date of birth for verification, in the format YYYY-MM-DD.")),
         get_customer_by_name),
    Tool("get_details_by_id",
         "Retrieves the details for a given ID.\n\nThe ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.",
         (Arg("id", "string", "id", "The ID of the object to retrieve."),), get_details_by_id),
    Tool("suspend_line",
         "Suspends a specific line (max 6 months).\n\nChecks: Line status must be Active.\n"
         "Logic: Sets line status to Suspended, records suspension_start_date.",
         (_CUSTOMER, _line("suspend"), Arg("reason", "string", "text", "Reason for suspension.")),
         suspend_line, kind="write"),
    Tool("resume_line",
         "Resumes a suspended line.\n\nChecks: Line status must be Suspended or Pending Activation.\n"
         "Logic: Sets line status to Active, clears suspension_start_date.",
         (_CUSTOMER, _line("resume")), resume_line, kind="write"),
    Tool("get_bills_for_customer", "Retrieves a list of the customer's bills, most recent first.",
         (Arg("customer_id", "string", "customer_id", "ID of the customer."),
          Arg("limit", "integer", "count", "Maximum number of bills to return.", required=False)),
         get_bills_for_customer),
    Tool("send_payment_request",
         "Sends a payment request to the customer for a specific bill.\n\nChecks:\n    - Customer exists\n"
         "    - Bill exists and belongs to the customer\n    - No other bills are already awaiting payment for "
         "this customer\nLogic: Sets bill status to AWAITING_PAYMENT and notifies customer.\nWarning: This method "
         "does not check if the bill is already PAID.\nAlways check the bill status before calling this method.",
         (Arg("customer_id", "string", "customer_id", "ID of the customer who owns the bill."),
          Arg("bill_id", "string", "bill_id", "ID of the bill to send payment request for.")),
         send_payment_request, kind="write"),
    Tool("get_data_usage",
         "Retrieves current billing cycle data usage for a line, including data\n\n"
         "refueling amount, data limit, and cycle end date.",
         (_CUSTOMER, _line("check usage for")), get_data_usage),
    Tool("enable_roaming", "Enables international roaming on a line.", (_CUSTOMER, _line("enable roaming for")),
         enable_roaming, kind="write"),
    Tool("disable_roaming", "Disables international roaming on a line.", (_CUSTOMER, _line("disable roaming for")),
         disable_roaming, kind="write"),
    TRANSFER_TO_HUMAN_AGENTS,
    Tool("refuel_data",
         "Refuels data for a specific line, adding to the customer's bill.\n\nChecks: Line status must be Active, "
         "Customer owns the line.\nLogic: Adds data to the line and charges customer based on the plan's refueling rate.",
         (_CUSTOMER, _line("refuel data for"), Arg("gb_amount", "number", "amount", "Amount of data to add in gigabytes.")),
         refuel_data, kind="write"),
)

FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{tool.name: tool.fn for tool in TOOLS},
    **{f.__name__: f for f in (set_data_usage, suspend_line_for_overdue_bill, assert_data_refueling_amount,
                               assert_line_status, assert_overdue_bill_exists, assert_no_overdue_bill)},
}
