"""``tau2_telecom``: the telecom domain (dual control) as a scenario: the agent works on the
carrier's side while the customer acts on its own phone."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agentgym_envs.core import ToolCall

from ..episode_tools import episode_tools, wrap_domain_tool
from ..expert import device_request_message
from ..scenario import POLICY_HEADING, Tau2Scenario
from ..upstream.domain import TELECOM
from ..upstream.tasks import Tau2Task
from ..upstream.telecom.user_models import NETWORK_MODES
from ..user import UserFacts
from .reveal import reveal_telecom

_APPS = ("messaging", "browser")
_PERMISSIONS = ("sms", "storage", "phone", "network")
ASK_IDENTITY = "To help you, could you please give me your name and the phone number of the line this is about?"


def _phone_requests() -> list[str]:
    """A request message for every phone tool call with argument values from the tasks' range
    (``set_apn_settings``, which takes an object, is left out)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for tool in TELECOM.user_tools:
        names = [arg.name for arg in tool.args]
        if not names:
            calls.append((tool.name, {}))
        elif names == ["mode"]:
            calls += [(tool.name, {"mode": mode}) for mode in NETWORK_MODES]
        elif names == ["app_name"]:
            calls += [(tool.name, {"app_name": app}) for app in _APPS]
        elif names == ["app_name", "permission"]:
            calls += [(tool.name, {"app_name": app, "permission": p}) for app in _APPS for p in _PERMISSIONS]
    return [device_request_message(name, arguments) for name, arguments in calls]


def telecom_reads(actions: list[Any], db: Any, facts: UserFacts) -> list[ToolCall]:
    """Look the customer up by phone number when the agent has carrier calls to make: this
    reveals its customer id, lines and bills."""
    needs_ids = any(a.name != "transfer_to_human_agents" for a in actions)
    return [ToolCall("get_customer_by_phone", {"phone_number": facts.phone_number})] if needs_ids and facts.phone_number else []


class Tau2TelecomScenario(Tau2Scenario):
    """tau2-bench telecom: mobile-service, mobile-data and MMS troubleshooting with the
    customer acting on its own phone."""

    name = "tau2_telecom"
    env_id = "AgentGym/Tau2Telecom-v0"
    description = "tau2-bench telecom troubleshooting (dual control: the customer acts on its phone), with a simulated user."
    domain = TELECOM
    builders = ()
    tools = episode_tools(TELECOM.tools, reveal_telecom, (), TELECOM.toolkit, TELECOM.sync)
    sources = ("real",)
    real_kinds = ("mms_issue", "mobile_data_issue", "service_issue")
    identity_question = ASK_IDENTITY
    max_turns = 60
    enum_entities = (
        ("message", ASK_IDENTITY),
        *(("message", request) for request in _phone_requests()),
        *(("network_mode", mode) for mode in NETWORK_MODES),
        *(("app_name", app) for app in _APPS),
        *(("permission", p) for p in _PERMISSIONS),
        *(("amount", gb) for gb in (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)),
        *(("count", n) for n in (1, 3, 6, 12)),
    )
    revealing_reads = staticmethod(telecom_reads)
    generator_class = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.solo:  # the agent also holds the phone's tools, as upstream's solo mode
            phone = tuple(wrap_domain_tool(tool, reveal_telecom, TELECOM.user_toolkit, TELECOM.sync, "user")
                          for tool in TELECOM.user_tools)
            if self.tool_arguments == "upstream":
                phone = tuple(replace(tool, checked=False) for tool in phone)
            self.tools = (*self.tools, *phone)

    def facts(self, task: Tau2Task, db: Any) -> UserFacts:
        """The customer's name and phone number, as the task's set-up gives them to its phone."""
        info = next((c.arguments for c in task.initial_actions if c.func_name == "set_user_info"), {})
        name = str(info.get("name") or "").split(" ", 1)
        return UserFacts(first_name=name[0] or None, last_name=name[1] if len(name) > 1 else None,
                         phone_number=info.get("phone_number"))

    def prompt(self, task: Tau2Task) -> str:
        if self.solo and task.raw.get("ticket"):
            return f"TICKET (act on the customer's behalf, with the phone's tools as well):\n{task.raw['ticket']}{POLICY_HEADING}{self.policy}"
        return super().prompt(task)

