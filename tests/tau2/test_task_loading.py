"""Loading tasks.json + split_tasks.json (and db.json) from data_dir= or TAU2_DATA_DIR, with
clear errors for bad data."""

from __future__ import annotations

import copy
import json

import pytest

from agentgym_envs.scenarios.tau2 import (
    AIRLINE,
    DATA_DIR_ENV,
    RETAIL,
    Tau2DataError,
    Tau2FormatError,
    Tau2MissingDataError,
    Tau2SplitError,
    Tau2TaskError,
)
from agentgym_envs.scenarios.tau2.upstream import files


@pytest.fixture(scope="module")
def shared_splits(data_dir):
    return {d: json.loads((data_dir / d / "split_tasks.json").read_text()) for d in ("retail", "airline")}


@pytest.fixture(scope="module")
def shared_raw_tasks(data_dir):
    return {d: json.loads((data_dir / d / "tasks.json").read_text()) for d in ("retail", "airline")}


def write_domain(root, domain, tasks=None, splits=None, tasks_text=None, db_text=None):
    """A data dir holding ``domain``'s files (only those given)."""
    folder = root / domain
    folder.mkdir(parents=True, exist_ok=True)
    if tasks is not None or tasks_text is not None:
        (folder / "tasks.json").write_text(tasks_text if tasks_text is not None else json.dumps(tasks))
    if splits is not None:
        (folder / "split_tasks.json").write_text(json.dumps(splits))
    if db_text is not None:
        (folder / "db.json").write_text(db_text)
    return root


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_shared_copy_loads_the_train_split(data_dir):
    retail, airline = RETAIL.load_tasks("train", data_dir), AIRLINE.load_tasks("train", data_dir)
    assert (len(retail), len(airline)) == (74, 30)
    task = retail[0]
    assert (task.id, task.task_id, task.domain) == ("0", "0", "retail")
    assert task.evaluation_criteria.reward_basis == ("DB", "NL_ASSERTION")
    assert task.evaluation_criteria.actions[0].name == "find_user_id_by_name_zip"
    assert task.evaluation_criteria.actions[0].requestor == "assistant"
    assert task.user_scenario["instructions"]["domain"] == "retail"
    assert task.raw["id"] == "0"


def test_split_naming_ids_the_task_file_lacks_is_a_clear_error(tmp_path, shared_splits, shared_raw_tasks):
    train_ids = set(shared_splits["retail"]["train"])
    train_only = [task for task in shared_raw_tasks["retail"] if task["id"] in train_ids]
    write_domain(tmp_path, "retail", tasks=train_only, splits=shared_splits["retail"])
    with pytest.raises(Tau2SplitError) as info:
        RETAIL.load_tasks("test", tmp_path)
    message = str(info.value)
    assert "split 'test'" in message and "split_tasks.json" in message and "tasks.json lacks" in message
    assert "40 task id(s)" in message and "'5'" in message


def test_unknown_split_name_lists_the_known_splits(data_dir):
    with pytest.raises(Tau2SplitError, match=r"unknown split 'dev'.*\['base', 'test', 'train'\]"):
        AIRLINE.load_tasks("dev", data_dir)


def test_full_upstream_task_file_loads_every_split(data_dir, shared_raw_tasks, shared_splits):
    for domain, tau2 in (("retail", RETAIL), ("airline", AIRLINE)):
        sizes = {split: len(tau2.load_tasks(split, data_dir)) for split in ("train", "test", "base")}
        assert sizes == {s: len(ids) for s, ids in shared_splits[domain].items()}
        assert [t.id for t in tau2.load_tasks("base", data_dir)] == [t["id"] for t in shared_raw_tasks[domain]]
        assert len(tau2.load_tasks(None, data_dir)) == len(shared_raw_tasks[domain])


def test_data_dir_defaults_to_the_environment_variable(data_dir, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir))
    assert len(AIRLINE.load_tasks("train")) == 30
    assert AIRLINE.new_world().db.reservations.get("EHGLP3") is not None
    assert "airline" in AIRLINE.policy().lower()


