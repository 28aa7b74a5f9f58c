"""The tau2 families' versions: ``-v0`` keeps its tasks, ``-v1`` adds a validation split
disjoint from train and test in its unit (the user of a generated task, a real task) and in the
users' values, with at least 20 test units at every level."""

from __future__ import annotations

import hashlib
import json
from itertools import combinations

import gymnasium as gym
import numpy as np
import pytest

from agentgym_envs.docs import documented, page
from agentgym_envs.levels import FAMILIES, content_version, family, levels_table
from agentgym_envs.scenarios.tau2 import get_domain
from agentgym_envs.scenarios.tau2.env import Tau2AirlineEnv, Tau2RetailEnv
from agentgym_envs.scenarios.tau2.scenario import VALIDATION_EVERY, tasks_within

from .conftest import DATA_DIR, require_data

V1_SPLITS = ("train", "validation", "test")
GENERATED_IDS = [env_id for fam in FAMILIES if fam.name in ("tau2_retail", "tau2_airline") and fam.version >= 1
                 for env_id in fam.ids()]
# sha256 of tasks train-0..49 and test-0..49 of each -v0 top (id, instructions, reference calls), and of
# telecom's train and test task ids, as -v0 held them before -v1 existed
V0_CONTENT = {"retail": "46270fb04133e061bf6701e40ac2550dd4fb13ca179f5402562485f176fb9c69",
              "airline": "fea48fe23f3532149ec5af83d80b9057e60766d93cb4956f5947a89bbcb6d404",
              "telecom": "7a0236bebf76bc0e89d0db6ddc7cc80446936581f7d8ace8e1f0e2f0f85f9fee"}


def make(env_id: str, **kwargs) -> gym.Env:
    if "Telecom" not in env_id:
        require_data(DATA_DIR / "retail" / "db.json")
        kwargs["data_dir"] = DATA_DIR
    return gym.make(env_id, **kwargs)


def content(task) -> list:
    return [task.id, task.user_scenario["instructions"], [(a.name, a.arguments) for a in task.evaluation_criteria.actions]]


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_v0_generated_tasks_keep_their_content(domain):
    tasks = make(f"AgentGym/Tau2{domain.capitalize()}-v0").unwrapped.tasks
    assert digest([content(tasks.get(f"{split}-{i}")) for split in ("train", "test") for i in range(50)]) == V0_CONTENT[domain]


def test_v0_telecom_splits_keep_their_tasks(telecom_dir):
    ids = [[task.id for task in make("AgentGym/Tau2Telecom-v0", split=split).unwrapped.tasks.tasks] for split in ("train", "test")]
    assert hashlib.sha256(json.dumps(ids).encode()).hexdigest() == V0_CONTENT["telecom"]


@pytest.mark.parametrize("domain", ["Retail", "Airline"])
def test_v1_test_split_is_v0s(domain):
    v0, v1 = (make(f"AgentGym/Tau2{domain}-v{v}", split="test").unwrapped.tasks for v in (0, 1))
    assert all(v0.get(f"test-{i}") == v1.get(f"test-{i}") for i in range(30))


def users_by_split(env_id: str) -> dict[str, set[str]]:
    """Every user each split of a generated level can draw, enumerated from the generator."""
    scenario = make(env_id).unwrapped.scenario
    kinds = tuple(scenario.kinds or scenario.generator.kinds)
    return {split: scenario.generator.split_users(split, kinds) for split in V1_SPLITS}


def user_values(task) -> set[str]:
    """The values that name a generated task's user: ids, email, order / reservation and
    payment ids, a new address."""
    facts = task.user_scenario["facts"]
    values = {facts["user_id"], facts["email"], *facts["order_ids"], *facts["reservation_ids"]} - {None}
    values |= {str(facts["new_address"])} if facts["new_address"] else set()
    for action in task.evaluation_criteria.actions:
        values |= {str(action.arguments[key]) for key in ("user_id", "payment_method_id", "payment_id") if key in action.arguments}
    return values


@pytest.mark.parametrize("env_id", GENERATED_IDS)
def test_generated_v1_splits_are_disjoint_in_users_and_values_with_enough_units(env_id):
    users = users_by_split(env_id)
    assert len(users["test"]) >= 20 and len(users["validation"]) >= 10
    assert all(not users[a] & users[b] for a, b in combinations(V1_SPLITS, 2))
    values = {}
    for split in V1_SPLITS:
        env = make(env_id, split=split).unwrapped
        rng = np.random.default_rng(0)
        tasks = [env.tasks.sample(rng) for _ in range(25)]
        assert {env.scenario.unit_id(task) for task in tasks} <= users[split]
        assert all(task.id.startswith(f"{split}-") for task in tasks)
        values[split] = set().union(*map(user_values, tasks))
    assert all(not values[a] & values[b] for a, b in combinations(V1_SPLITS, 2))


