"""Shared fixtures: environments made the way users make them."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the env ids)

CS = "AgentGym/CustomerSupport-v0"


@pytest.fixture
def structured_env():
    env = gym.make(CS)
    yield env
    env.close()


@pytest.fixture
def text_env():
    env = gym.make(CS, action_mode="text")
    yield env
    env.close()


SUPPORT_RESOLUTIONS = Path(__file__).parent / "data" / "support_resolutions.json"


@pytest.fixture(scope="session")
def support_task_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A task file of the hand-written tickets of ``data/support_resolutions.json``, one per
    case, each with the case's name as its task id."""
    data = json.loads(SUPPORT_RESOLUTIONS.read_text())
    lines = []
    for name, case in data["cases"].items():
        invoices = data["invoices"] + ([data["duplicate"]] if case["kind"] == "refund_request" else [])
        ticket = {"task_id": name, "kind": case["kind"], "issue": case["issue"], "customer": data["customer"],
                  "text": f"Please help with my account. {data['customer']['email']}", "invoices": invoices,
                  "logs": data["logs"]}
        lines.append(json.dumps(ticket) + "\n")
    path = tmp_path_factory.mktemp("support") / "tickets.jsonl"
    path.write_text("".join(lines))
    return str(path)