def test_missing_data_dir_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(files, "installed_package_data", lambda: None)
    with pytest.raises(Tau2MissingDataError, match=DATA_DIR_ENV):
        RETAIL.load_tasks("train")
    with pytest.raises(Tau2MissingDataError, match="does not exist"):
        RETAIL.new_world(tmp_path / "nowhere")
    with pytest.raises(Tau2MissingDataError, match="no 'retail' folder"):
        RETAIL.load_tasks("train", tmp_path)
    write_domain(tmp_path, "retail", tasks=[])
    with pytest.raises(Tau2MissingDataError, match="split_tasks.json does not exist"):
        RETAIL.load_tasks("train", tmp_path)
    with pytest.raises(ValueError):  # bad input, as every caller reports it
        RETAIL.new_world(tmp_path)


def test_corrupt_task_file_names_the_file_and_position(tmp_path):
    write_domain(tmp_path, "retail", tasks_text='[{"id": "0",', splits={"base": []})
    with pytest.raises(
        Tau2FormatError, match=r"retail/tasks.json is not valid JSON: .*line 1, column"
    ) as info:
        RETAIL.load_tasks("base", tmp_path)
    assert isinstance(info.value, (Tau2DataError, ValueError))


def test_malformed_tasks_name_the_task_and_field(tmp_path, shared_raw_tasks):
    good = shared_raw_tasks["airline"][0]
    cases = [
        ({"tasks": 1}, "must hold a JSON list of tasks"),
        ([{**good, "id": 7}], "task #0: field 'id' must be a JSON string"),
        ([good, good], r"task #1 \(id '0'\): duplicate task id"),
        ([{k: v for k, v in good.items() if k != "user_scenario"}], "missing field 'user_scenario'"),
        (
            [_with_criteria(good, reward_basis=["DB", "VIBES"])],
            r"unknown reward_basis value\(s\) \['VIBES'\]",
        ),
        ([_with_criteria(good, communicate_info=[1])], "'communicate_info' must be a list of strings"),
        (
            [_with_criteria(good, actions=[{"name": "get_user_details"}])],
            "action #0: missing field 'arguments'",
        ),
    ]
    for tasks, message in cases:
        write_domain(tmp_path, "airline", tasks)
        with pytest.raises(Tau2FormatError, match=message):
            AIRLINE.load_tasks(None, tmp_path)


def test_actions_with_an_unknown_tool_or_argument_are_rejected(tmp_path, shared_raw_tasks):
    good = shared_raw_tasks["retail"][0]
    action = {"action_id": "0_0", "name": "refund_everything", "arguments": {}}
    write_domain(tmp_path, "retail", [_with_criteria(good, actions=[action])])
    with pytest.raises(
        Tau2TaskError, match=r"task #0 \(id '0'\).*action #0: unknown tool 'refund_everything'"
    ):
        RETAIL.load_tasks(None, tmp_path)
    action = {
        "action_id": "0_0",
        "name": "get_order_details",
        "arguments": {"order_id": "#W1", "verbose": True},
    }
    write_domain(tmp_path, "retail", [_with_criteria(good, actions=[action])])
    with pytest.raises(Tau2TaskError, match=r"tool 'get_order_details' has no argument\(s\) \['verbose'\]"):
        RETAIL.load_tasks(None, tmp_path)


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_reward_basis_defaults_to_db_and_communicate(tmp_path, shared_raw_tasks):
    task = copy.deepcopy(shared_raw_tasks["airline"][0])
    del task["evaluation_criteria"]["reward_basis"]
    write_domain(tmp_path, "airline", [task])
    (loaded,) = AIRLINE.load_tasks(None, tmp_path)
    assert loaded.evaluation_criteria.reward_basis == ("DB", "COMMUNICATE")


def test_corrupt_or_malformed_database_is_a_clear_error(tmp_path):
    write_domain(tmp_path, "airline", db_text='{"flights": {')
    with pytest.raises(Tau2FormatError, match=r"airline/db.json is not valid JSON"):
        AIRLINE.new_world(tmp_path)
    write_domain(tmp_path, "airline", db_text='{"flights": {}, "users": {}}')
    with pytest.raises(Tau2FormatError, match="exactly the top-level keys"):
        AIRLINE.new_world(tmp_path)
    bad_user = {"user_id": "x", "name": {"first_name": "A"}}
    write_domain(
        tmp_path, "airline", db_text=json.dumps({"flights": {}, "users": {"x": bad_user}, "reservations": {}})
    )
    with pytest.raises(Tau2FormatError, match=r"in 'users': User.name: Name: missing field 'last_name'"):
        AIRLINE.new_world(tmp_path)


def _with_criteria(task, **changes):
    task = copy.deepcopy(task)
    task["evaluation_criteria"].update(changes)
    return task