def test_telecom_v1_levels_hold_disjoint_tasks_validation_from_upstreams_train_and_its_test(telecom_dir):
    scenario = make("AgentGym/Tau2Telecom-v1").unwrapped.scenario
    upstream = {split: scenario.domain.load_tasks(split, scenario.data_dir) for split in ("train", "test")}
    tasks = {split: scenario.task_source(split).tasks for split in V1_SPLITS}
    assert [t.id for t in tasks["test"]] == [t.id for t in upstream["test"]]
    train = sorted(task.id for task in upstream["train"])
    assert VALIDATION_EVERY == 3 and sorted(t.id for t in tasks["validation"]) == train[::3]
    assert sorted(t.id for t in tasks["train"] + tasks["validation"]) == train
    for level in family("tau2_telecom", 1).levels:
        units = {split: {t.id for t in tasks_within(tasks[split], level.kwargs["max_actions"])} for split in V1_SPLITS}
        assert len(units["test"]) >= 20 and len(units["validation"]) >= 10, level.env_id


def test_real_retail_and_airline_tasks_get_a_validation_split_at_v1_only():
    sizes = {split: len(make("AgentGym/Tau2Airline-v1", source="real", split=split).unwrapped.tasks.tasks)
             for split in V1_SPLITS}
    assert sizes == {"train": 20, "validation": 10, "test": 20}
    with pytest.raises(ValueError, match="split must be one of"):
        make("AgentGym/Tau2Airline-v0", source="real", split="validation")
    with pytest.raises(ValueError, match="split must be one of"):
        make("AgentGym/Tau2Retail-v0", split="validation")


def test_info_names_the_user_of_a_generated_task_and_the_id_of_a_real_one():
    _, info = make("AgentGym/Tau2Retail-L0-v1", split="validation").reset(seed=0)
    env = make("AgentGym/Tau2Airline-v1", source="real")
    _, real = env.reset(seed=0)
    assert info["unit_id"].count("_") >= 2 and info["task_id"].startswith("validation-")
    assert real["unit_id"] == env.unwrapped.episode.task.id


@pytest.mark.parametrize(("env_class", "versions"), [(Tau2RetailEnv, "0, 1, 2"), (Tau2AirlineEnv, "0, 1")])
@pytest.mark.parametrize("version", [3, "1", True])
def test_a_bad_version_is_a_clear_error(env_class, versions, version):
    with pytest.raises(ValueError, match=rf"version must be one of \[{versions}\]"):
        env_class(data_dir=DATA_DIR, version=version)


@pytest.mark.parametrize(("env_class", "latest"), [(Tau2RetailEnv, 2), (Tau2AirlineEnv, 1)])
def test_an_env_made_without_a_version_is_its_familys_latest(env_class, latest):
    require_data(DATA_DIR / "retail" / "db.json")
    assert env_class(data_dir=DATA_DIR).version == latest


@pytest.mark.parametrize("env_id", ["AgentGym/Tau2Airline-L1-v1", "AgentGym/Tau2Retail-v1", "AgentGym/Tau2Retail-L1-v2"])
def test_from_v1_on_512_flat_calls_a_tool(env_id):
    assert make(env_id).unwrapped.flat_capacity == 512


def test_v0_keeps_64_flat_calls_a_tool():
    assert make("AgentGym/Tau2Airline-L1-v0").unwrapped.flat_capacity == 64


@pytest.mark.parametrize("name", ["tau2_retail", "tau2_airline", "tau2_telecom"])
def test_env_page_holds_the_levels_table_of_each_version(name):
    text = page(documented(name))
    versions = [fam.version for fam in FAMILIES if fam.name == name]
    assert len(versions) >= 2 and all(levels_table(name, version) in text for version in versions)


def test_retail_v2_builds_its_scenario_on_v1s_tasks_splits_and_spaces():
    assert content_version("tau2_retail", 2) == 1 and content_version("tau2_airline", 1) == 1
    env = make("AgentGym/Tau2Retail-L1-v2").unwrapped
    assert (env.version, env.scenario.version) == (2, 1)


