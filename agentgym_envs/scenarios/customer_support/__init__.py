"""AgentGym/CustomerSupport-v1 (and -v0): a support agent resolves tickets with 11 tools.

Ticket kinds: password_reset, billing_inquiry (easy); api_integration, refund_request
(medium); data_migration (hard). Success is judged on the final state: the customer's
account must show exactly the effects the ticket needs (the right refund on the right
invoice, the reset link to the right user, an escalation only where needed, the right
email, the right closing), whatever the order of the calls.
"""

from __future__ import annotations

from .env import CustomerSupportEnv
from .scenario import CustomerSupportScenario, resolution_plan
from .tickets import Ticket, generate_ticket

__all__ = ["CustomerSupportEnv", "CustomerSupportScenario", "Ticket", "generate_ticket", "resolution_plan"]
