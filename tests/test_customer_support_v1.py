"""CustomerSupport-v1 and SupportTeam-v1: three splits disjoint in phrasing units and values (both families),
>= 20 test units a level, the grammar's fragments, the half-hinted level, the expert on every
split, the env checkers on the features observation, and -v0's content pinned."""

from __future__ import annotations

import hashlib
import json
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.scenarios.customer_support import CustomerSupportEnv, generate_ticket
from agentgym_envs.scenarios.customer_support import grammar as G
from agentgym_envs.scenarios.customer_support.tickets import KINDS
from agentgym_envs.wrappers import FlatDiscreteAction

SPLITS = ("train", "validation", "test")
V1_IDS = family("customer_support", 1).ids() + family("support_team", 1).ids()
CS_V1_IDS = family("customer_support", 1).ids()


@pytest.fixture(autouse=True)
def quiet_checkers():
    """The checkers' advice (Text spaces, -v0 out of date) is not under test; only errors count."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _ticket_source(env_id: str, split: str = "train"):
    """The level's task source and its customer-support scenario: the env's, or (the support team's
    single-agent adapter) those of the team env, whose scenario wraps CustomerSupport's."""
    env = gym.make(env_id, split=split).unwrapped
    if hasattr(env, "team"):
        env = getattr(env.team, "base", env.team)
        return env.tasks, env.scenario.base
    return env.tasks, env.scenario


def _units(env_id: str, split: str) -> set[str]:
    """Every phrasing unit the level's split draws from, enumerated from the grammar."""
    kinds = _ticket_source(env_id)[1].kinds
    return {f"{kind}/{unit}" for kind in kinds for unit, _ in G.phrasing_units(kind, split, 1)}


def _values(ticket) -> set[str]:
    """What a ticket's split must not share with the others: its customer, invoices, dates,
    amounts, endpoint or source (read from the logs) and its text."""
    values = {ticket.customer["name"], ticket.customer["email"], ticket.customer["user_id"], ticket.text}
    values |= {f"{i['invoice_id']}|{i['amount']}|{i['date']}" for i in ticket.invoices}
    values |= {re.sub(r"\(req_\w+\)|\d\d:\d\d:\d\dZ|mig-\d+", "", line) for line in ticket.logs[1:]}
    return values


# ------------------------------------------------------------------------ the splits
@pytest.mark.parametrize("env_id", V1_IDS)
def test_every_v1_level_has_at_least_20_test_and_10_validation_units(env_id):
    counts = {split: len(_units(env_id, split)) for split in SPLITS}
    assert counts["test"] >= 20 and counts["validation"] >= 10 and counts["train"] > counts["test"], counts


@pytest.mark.parametrize("env_id", V1_IDS)
def test_v1_splits_are_disjoint_in_units_and_values(env_id):
    units = {split: _units(env_id, split) for split in SPLITS}
    values = {}
    for split in SPLITS:
        tasks, scenario = _ticket_source(env_id, split)
        tickets = [tasks.get(f"{split}-{i}") for i in range(150)]
        assert {scenario.unit_id(t) for t in tickets} <= units[split]
        values[split] = set().union(*map(_values, tickets))
    for a, b in (("train", "validation"), ("train", "test"), ("validation", "test")):
        assert not units[a] & units[b] and not values[a] & values[b], (a, b)


def test_no_fragment_of_one_split_appears_in_another():
    pools = [G.OPENERS, G.CLOSERS, *G.STATEMENTS.values()]
    for pool in pools:
        for a, b in (("train", "validation"), ("train", "test"), ("validation", "test")):
            assert not set(pool[a]) & set(pool[b])


def test_every_statement_holds_its_kinds_key_word_and_no_other_kinds():
    for kind, by_split in G.STATEMENTS.items():
        for statement in (s for split in SPLITS for s in by_split[split]):
            words = set(re.findall(r"[a-z]+", statement.lower()))
            assert G.KEY_WORDS[kind].lower() in words, statement
            assert not words & {w.lower() for k, w in G.KEY_WORDS.items() if k != kind}, statement
    shared = " ".join(f for pool in (G.OPENERS, G.CLOSERS) for split in SPLITS for f in pool[split]).lower()
    assert not set(re.findall(r"[a-z]+", shared)) & {w.lower() for w in G.KEY_WORDS.values()}


