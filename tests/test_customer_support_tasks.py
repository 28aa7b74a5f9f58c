"""Ticket generation, splits, the expert and the random floor, user task files."""

import json
import re

import gymnasium as gym
import pytest

from agentgym_envs.core import TaskFormatError
from agentgym_envs.evaluation import evaluate
from agentgym_envs.scenarios.customer_support import generate_ticket
from agentgym_envs.scenarios.customer_support import phrasings as P
from agentgym_envs.scenarios.customer_support.tickets import KIND_DIFFICULTY

CS = "AgentGym/CustomerSupport-v0"


@pytest.mark.parametrize("split", ["train", "test"])
def test_expert_solves_200_tickets(split):
    metrics = evaluate(CS, "expert", episodes=200, split=split, seed=1000)
    assert metrics["success"] == 1.0 and metrics["tool_reliability"] == 1.0 and metrics["invalid_calls"] == 0.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_random_policy_is_far_below_expert(split):
    metrics = evaluate(CS, "random", episodes=200, split=split, seed=1000)
    assert metrics["success"] <= 0.05 and metrics["tool_reliability"] < 0.2


def test_every_kind_and_difficulty_is_generated():
    kinds = {generate_ticket("train", i).kind for i in range(200)}
    assert kinds == set(KIND_DIFFICULTY)
    assert set(KIND_DIFFICULTY.values()) == {"easy", "medium", "hard"}


def test_same_split_and_index_give_the_same_ticket():
    assert generate_ticket("test", 42) == generate_ticket("test", 42)
    assert generate_ticket("test", 42) != generate_ticket("test", 43)


def test_test_split_uses_phrasings_and_values_never_seen_in_train():
    train = [generate_ticket("train", i) for i in range(300)]
    test = [generate_ticket("test", i) for i in range(300)]
    for kind, by_split in P.PHRASINGS.items():
        assert not set(by_split["train"]) & set(by_split["test"]), kind
    for pool in (P.FIRST_NAMES, P.LAST_NAMES, P.EMAIL_DOMAINS, P.MONTHS, P.ENDPOINTS, P.MIGRATION_SOURCES):
        assert not set(pool["train"]) & set(pool["test"])
    train_values = {v for t in train for v in _values(t)}
    test_values = {v for t in test for v in _values(t)}
    assert not train_values & test_values


def test_a_ticket_worded_by_the_other_split_keeps_its_values():
    for index in range(40):
        own, crossed = generate_ticket("train", index), generate_ticket("train", index, wording="test")
        assert crossed.customer == own.customer and crossed.invoices == own.invoices and crossed.logs == own.logs
        assert own.customer["email"] in crossed.text
        assert _worded_by(crossed.text, P.PHRASINGS[crossed.kind]["test"])
        assert not _worded_by(crossed.text, P.PHRASINGS[crossed.kind]["train"])


def _worded_by(text, phrasings):
    """Whether every fixed fragment of one of ``phrasings`` appears in ``text``."""
    return any(all(part in text for part in re.split(r"\{\w+\}", phrasing)) for phrasing in phrasings)


def _values(ticket):
    yield ticket.customer["email"]
    yield ticket.customer["user_id"]
    for invoice in ticket.invoices:
        yield invoice["invoice_id"]
        yield invoice["amount"]


def test_task_id_option_picks_exactly_that_ticket():
    env = gym.make(CS)
    obs, info = env.reset(options={"task_id": "test-77"})
    assert info["task_id"] == "test-77" and generate_ticket("test", 77).text in obs


def test_unknown_task_id_is_a_clear_error():
    env = gym.make(CS)
    with pytest.raises(ValueError, match="unknown task_id 'bogus'"):
        env.reset(options={"task_id": "bogus"})


def test_split_argument_is_validated():
    with pytest.raises(ValueError, match="split must be one of"):
        gym.make(CS, split="validation")


def _write(tmp_path, lines):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_task_file_loads_users_tickets_and_the_expert_solves_them(tmp_path):
    tickets = [generate_ticket("train", i).to_dict() for i in range(10)]
    for n, t in enumerate(tickets):
        t["task_id"] = f"mine-{n}"
    path = _write(tmp_path, [json.dumps(t) for t in tickets])
    env = gym.make(CS, task_file=str(path))
    obs, info = env.reset(seed=0)
    assert info["task_id"].startswith("mine-")
    assert evaluate(env, "expert", episodes=10)["success"] == 1.0


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda t: t.pop("kind"), "missing field 'kind'"),
        (lambda t: t.update(kind="teleport"), "field 'kind' must be one of"),
        (lambda t: t["customer"].pop("email"), "customer.email"),
        (lambda t: t.update(invoices="none"), "field 'invoices' must be a list"),
        (lambda t: t["invoices"][0].update(amount="ten"), "invoices[0].amount"),
        (lambda t: t.update(surprise=1), "unknown field(s) ['surprise']"),
    ],
)
def test_malformed_task_file_names_line_and_field(tmp_path, mutate, field):
    good = generate_ticket("train", 1).to_dict()
    bad = generate_ticket("train", 2).to_dict()
    mutate(bad)
    path = _write(tmp_path, [json.dumps(good), json.dumps(bad)])
    with pytest.raises(TaskFormatError, match="line 2") as error:
        gym.make(CS, task_file=str(path))
    assert field in str(error.value)


def test_task_file_that_is_not_json_names_the_line(tmp_path):
    path = _write(tmp_path, [json.dumps(generate_ticket("train", 1).to_dict()), "{oops"])
    with pytest.raises(TaskFormatError, match=r"line 2: not valid JSON"):
        gym.make(CS, task_file=str(path))


def test_task_file_line_nested_too_deeply_names_the_line(tmp_path):
    path = _write(tmp_path, [json.dumps(generate_ticket("train", 1).to_dict()), "[" * 100_000 + "]" * 100_000])
    with pytest.raises(TaskFormatError, match=r"line 2: not a task \(JSON nested too deeply\)"):
        gym.make(CS, task_file=str(path))


def test_a_task_id_option_that_is_no_string_is_a_clear_error(tmp_path):
    env = gym.make(CS, task_file=str(_write(tmp_path, [json.dumps(generate_ticket("train", 1).to_dict())])))
    with pytest.raises(ValueError, match=r"unknown task_id \['a'\]"):
        env.reset(options={"task_id": ["a"]})


def test_duplicate_task_ids_are_rejected(tmp_path):
    line = json.dumps(generate_ticket("train", 1).to_dict())
    with pytest.raises(TaskFormatError, match="line 2: duplicate task_id"):
        gym.make(CS, task_file=str(_write(tmp_path, [line, line])))