def test_retail_v2_adds_a_rung_without_the_payment_change_and_keeps_v1s_levels_above_it():
    kinds = {env_id: make(env_id).unwrapped.scenario.kinds for env_id in
             ("AgentGym/Tau2Retail-L1-v2", "AgentGym/Tau2Retail-L2-v2", "AgentGym/Tau2Retail-L1-v1")}
    assert set(kinds["AgentGym/Tau2Retail-L1-v2"]) == {"cancel", "modify_address", "return"}
    assert kinds["AgentGym/Tau2Retail-L2-v2"] == kinds["AgentGym/Tau2Retail-L1-v1"]


@pytest.mark.parametrize(("v2", "v1"), [("L0-v2", "L0-v1"), ("L2-v2", "L1-v1"), ("L3-v2", "L2-v1"), ("v2", "v1")])
def test_retail_v2_levels_hold_the_tasks_of_their_v1_counterparts(v2, v1):
    tasks = [make(f"AgentGym/Tau2Retail-{env}").unwrapped.tasks for env in (v2, v1)]
    ids = [f"{split}-{i}" for split in V1_SPLITS for i in range(10)]
    assert [content(tasks[0].get(i)) for i in ids] == [content(tasks[1].get(i)) for i in ids]


def test_a_task_files_tasks_are_their_own_units(tmp_path):
    require_data(DATA_DIR / "airline" / "tasks.json")
    tasks = get_domain("airline").load_tasks("train", DATA_DIR)[:2]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(task.raw) for task in tasks) + "\n")
    _, info = make("AgentGym/Tau2Airline-v1", task_file=path).reset(options={"task_id": tasks[1].id})
    assert info["unit_id"] == tasks[1].id


def test_cli_evaluates_the_real_validation_tasks_the_v1_env_holds(tmp_path, capsys):
    from agentgym_envs.cli import main

    require_data(DATA_DIR / "airline" / "db.json")
    episodes = tmp_path / "episodes.jsonl"
    assert main(["eval", "tau2_airline", "--source", "real", "--split", "validation", "--policy", "expert",
                 "--action-mode", "text", "--episodes", "3", "--data-dir", str(DATA_DIR), "--output", str(episodes)]) == 0
    played = [json.loads(line)["task"] for line in episodes.read_text().splitlines()[1:]]
    held = [task.id for task in make("AgentGym/Tau2Airline-v1", source="real", split="validation").unwrapped.tasks.tasks]
    assert played == held[:3] and "its 3 real tasks" in capsys.readouterr().out
    upstream = {task.id for task in get_domain("airline").load_tasks("train", DATA_DIR)}
    assert set(played) <= upstream  # carved out of upstream's train split
    assert main(["eval", "AgentGym/Tau2Airline-v0", "--source", "real", "--split", "validation", "--policy", "expert",
                 "--data-dir", str(DATA_DIR)]) == 2
    assert "split must be one of" in capsys.readouterr().err


def test_cli_plays_seeded_draws_of_real_tasks_as_the_trainers_evaluation_does(telecom_dir, tmp_path, capsys):
    from agentgym_envs.cli import main

    episodes = tmp_path / "episodes.jsonl"
    assert main(["eval", "AgentGym/Tau2Telecom-L0-v1", "--source", "real", "--seeded", "--policy", "expert",
                 "--action-mode", "text", "--episodes", "3", "--seed", "7", "--data-dir", str(telecom_dir),
                 "--output", str(episodes)]) == 0
    played = [json.loads(line)["task_id"] for line in episodes.read_text().splitlines()[1:]]
    env = gym.make("AgentGym/Tau2Telecom-L0-v1", split="test", data_dir=str(telecom_dir))
    drawn = [env.reset(seed=seed)[1]["task_id"] for seed in (7, 8, 9)]
    assert played == drawn and "seeds 7..9" in capsys.readouterr().out
    assert main(["eval", "AgentGym/Tau2Telecom-L0-v1", "--source", "real", "--seeded", "--policy", "expert",
                 "--episodes", "1", "--data-dir", str(telecom_dir)]) == 0
    for where in (["AgentGym/Math-L0-v1"], ["AgentGym/Tau2Retail-L0-v1", "--source", "generated"]):
        assert main(["eval", *where, "--seeded", "--policy", "expert", "--episodes", "1"]) == 2
        assert "--seeded draws a tau2 env's real tasks by seed" in capsys.readouterr().err
