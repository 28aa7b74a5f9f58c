"""Support tickets: the task type, its JSON form, and the seeded generator."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from agentgym_envs.core import TaskFormatError
from agentgym_envs.core.tasks import require

from . import phrasings as P
from .grammar import phrasing_units

KIND_DIFFICULTY = {
    "password_reset": "easy",
    "billing_inquiry": "easy",
    "api_integration": "medium",
    "refund_request": "medium",
    "data_migration": "hard",
}
KINDS = tuple(KIND_DIFFICULTY)
CATEGORIES = {
    "password_reset": "password reset",
    "billing_inquiry": "billing inquiry",
    "api_integration": "API integration",
    "refund_request": "refund request",
    "data_migration": "data migration",
}
API_ISSUES = ("auth", "rate_limit", "server_error")
SPLIT_CODES = {"train": 1, "test": 2, "validation": 3}


@dataclass(frozen=True)
class Ticket:
    """One support task. ``issue`` is the API failure behind an ``api_integration`` ticket
    (``auth`` | ``rate_limit`` | ``server_error``), None for other kinds; ``phrasing`` the id
    of the phrasing its text was written from (:func:`.grammar.phrasing_units`; empty for a
    task file's ticket that names none)."""

    task_id: str
    kind: str
    text: str
    customer: dict[str, str]
    invoices: list[dict[str, Any]] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    issue: str | None = None
    phrasing: str = ""

    @property
    def difficulty(self) -> str:
        return KIND_DIFFICULTY[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ticket:
        """Parse the JSONL task-file form (see the README); raise TaskFormatError."""
        task_id = require(data, "task_id", str)
        kind = require(data, "kind", str)
        if kind not in KIND_DIFFICULTY:
            raise TaskFormatError(f"field 'kind' must be one of {list(KIND_DIFFICULTY)}, got {kind!r}", "kind")
        text = require(data, "text", str)
        customer = require(data, "customer", dict)
        for key in ("user_id", "name", "email", "plan"):
            if not isinstance(customer.get(key), str) or not customer[key]:
                raise TaskFormatError(f"field 'customer.{key}' must be a non-empty string", f"customer.{key}")
        invoices = data.get("invoices", [])
        if not isinstance(invoices, list):
            raise TaskFormatError("field 'invoices' must be a list", "invoices")
        for n, invoice in enumerate(invoices):
            _check_invoice(invoice, f"invoices[{n}]")
        logs = data.get("logs", [])
        if not isinstance(logs, list) or not all(isinstance(line, str) for line in logs):
            raise TaskFormatError("field 'logs' must be a list of strings", "logs")
        issue = data.get("issue")
        if kind == "api_integration" and issue not in API_ISSUES:
            raise TaskFormatError(f"field 'issue' must be one of {list(API_ISSUES)} for api_integration", "issue")
        if kind == "refund_request" and not any(i["status"] == "duplicate" for i in invoices):
            raise TaskFormatError("a refund_request needs an invoice with status 'duplicate'", "invoices")
        phrasing = data.get("phrasing", "")
        if not isinstance(phrasing, str):
            raise TaskFormatError("field 'phrasing' must be a string", "phrasing")
        unknown = set(data) - {f for f in cls.__dataclass_fields__} - {"difficulty"}
        if unknown:
            raise TaskFormatError(f"unknown field(s) {sorted(unknown)}", sorted(unknown)[0])
        return cls(task_id, kind, text, dict(customer), [dict(i) for i in invoices], list(logs), issue, phrasing)


def _check_invoice(invoice: Any, where: str) -> None:
    if not isinstance(invoice, dict):
        raise TaskFormatError(f"field '{where}' must be an object", where)
    for key, kind in (("invoice_id", str), ("amount", (int, float)), ("date", str), ("status", str)):
        value = invoice.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TaskFormatError(f"field '{where}.{key}' is missing or has the wrong type", f"{where}.{key}")
    if invoice["status"] not in ("paid", "duplicate"):
        raise TaskFormatError(f"field '{where}.status' must be 'paid' or 'duplicate'", f"{where}.status")


def generate_ticket(split: str, index: int, wording: str | None = None, kinds: tuple[str, ...] = KINDS,
                    version: int = 0) -> Ticket:
    """The ticket ``"<split>-<index>"`` of task set ``version`` (0: -v0's; 1: -v1's phrasing
    grammar and validation split): a pure function of its arguments. ``wording`` names the
    split whose phrasings write its text (default: ``split``); the values stay ``split``'s, so
    a ticket crossed this way tells unseen values from unseen phrasings. ``kinds`` are the
    kinds drawn from (all of them by default). A version's train and test tickets draw the same
    kinds and values: only the phrasing differs."""
    if split not in SPLIT_CODES or (version == 0 and split == "validation"):
        raise ValueError(f"version {version} has no split {split!r}")
    rng = random.Random(SPLIT_CODES[split] << 40 | index)
    pick = rng.choice
    kind = pick(kinds)
    first, last = pick(P.FIRST_NAMES[split]), pick(P.LAST_NAMES[split])
    low, high = P.ID_RANGES[split]
    plan = pick(tuple(P.PLANS[split]))
    price = float(pick(P.PLANS[split][plan]))
    customer = {
        "user_id": f"u{int(rng.randint(low, high))}",
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}{rng.randint(10, 98)}@{pick(P.EMAIL_DOMAINS[split])}",
        "plan": plan,
    }
    months = sorted(rng.sample(P.MONTHS[split], rng.randint(2, 3)))
    invoices = [
        {"invoice_id": f"INV-{int(rng.randint(low, high))}", "amount": price, "date": f"{m}-{rng.randint(1, 27):02d}",
         "status": "paid", "description": f"{plan} plan, {m}"}
        for m in months
    ]
    latest = invoices[-1]
    issue = pick(API_ISSUES) if kind == "api_integration" else None
    endpoint, source = pick(P.ENDPOINTS[split]), pick(P.MIGRATION_SOURCES[split])
    if kind == "refund_request":
        invoices.append({**latest, "invoice_id": f"INV-{int(rng.randint(low, high))}", "status": "duplicate",
                         "description": latest["description"] + " (charged twice)"})
    logs = ticket_logs(kind, issue, endpoint, source, latest["date"], rng)
    phrasing, template = pick(phrasing_units(kind, wording or split, version))
    text = template.format(
        name=customer["name"], email=customer["email"], plan=plan, amount=f"${price:.2f}", date=latest["date"],
        month=latest["date"][:7], endpoint=endpoint, source=source,
    )
    return Ticket(f"{split}-{index}", kind, text, customer, invoices, logs, issue, phrasing)


def ticket_logs(kind: str, issue: str | None, endpoint: str, source: str, date: str, rng: random.Random) -> list[str]:
    """The recent API and job logs of a ticket of ``kind`` (``check_logs`` shows them): an ``api_integration``
    ticket's failures of ``issue`` on ``endpoint``, a ``data_migration`` ticket's failed job from ``source``."""
    request = lambda: f"req_{rng.randrange(16**6, 16**7):x}"  # noqa: E731
    ok = f"{date}T08:02:11Z GET {endpoint} 200 OK ({request()})"
    if kind == "api_integration":
        failure = {
            "auth": f"POST {endpoint} 401 Unauthorized: API key revoked",
            "rate_limit": f"POST {endpoint} 429 Too Many Requests: plan rate limit exceeded",
            "server_error": f"POST {endpoint} 500 Internal Server Error",
        }[issue]
        return [ok] + [f"{date}T09:{10 + n:02d}:0{n}Z {failure} ({request()})" for n in range(rng.randint(2, 3))]
    if kind == "data_migration":
        step = rng.choice(("copy_tables", "verify_rows", "rebuild_indexes"))
        return [ok, f"{date}T10:45:00Z migration job mig-{rng.randint(1000, 9998)} from {source}: "
                    f"failed at step {step} (timeout after 3600s)"]
    return [ok]


_logs = ticket_logs  # the name it had while private
