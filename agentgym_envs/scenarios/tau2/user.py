"""A deterministic, seeded user simulator for the tau2 domains (no LLM).

The user knows a few facts (:class:`UserFacts`: name, zip, email, user id, order or
reservation ids, a new address, a travel date, a phone number) and a goal: the reference
write calls of its task (its own phone's among them, in a dual-control domain) and the
``communicate_info`` strings it wants to hear. It reads each agent message (the ``respond``
pseudo-tool) and replies by these rules, in order:

0. (dual control) a message that names phone tools as calls, e.g. ``toggle_airplane_mode()``
   or ``set_network_mode_preference(mode='4g_5g_preferred')`` -> it runs them on its phone,
   in order, and replies with what the phone shows;
1. a request for confirmation ("confirm", "(yes/no)", "proceed?") -> "Yes, ..." ;
2. a question asking for facts (a "?" and a keyword: email, name, zip, user id, order,
   reservation, address, date) -> the facts it knows among those asked, or that it does not
   know them; the facts it gives are revealed as entities (for the structured mode);
3. a message that refuses ("cannot", "unable", "not able", "not possible", "sorry") while
   the goal is not reached -> it accepts the refusal and ends the conversation;
4. any other message once the goal is reached (every reference write was made, every
   ``communicate_info`` said) -> thanks and ends the conversation ("###STOP###");
5. anything else -> it restates its request.

Phrasings are drawn from small lists with a generator seeded by the task id, so the same
task always gives the same conversation.
"""

from __future__ import annotations

import ast
import json
import random
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

STOP = "###STOP###"

# Canned agent messages: the ``message`` entities the structured mode starts with.
ASK_IDENTITY = (
    "To help you, could you please give me your email, or your name and zip code, your user id, "
    "and the order or reservation id, the new address, the passengers or the date this is about?"
)
ASK_CONFIRMATION = "I am about to make this change to your account. Do you confirm (yes/no)?"
DONE = "Your request has been completed."
TRANSFER_SUMMARY = "The customer needs help that a human agent must give."
REFUSE = "I am sorry, but I cannot do that according to our policy."
TRANSFER_NOTICE = "I will transfer you to a human agent now."
AGENT_MESSAGES = (ASK_IDENTITY, ASK_CONFIRMATION, DONE, REFUSE, TRANSFER_NOTICE)

_CONFIRM = re.compile(r"\bconfirm|\(yes/no\)|\byes or no\b|\bproceed\?|\bgo ahead\?", re.IGNORECASE)
_REFUSE = re.compile(r"\b(cannot|can't|unable|not able|not possible|not allowed|sorry)\b", re.IGNORECASE)
_KEYWORDS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"e-?mail", re.IGNORECASE),
    "name": re.compile(r"\bname\b", re.IGNORECASE),
    "zip": re.compile(r"\bzip|postal", re.IGNORECASE),
    "user_id": re.compile(r"\buser ?id|\baccount id", re.IGNORECASE),
    "order_ids": re.compile(r"\border", re.IGNORECASE),
    "reservation_ids": re.compile(r"\breservation|\bbooking", re.IGNORECASE),
    "new_address": re.compile(r"\baddress", re.IGNORECASE),
    "date": re.compile(r"\bdate\b|\bwhen\b", re.IGNORECASE),
    "passengers": re.compile(r"\bpassenger|\btravel+er", re.IGNORECASE),
    "phone_number": re.compile(r"\bphone number", re.IGNORECASE),
}
_ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")