def test_v1_test_split_keeps_v0_test_phrasings_and_v0_values():
    for kind in KINDS:
        v0 = {unit for unit, _ in G.phrasing_units(kind, "test", 0)}
        assert v0 <= {unit for unit, _ in G.phrasing_units(kind, "test", 1)}
    for index in range(50):
        old, new = generate_ticket("test", index), generate_ticket("test", index, version=1)
        assert (old.kind, old.customer, old.invoices, old.logs) == (new.kind, new.customer, new.invoices, new.logs)


def test_same_split_index_and_version_give_the_same_ticket():
    for split in SPLITS:
        assert generate_ticket(split, 42, version=1) == generate_ticket(split, 42, version=1)
        assert generate_ticket(split, 42, version=1) != generate_ticket(split, 43, version=1)


def test_validation_tasks_are_named_validation_index_and_v0_has_no_validation_split():
    env = gym.make("AgentGym/CustomerSupport-v1", split="validation")
    _, info = env.reset(options={"task_id": "validation-7"})
    assert info["task_id"] == "validation-7" and info["unit_id"] == f"{env.unwrapped.episode.task.kind}/" \
        f"{generate_ticket('validation', 7, version=1).phrasing}"
    with pytest.raises(ValueError, match="split must be one of"):
        gym.make("AgentGym/CustomerSupport-v0", split="validation")
    with pytest.raises(ValueError, match="no split 'validation'"):
        generate_ticket("validation", 7)


# ------------------------------------------------------------------------ the ladder
def test_level_four_hints_a_fixed_half_of_the_tickets():
    env = gym.make("AgentGym/CustomerSupport-L4-v1", observation="features")
    hinted = []
    for seed in range(200):
        observation, _ = env.reset(seed=seed)
        has_line = "\nCategory: " in env.unwrapped.episode.prompt
        assert has_line == bool(observation[env.unwrapped.features.slices["hint"]].any())
        hinted.append(has_line)
    assert 0.4 < np.mean(hinted) < 0.6
    again = gym.make("AgentGym/CustomerSupport-L4-v1")
    assert hinted[:20] == ["\nCategory: " in again.reset(seed=seed)[0] for seed in range(20)]


def test_a_hint_fraction_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="category_hint"):
        gym.make("AgentGym/CustomerSupport-v1", category_hint=1.5)


@pytest.mark.parametrize("version", [2, "1", True, None])
def test_a_version_the_family_lacks_is_a_clear_error(version):
    with pytest.raises(ValueError, match=r"version must be one of \[0, 1\]"):
        CustomerSupportEnv(version=version)
    with pytest.raises(ValueError, match=r"version must be one of \[0, 1\]"):
        support_team_v0.parallel_env(version=version)


@pytest.mark.parametrize("env_id", CS_V1_IDS)
def test_expert_solves_every_v1_level_on_every_split(env_id):
    for split in SPLITS:
        assert evaluate(env_id, "expert", episodes=10, split=split)["success"] == 1.0, split


@pytest.mark.parametrize("env_id", V1_IDS)
def test_v1_ids_pass_the_env_checkers_on_the_features_observation(env_id):
    def env() -> gym.Env:
        return gym.make(env_id, observation="features", split="validation")

    check_env(env().unwrapped, skip_render_check=True)
    sb3_check_env(env(), warn=False)
    sb3_check_env(FlatDiscreteAction(env()), warn=False)


# ------------------------------------------------------------------------ -v0 pinned
def _digest(scenario) -> str:
    """sha256 of the prompts, kinds and values of tasks train-0..49 and test-0..49."""
    h = hashlib.sha256()
    for split in ("train", "test"):
        source = scenario.task_source(split)
        for i in range(50):
            t = source.get(f"{split}-{i}")
            h.update(json.dumps([scenario.prompt(t), t.kind, t.customer, t.invoices, t.logs, t.issue],
                                sort_keys=True).encode())
    return h.hexdigest()


def test_v0_content_is_unchanged():
    assert _digest(gym.make("AgentGym/CustomerSupport-v0").unwrapped.scenario) == \
        "684c1e0c152a7fc420a219eb8cccd02f7b569bb7824172ab213d320b773305c9"
    assert _digest(gym.make("AgentGym/CustomerSupport-L1-v0").unwrapped.scenario) == \
        "af6d56ade58412a8de7ce7cd054e14962d1790c266ec2ec85d7d0463be20cfc4"
    assert _digest(support_team_v0.parallel_env(level=3, version=0).scenario) == \
        "011e68221acb7753590d2a097af9e0253e662bd15aec2ab7b36d8c3c586dab93"
