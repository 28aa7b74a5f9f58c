"""CustomerSupport grading must fail when a resolution is incomplete or wrong.

The tickets, the resolution steps and the effects each step must leave are written here by
hand, not derived from the scenario's own plan or tools: if a tool stops recording its effect
(say a refund that refunds nothing), the scenario's derived goal loses that effect too, and
only expectations written outside the scenario notice.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.evaluation import ExpertPolicy

CS = "AgentGym/CustomerSupport-v0"
RESOLUTIONS = json.loads((Path(__file__).parent / "data" / "support_resolutions.json").read_text())
USER = RESOLUTIONS["customer"]["user_id"]
PAID, PAID_SAME_DAY = (invoice["invoice_id"] for invoice in RESOLUTIONS["invoices"])
DUPLICATE = RESOLUTIONS["duplicate"]["invoice_id"]
# case -> its resolution as [(call, the effect it must leave, or None for a read)]
CASES = {
    case: [({"name": name, "arguments": arguments}, effect and tuple(effect)) for _, name, arguments, effect in c["steps"]]
    for case, c in RESOLUTIONS["cases"].items()
}
EFFECT_STEPS = [(case, n) for case, steps in CASES.items() for n, (_, effect) in enumerate(steps) if effect]


def _call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def _play(task_file: str, case: str, calls: list[dict]):
    """Run ``calls`` on ``case``'s ticket in text mode; return (success, score, world). An
    episode the calls leave open is graded as it stands."""
    env = gym.make(CS, action_mode="text", task_file=task_file)
    env.reset(options={"task_id": case})
    for call in calls:
        _, _, terminated, truncated, info = env.step(json.dumps(call))
        assert info["error"] is None, (call, info["error"])
        if terminated or truncated:
            break
    episode = env.unwrapped.episode
    outcome = env.unwrapped.scenario.grade(episode.task, episode.world)
    return outcome.success, outcome.score, episode.world


def _expected(case: str) -> list[tuple]:
    return sorted(effect for _, effect in CASES[case] if effect)


@pytest.mark.parametrize("case", CASES)
def test_the_written_resolution_succeeds_with_exactly_its_effects(support_task_file, case):
    success, score, world = _play(support_task_file, case, [call for call, _ in CASES[case]])
    assert (success, score) == (True, 1.0)
    assert sorted(world.effects) == _expected(case)


@pytest.mark.parametrize("case", CASES)
def test_the_experts_episode_leaves_exactly_the_expected_effects(support_task_file, case):
    env = gym.make(CS, action_mode="text", task_file=support_task_file)
    expert = ExpertPolicy(env)
    _, info = env.reset(options={"task_id": case})
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(expert(None, info))
        done = terminated or truncated
    assert info["outcome"]["success"] and info["metrics"]["tool_reliability"] == 1.0
    assert sorted(env.unwrapped.episode.world.effects) == _expected(case)


@pytest.mark.parametrize("case, skipped", EFFECT_STEPS, ids=[f"{c}-{CASES[c][n][0]['name']}" for c, n in EFFECT_STEPS])
def test_skipping_any_step_with_an_effect_fails(support_task_file, case, skipped):
    calls = [call for n, (call, _) in enumerate(CASES[case]) if n != skipped]
    success, score, _ = _play(support_task_file, case, calls)
    assert (success, score) == (False, 0.0)


@pytest.mark.parametrize("case", CASES)
def test_skipping_the_reads_still_succeeds_since_only_the_final_state_counts(support_task_file, case):
    success, _, _ = _play(support_task_file, case, [call for call, effect in CASES[case] if effect])
    assert success


def _refund_with(*refunds: dict) -> list[dict]:
    """The refund request's resolution with ``refunds`` in place of the right one."""
    calls = [call for call, _ in CASES["refund_request"]]
    at = next(n for n, call in enumerate(calls) if call["name"] == "refund")
    return calls[:at] + list(refunds) + calls[at + 1 :]


@pytest.mark.parametrize(
    "refunds",
    [
        [_call("refund", invoice_id=PAID_SAME_DAY, amount=49.0)],  # the original charge, not the duplicate
        [_call("refund", invoice_id=PAID, amount=49.0)],
        [_call("refund", invoice_id=DUPLICATE, amount=24.5)],  # half of it
        [_call("refund", invoice_id=DUPLICATE, amount=49.0), _call("refund", invoice_id=PAID_SAME_DAY, amount=49.0)],
    ],
    ids=["original-same-day", "older-invoice", "half-amount", "both-charges"],
)
def test_refunding_the_wrong_invoice_or_amount_fails(support_task_file, refunds):
    success, score, world = _play(support_task_file, "refund_request", _refund_with(*refunds))
    assert (success, score) == (False, 0.0)


def test_a_refund_moves_money_on_the_duplicate_invoice_only(support_task_file):
    _, _, world = _play(support_task_file, "refund_request", [call for call, _ in CASES["refund_request"]])
    assert {i.invoice_id: i.refunded for i in world.invoices.values()} == {PAID: 0.0, PAID_SAME_DAY: 0.0, DUPLICATE: 49.0}


@pytest.mark.parametrize(
    "case, change",
    [
        ("password_reset", _call("send_email", user_id=USER, template="invoice_copy")),  # an extra email
        ("billing_inquiry", _call("refund", invoice_id=PAID, amount=49.0)),  # money the ticket never asked for
        ("api_rate_limit", _call("create_api_key", user_id=USER)),  # a key revoked for nothing
        ("api_auth", _call("escalate", team="engineering")),  # an escalation that is not needed
    ],
)
def test_an_extra_effect_the_ticket_does_not_need_fails(support_task_file, case, change):
    calls = [call for call, _ in CASES[case]]
    success, score, _ = _play(support_task_file, case, calls[:-1] + [change, calls[-1]])
    assert (success, score) == (False, 0.0)


@pytest.mark.parametrize("case, wrong", [("api_server_error", "resolved"), ("password_reset", "escalated")])
def test_closing_with_the_wrong_resolution_fails(support_task_file, case, wrong):
    calls = [call for call, _ in CASES[case]]
    success, _, _ = _play(support_task_file, case, calls[:-1] + [_call("close_ticket", resolution=wrong)])
    assert not success


def _migration_with_priorities(*priorities: str) -> list[dict]:
    """The data migration's resolution with its priority changes replaced by ``priorities``, in order."""
    calls = [call for call, _ in CASES["data_migration"]]
    at = next(n for n, call in enumerate(calls) if call["name"] == "update_ticket")
    return calls[:at] + [_call("update_ticket", priority=p) for p in priorities] + calls[at + 1 :]


def test_the_ticket_is_graded_on_its_final_priority(support_task_file):
    lowered, _, _ = _play(support_task_file, "data_migration", _migration_with_priorities("high", "low"))
    raised, _, _ = _play(support_task_file, "data_migration", _migration_with_priorities("low", "high"))
    assert (lowered, raised) == (False, True)