@dataclass(frozen=True)
class UserFacts:
    """What the simulated user knows and can tell the agent."""

    first_name: str | None = None
    last_name: str | None = None
    zip: str | None = None
    email: str | None = None
    user_id: str | None = None
    order_ids: tuple[str, ...] = ()
    reservation_ids: tuple[str, ...] = ()
    new_address: Mapping[str, str] | None = None
    date: str | None = None
    passengers: tuple[dict[str, str], ...] = ()
    phone_number: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_name": self.first_name,
            "last_name": self.last_name,
            "zip": self.zip,
            "email": self.email,
            "user_id": self.user_id,
            "order_ids": list(self.order_ids),
            "reservation_ids": list(self.reservation_ids),
            "new_address": None if self.new_address is None else dict(self.new_address),
            "date": self.date,
            "passengers": [dict(p) for p in self.passengers],
            "phone_number": self.phone_number,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UserFacts:
        return cls(
            first_name=data.get("first_name"),
            last_name=data.get("last_name"),
            zip=data.get("zip"),
            email=data.get("email"),
            user_id=data.get("user_id"),
            order_ids=tuple(data.get("order_ids") or ()),
            reservation_ids=tuple(data.get("reservation_ids") or ()),
            new_address=data.get("new_address"),
            date=data.get("date"),
            passengers=tuple(data.get("passengers") or ()),
            phone_number=data.get("phone_number"),
        )

    def entities(self, topics: Iterable[str] | None = None) -> list[tuple[str, Any]]:
        """``(kind, value)`` entity rows for the facts on ``topics`` (all when None)."""
        wanted = set(_KEYWORDS) if topics is None else set(topics)
        rows: list[tuple[str, Any]] = []
        if "email" in wanted and self.email:
            rows.append(("email", self.email))
        if "name" in wanted and self.first_name and self.last_name:
            rows += [("first_name", self.first_name), ("last_name", self.last_name)]
        if ("zip" in wanted or "name" in wanted) and self.zip:
            rows.append(("zip", self.zip))
        if "user_id" in wanted and self.user_id:
            rows.append(("user_id", self.user_id))
        if "order_ids" in wanted:
            rows += [("order_id", order_id) for order_id in self.order_ids]
        if "reservation_ids" in wanted:
            rows += [("reservation_id", rid) for rid in self.reservation_ids]
        if "new_address" in wanted and self.new_address:
            rows += [(name, self.new_address[name]) for name in _ADDRESS_FIELDS if name in self.new_address]
        if "date" in wanted and self.date:
            rows.append(("date", self.date))
        if "passengers" in wanted:
            rows += [("passenger", dict(p)) for p in self.passengers]
        if "phone_number" in wanted and self.phone_number:
            rows.append(("phone_number", self.phone_number))
        return rows


# ---- facts of a real task, read from its instructions ----------------------------------

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+\w")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")
_ZIP = re.compile(r"\bzip(?: code)?(?: is)?\s*(\d{5})\b", re.IGNORECASE)
_ORDER_ID = re.compile(r"#?W\d{7}\b")
_RESERVATION_ID = re.compile(r"\b[A-Z0-9]{6}\b")
_NAME = re.compile(r"\b(?:You are|Your name is|name is)\s+([A-Z][a-zA-Z'-]+)\s+([A-Z][a-zA-Z'-]+)")


def facts_from_instructions(
    instructions: Any, known_orders: Any = (), known_reservations: Any = ()
) -> UserFacts:
    """The facts a real task's user instructions state (regular expressions over the text).

    Order and reservation ids count only if the database has them (``known_*`` support
    ``in``), which rules out upper-case words that merely look like ids.
    """
    if isinstance(instructions, Mapping):
        text = "\n".join(str(v) for k, v in instructions.items() if k != "domain" and v)
    else:
        text = str(instructions)
    name = _NAME.search(text)
    zip_code = _ZIP.search(text)
    email = _EMAIL.search(text)
    user_id = _USER_ID.search(text)
    orders = _unique("#" + m.group(0).lstrip("#") for m in _ORDER_ID.finditer(text))
    reservations = _unique(m.group(0) for m in _RESERVATION_ID.finditer(text))
    return UserFacts(
        first_name=name.group(1) if name else None,
        last_name=name.group(2) if name else None,
        zip=zip_code.group(1) if zip_code else None,
        email=email.group(0) if email else None,
        user_id=user_id.group(0) if user_id else None,
        order_ids=tuple(o for o in orders if o in known_orders),
        reservation_ids=tuple(r for r in reservations if r in known_reservations),
    )


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def opening_message(seed: str, reason: str) -> str:
    """The user's first message: a greeting (chosen by ``seed``) and the reason for the call."""
    return f"{_GREETINGS[zlib.crc32(seed.encode('utf-8')) % len(_GREETINGS)]} {reason}"


def goal_key(name: str, arguments: Mapping[str, Any]) -> str:
    """A canonical key of a call (the same one :class:`~agentgym_envs.core.ToolCall` uses)."""
    return json.dumps([name, dict(arguments)], sort_keys=True, ensure_ascii=False)


# ---- the simulator ---------------------------------------------------------------------

_GREETINGS = ("Hi!", "Hello.", "Hi there.", "Good day.")
_YES = ("Yes, please go ahead.", "Yes, I confirm.", "Yes.")
_THANKS = ("Thank you, that is all I needed.", "Great, thanks for your help!", "Perfect, thank you.")
_ACCEPT = ("I understand. Thank you anyway.", "Okay, I see. Thanks.")
_NUDGE = ("Could you please help me with my request?", "Can you take care of that for me, please?")


