"""tool_arguments="upstream": tool calls bind, fail and store values as upstream's Python
toolkit does; "strict" stays the default and checks arguments before any change."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.scenarios.tau2 import AIRLINE, RETAIL, get_domain, score_episode
from agentgym_envs.scenarios.tau2.upstream.arguments import binding_error
from agentgym_envs.scenarios.tau2.upstream.tasks import parse_tasks

KEYWORD_SETS = (
    {},
    {"self": 1},
    {"extra": 1},
    {"self": 1, "extra": 2},
    {"extra": 1, "self": 2},
)


def _interpreter_error(toolkit: str, tool, arguments) -> str | None:
    """What Python itself says when a method with the tool's parameters gets ``arguments``."""
    namespace: dict = {}
    parameters = "".join(f", {arg.name}" for arg in tool.args)
    exec(f"class {toolkit}:\n    def {tool.name}(self{parameters}):\n        pass", namespace)
    try:
        getattr(namespace[toolkit](), tool.name)(**arguments)
    except TypeError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("tau2", [RETAIL, AIRLINE], ids=["retail", "airline"])
def test_binding_errors_are_the_interpreters_own(tau2):
    for tool in tau2.tools:
        names = [arg.name for arg in tool.args]
        argument_sets = [
            *KEYWORD_SETS,
            {name: 1 for name in names},
            {name: 1 for name in names[:1]},
            {name: 1 for name in names[1:]},
            {**{name: 1 for name in names}, "extra": 1},
            {name: 1 for name in names[: len(names) // 2]},
        ]
        for arguments in argument_sets:
            assert binding_error(tau2.toolkit, tool, arguments) == _interpreter_error(tau2.toolkit, tool, arguments), (
                tool.name,
                arguments,
            )


def _call(tau2, data_dir, name, arguments, mode="upstream"):
    world = tau2.new_world(data_dir, mode)
    return world, tau2.call(world, name, arguments)


def test_upstream_mode_gives_upstreams_errors_for_extra_missing_and_unknown_values(data_dir):
    _, extra = _call(RETAIL, data_dir, "get_order_details", {"order_id": "#W4817420", "extra": 1})
    assert extra.output == "Error: RetailTools.get_order_details() got an unexpected keyword argument 'extra'"
    _, missing = _call(RETAIL, data_dir, "get_user_details", {})
    assert missing.output == "Error: RetailTools.get_user_details() missing 1 required positional argument: 'user_id'"
    _, number = _call(RETAIL, data_dir, "get_user_details", {"user_id": 12345})
    assert (number.output, number.error) == ("Error: User not found", True)
    _, several = _call(AIRLINE, data_dir, "search_direct_flight", {"origin": "JFK"})
    assert several.output == (
        "Error: AirlineTools.search_direct_flight() missing 2 required positional arguments: 'destination' and 'date'"
    )
    _, not_iterable = _call(AIRLINE, data_dir, "calculate", {"expression": 2})
    assert not_iterable.output == "Error: 'int' object is not iterable"


def test_strict_mode_rejects_the_same_calls_with_its_own_messages(data_dir):
    _, extra = _call(RETAIL, data_dir, "get_order_details", {"order_id": "#W4817420", "extra": 1}, "strict")
    assert extra.output == "Error: tool 'get_order_details' has no argument(s) ['extra']; it takes ['order_id']"
    _, number = _call(RETAIL, data_dir, "get_user_details", {"user_id": 12345}, "strict")
    assert number.output == "Error: tool 'get_user_details': argument 'user_id' must be of type string, got integer"


BAGGAGES = {"reservation_id": "VAAOXJ", "total_baggages": "3", "nonfree_baggages": 1, "payment_id": "credit_card_1052991"}


def test_upstream_mode_stores_a_string_bag_count_and_charges_the_fee(data_dir):
    world, outcome = _call(AIRLINE, data_dir, "update_reservation_baggages", BAGGAGES)
    assert not outcome.error
    reservation = json.loads(outcome.output)
    assert reservation["total_baggages"] == "3" and reservation["nonfree_baggages"] == 1
    assert reservation["payment_history"][-1] == {"payment_id": "credit_card_1052991", "amount": 50}
    assert world.db.hash() != AIRLINE.new_world(data_dir).db.hash()
    assert world.db.to_dict()["reservations"]["VAAOXJ"]["total_baggages"] == "3"

    strict_world, strict = _call(AIRLINE, data_dir, "update_reservation_baggages", BAGGAGES, "strict")
    assert strict.error and "total_baggages" in strict.output
    assert strict_world.db.hash() == AIRLINE.new_world(data_dir).db.hash()


def test_upstream_mode_validates_with_pydantic_where_upstream_builds_a_model(data_dir):
    address = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": 78701}
    world, outcome = _call(RETAIL, data_dir, "modify_user_address", {"user_id": "sofia_rossi_8776", **address})
    assert outcome.output.startswith("Error: 1 validation error for UserAddress\nzip\n  Input should be a valid string")
    assert world.db.hash() == RETAIL.new_world(data_dir).db.hash()

    booking = {
        "user_id": "lei_rossi_3206", "origin": "JFK", "destination": "LAX", "flight_type": "one_way",
        "cabin": "economy", "flights": [{"flight_number": "HAT001"}], "passengers": [], "payment_methods": [],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
    }
    _, bad_flight = _call(AIRLINE, data_dir, "book_reservation", booking)
    assert bad_flight.output.startswith("Error: 1 validation error for FlightInfo\ndate\n  Field required")
    _, bad_cabin = _call(AIRLINE, data_dir, "book_reservation", {**booking, "flights": [], "cabin": "first"})
    assert bad_cabin.output.startswith("Error: 1 validation error for Reservation\ncabin\n")

    world, certificate = _call(AIRLINE, data_dir, "send_certificate", {"user_id": "lei_rossi_3206", "amount": "100"})
    assert certificate.output == "Certificate certificate_3221322 added to user lei_rossi_3206 with amount 100."
    stored = world.db.to_dict()["users"]["lei_rossi_3206"]["payment_methods"]["certificate_3221322"]
    assert stored == {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}


def test_upstream_mode_reproduces_every_gold_output_and_hash(domain, data_dir, gold, train_tasks):
    tau2 = get_domain(domain)
    for task_id, expected in gold[domain]["tasks"].items():
        world = tau2.new_world(data_dir, "upstream")
        for action, want in zip(train_tasks[domain][task_id].evaluation_criteria.actions, expected["action_outputs"]):
            outcome = tau2.call(world, action.name, action.arguments)
            assert (outcome.output, outcome.error) == (want["output"], want["error"]), (task_id, action.action_id)
        assert world.db.hash() == expected["final_hash"], task_id


def test_scoring_replays_the_agents_writes_with_the_episodes_argument_handling(data_dir):
    (task,) = parse_tasks(
        [{"id": "bags", "user_scenario": {"instructions": "add a bag"},
          "evaluation_criteria": {"actions": [{"action_id": "0", "name": "update_reservation_baggages",
                                               "arguments": {**BAGGAGES, "total_baggages": 3}}],
                                  "reward_basis": ["DB"]}}],
        "airline", AIRLINE.tools_by_name,
    )
    calls = [("update_reservation_baggages", BAGGAGES)]
    # upstream stores the string "3": not the reference's 3, so the hashes differ
    assert score_episode(task, calls, [], data_dir=data_dir, tool_arguments="upstream").components["DB"] == 0.0
    assert score_episode(task, calls, [], data_dir=data_dir).components["DB"] == 0.0  # strict: the write failed
    fixed = [("update_reservation_baggages", {**BAGGAGES, "total_baggages": 3})]
    assert score_episode(task, fixed, [], data_dir=data_dir, tool_arguments="upstream").reward == 1.0


def test_env_with_upstream_arguments_passes_the_call_to_the_tool_as_upstream_would(data_dir):
    env = gym.make("AgentGym/Tau2Retail-v0", data_dir=data_dir, source="real", split="train",
                   action_mode="text", tool_arguments="upstream")
    env.reset(seed=0)
    _, _, _, _, info = env.step(json.dumps({"name": "get_user_details", "arguments": {"user_id": 12345, "x": 1}}))
    assert info["messages"][-1]["content"] == "Error: RetailTools.get_user_details() got an unexpected keyword argument 'x'"
    _, _, _, _, info = env.step(json.dumps({"name": "respond", "arguments": {"message": 3}}))
    assert "must be of type string" in info["messages"][-1]["content"]  # respond is agentgym's, still strict
    env.close()


def test_unknown_argument_handling_is_a_clear_error(data_dir):
    with pytest.raises(ValueError, match="tool_arguments must be one of"):
        gym.make("AgentGym/Tau2Retail-v0", data_dir=data_dir, tool_arguments="loose")
