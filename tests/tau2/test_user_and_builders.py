"""The simulated user and the list builders of the structured mode."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import numpy as np

import agentgym_envs  # noqa: F401
from agentgym_envs.core import ToolCall
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.scenarios.tau2.user import (
    ASK_CONFIRMATION,
    ASK_IDENTITY,
    DONE,
    REFUSE,
    STOP,
    UserFacts,
    UserSimulator,
    facts_from_instructions,
)


def user(goal_writes=(), goal_info=()) -> UserSimulator:
    facts = UserFacts(first_name="Yusuf", last_name="Rossi", zip="19122", order_ids=("#W2378156",))
    return UserSimulator(facts, "I want to return an item.", Counter(goal_writes), tuple(goal_info), seed="t")


def test_user_answers_what_it_knows_and_reveals_it_as_entities():
    reply, revealed = user().reply(ASK_IDENTITY)
    assert "Yusuf Rossi" in reply and "19122" in reply and "#W2378156" in reply
    assert ("zip", "19122") in revealed and ("order_id", "#W2378156") in revealed and ("first_name", "Yusuf") in revealed


def test_user_says_it_does_not_know_what_it_does_not_know():
    reply, revealed = user().reply("What is your email?")
    assert "don't know" in reply and revealed == []


def test_user_confirms_a_write_when_asked():
    assert user().reply(ASK_CONFIRMATION)[0].startswith("Yes")


def test_user_ends_when_goal_reached_and_not_before():
    u = user(goal_writes=["w"], goal_info=["42.50"])
    assert STOP not in u.reply(DONE)[0] and not u.stopped
    u.record_write("w")
    assert STOP not in u.reply(DONE)[0]
    assert STOP in u.reply("The refund is 42.50.")[0] and u.stop_reason == "goal reached"


def test_user_accepts_a_refusal_and_ends():
    u = user(goal_writes=["w"])
    assert STOP in u.reply(REFUSE)[0] and u.stop_reason == "refused"


def test_same_seed_same_phrasings():
    assert user().reply(DONE) == user().reply(DONE)


def test_facts_are_read_from_instructions_and_ids_checked_against_the_database():
    instructions = {
        "known_info": "You are Emma Kim.\nYour user id is emma_kim_9957. Your email is emma.kim@example.com.",
        "reason_for_call": "You want to cancel reservation EHGLP3 and order #W1234567, not PLEASE.",
    }
    facts = facts_from_instructions(instructions, {"#W1234567"}, {"EHGLP3"})
    assert (facts.first_name, facts.last_name, facts.user_id) == ("Emma", "Kim", "emma_kim_9957")
    assert facts.email == "emma.kim@example.com"
    assert facts.order_ids == ("#W1234567",) and facts.reservation_ids == ("EHGLP3",)


def _step_call(env, name, arguments):
    episode = env.unwrapped.episode
    action = episode.encode(ToolCall(name, arguments))
    assert action is not None, f"cannot encode {name} {arguments}"
    return env.step(action)


def test_list_builder_reveals_each_draft_and_start_begins_a_new_list(data_dir):
    env = gym.make("AgentGym/Tau2Retail-v0", data_dir=data_dir, solo=True)
    env.reset(seed=4)
    episode = env.unwrapped.episode
    order_id = next(r.value for r in episode.entities.rows if r.kind == "order_id")
    _step_call(env, "get_order_details", {"order_id": order_id})
    items = [r.value for r in episode.entities.rows if r.kind == "item_id"]
    _step_call(env, "start_item_list", {"item_id": items[0]})
    _step_call(env, "add_to_item_list", {"item_id": items[-1]})
    _step_call(env, "start_item_list", {"item_id": items[-1]})
    lists = [r.value for r in episode.entities.rows if r.kind == "item_ids"]
    assert lists == [[], [items[0]], [items[0], items[-1]], [items[-1]]][: len(lists)] and len(lists) >= 3


def test_structured_book_reservation_takes_list_and_record_arguments(data_dir):
    env = gym.make("AgentGym/Tau2Airline-v0", data_dir=data_dir)
    tasks = env.unwrapped.tasks
    index = next(i for i in range(200) if tasks.get(f"train-{i}").description["purpose"] == "generated book task")
    env.reset(options={"task_id": f"train-{index}"})

    expert, done = ExpertPolicy(env), False
    obs, info = None, {}
    names = []
    while not done:
        action = expert(obs, info)
        assert isinstance(action, np.ndarray)
        obs, reward, terminated, truncated, info = env.step(action)
        names.append(info["tool_call"].name)
        done = terminated or truncated
    assert {"start_flight_list", "start_passenger_list", "start_payment_list", "book_reservation"} <= set(names)
    assert info["metrics"]["success"] == 1.0
    booked = env.unwrapped.database()["reservations"]["HATHAT"]
    assert isinstance(booked["flights"], list) and isinstance(booked["passengers"][0], dict)