@dataclass
class UserSimulator:
    """One episode's simulated user: see the module docstring for its rules."""

    facts: UserFacts
    reason: str
    goal_writes: Counter[str]
    goal_info: tuple[str, ...]
    seed: str
    device: Callable[[str, dict[str, Any]], str] | None = None  # runs one of its phone's tools
    device_tools: frozenset[str] = frozenset()
    done_writes: Counter[str] = field(default_factory=Counter)
    heard: str = ""
    stopped: bool = False
    stop_reason: str = ""

    def __post_init__(self) -> None:
        self._rng = random.Random(zlib.crc32(self.seed.encode("utf-8")))

    def record_write(self, key: str) -> None:
        """The agent made a write call (whatever its result)."""
        self.done_writes[key] += 1

    def goal_reached(self) -> bool:
        said = self.heard.lower().replace(",", "")
        return not (self.goal_writes - self.done_writes) and all(info.lower() in said for info in self.goal_info)

    def reply(self, message: str) -> tuple[str, list[tuple[str, Any]]]:
        """The user's answer to an agent message and the facts it reveals as entities."""
        self.heard += "\n" + message
        requests = device_requests(message, self.device_tools) if self.device is not None else []
        if requests:
            return "\n".join(f"I ran {name} on my phone: {self.device(name, args)}" for name, args in requests), []
        if _CONFIRM.search(message):
            return self._rng.choice(_YES), []
        asked = [topic for topic, pattern in _KEYWORDS.items() if pattern.search(message)] if "?" in message else []
        if asked:
            return self._answer(asked)
        if not self.goal_reached() and _REFUSE.search(message):
            return self._stop("refused", self._rng.choice(_ACCEPT))
        if self.goal_reached():
            return self._stop("goal reached", self._rng.choice(_THANKS))
        return f"{self._rng.choice(_NUDGE)} {self.reason}", []

    def _stop(self, reason: str, text: str) -> tuple[str, list[tuple[str, Any]]]:
        self.stopped, self.stop_reason = True, reason
        return f"{text} {STOP}", []

    def _answer(self, asked: list[str]) -> tuple[str, list[tuple[str, Any]]]:
        f = self.facts
        known: list[str] = []
        unknown: list[str] = []
        for topic in asked:
            text = _fact_text(f, topic)
            (known if text else unknown).append(text or _TOPIC_NAMES[topic])
        parts = []
        if known:
            parts.append(" ".join(known))
        if unknown and not known:
            parts.append(f"Sorry, I don't know my {' or '.join(unknown)}.")
        return " ".join(parts), f.entities(asked)


def device_requests(message: str, tools: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
    """The phone-tool calls a message names, in order: ``name()`` or ``name(arg='value', ...)``
    with literal values (calls of other names, or that do not parse, are ignored)."""
    known = set(tools)
    calls: list[tuple[int, str, dict[str, Any]]] = []
    for match in _CALL.finditer(message):
        if match.group(1) not in known:
            continue
        try:
            node = ast.parse(match.group(0), mode="eval").body
            arguments = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}  # type: ignore[attr-defined]
        except (SyntaxError, ValueError, TypeError):
            continue
        if None not in arguments and not node.args:  # type: ignore[attr-defined]
            calls.append((match.start(), match.group(1), arguments))
    return [(name, arguments) for _, name, arguments in sorted(calls, key=lambda c: c[0])]


_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\(([^()]*)\)")

_TOPIC_NAMES = {
    "email": "email",
    "name": "name",
    "zip": "zip code",
    "user_id": "user id",
    "order_ids": "order id",
    "reservation_ids": "reservation id",
    "new_address": "new address",
    "date": "travel date",
    "passengers": "passengers",
    "phone_number": "phone number",
}


def _fact_text(f: UserFacts, topic: str) -> str | None:
    if topic == "email" and f.email:
        return f"My email is {f.email}."
    if topic == "name" and f.first_name and f.last_name:
        return f"My name is {f.first_name} {f.last_name}" + (f" and my zip code is {f.zip}." if f.zip else ".")
    if topic == "zip" and f.zip:
        return f"My zip code is {f.zip}."
    if topic == "user_id" and f.user_id:
        return f"My user id is {f.user_id}."
    if topic == "order_ids" and f.order_ids:
        return f"The order id is {', '.join(f.order_ids)}."
    if topic == "reservation_ids" and f.reservation_ids:
        return f"The reservation id is {', '.join(f.reservation_ids)}."
    if topic == "new_address" and f.new_address:
        a = f.new_address
        line2 = f", {a['address2']}" if a.get("address2") else ""
        return f"The new address is {a['address1']}{line2}, {a['city']}, {a['state']} {a['zip']}, {a['country']}."
    if topic == "date" and f.date:
        return f"The date is {f.date}."
    if topic == "phone_number" and f.phone_number:
        return f"My phone number is {f.phone_number}."
    if topic == "passengers" and f.passengers:
        return "The passengers are " + "; ".join(f"{p['first_name']} {p['last_name']} (born {p['dob']})" for p in f.passengers) + "."
    return None
