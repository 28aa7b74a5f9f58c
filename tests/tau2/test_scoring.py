"""Scoring follows tau2's evaluator: DB hash comparison, COMMUNICATE substrings, the product
over the reward basis, NL assertions reported as not evaluated."""

from __future__ import annotations

import dataclasses

import pytest

from agentgym_envs.scenarios.tau2 import score_episode


def _gold_calls(task):
    return [(a.name, a.arguments) for a in task.evaluation_criteria.actions]


def test_gold_replay_scores_full_db_and_communicate_on_every_train_task(domain, data_dir, train_tasks):
    for task in train_tasks[domain].values():
        criteria = task.evaluation_criteria
        expert_messages = [f"Here you go: {info}." for info in criteria.communicate_info or ()]
        score = score_episode(task, _gold_calls(task), expert_messages, data_dir=data_dir)
        assert score.components["DB"] == 1.0, task.id
        assert score.components["COMMUNICATE"] == 1.0, task.id
        assert score.reward == 1.0 and score.success, task.id
        assert score.db_hash == score.gold_db_hash


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_airline_gold_replay_is_a_complete_success_when_the_info_is_communicated(data_dir, train_tasks):
    task = train_tasks["airline"]["14"]
    score = score_episode(task, _gold_calls(task), ["We refund $327, $1,000 and $1,786."], data_dir=data_dir)
    assert score.reward_basis == ("DB", "COMMUNICATE")
    assert score.complete and score.success


def test_missing_communicate_info_scores_zero_when_communicate_is_in_the_basis(data_dir, train_tasks):
    task = train_tasks["airline"]["14"]
    score = score_episode(task, _gold_calls(task), ["We refund $327 and $1,000."], data_dir=data_dir)
    assert score.components == {**score.components, "DB": 1.0, "COMMUNICATE": 0.0}
    assert [c.met for c in score.communicate_checks] == [True, True, False]
    assert score.reward == 0.0


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_nl_assertions_are_reported_as_not_evaluated(data_dir, train_tasks):
    task = train_tasks["retail"]["2"]
    assert task.evaluation_criteria.reward_basis == ("DB", "NL_ASSERTION")
    assert task.evaluation_criteria.nl_assertions
    score = score_episode(task, _gold_calls(task), [], data_dir=data_dir)
    assert score.not_evaluated == ("NL_ASSERTION",) and not score.complete
    assert "NL_ASSERTION" not in score.components
    assert score.reward == 1.0  # DB only: an upper bound of upstream's reward


def test_a_wrong_write_scores_zero(data_dir, train_tasks):
    task = train_tasks["retail"]["0"]
    calls = _gold_calls(task)
    name, arguments = calls[-1]
    assert name == "exchange_delivered_order_items"
    wrong = {**arguments, "new_item_ids": ["6342039236", arguments["new_item_ids"][1]]}
    score = score_episode(task, calls[:-1] + [(name, wrong)], [], data_dir=data_dir)
    assert score.components["DB"] == 0.0 and score.reward == 0.0
    assert score.db_hash != score.gold_db_hash


def test_a_missing_write_scores_zero_and_extra_reads_are_harmless(data_dir, train_tasks):
    task = train_tasks["airline"]["7"]
    calls = _gold_calls(task)
    reads = [("get_user_details", {"user_id": "nobody"}), ("list_all_airports", {})]
    messages = ["1628"]
    assert score_episode(task, reads + calls + reads, messages, data_dir=data_dir).reward == 1.0
    writes = [i for i, (name, _) in enumerate(calls) if name.startswith(("update", "cancel", "book"))]
    without_last_write = calls[: writes[-1]] + calls[writes[-1] + 1 :]
    assert score_episode(task, without_last_write, messages, data_dir=data_dir).reward == 0.0


def test_a_task_without_actions_requires_an_unchanged_database(data_dir, train_tasks):
    task = train_tasks["airline"]["0"]
    assert task.evaluation_criteria.actions == ()
    assert score_episode(task, [], [], data_dir=data_dir).reward == 1.0
    cancel = ("cancel_reservation", {"reservation_id": "EHGLP3"})
    assert score_episode(task, [cancel], [], data_dir=data_dir).reward == 0.0


def test_unknown_tools_and_failed_writes_do_not_change_the_replayed_database(data_dir, train_tasks):
    task = train_tasks["airline"]["0"]
    calls = [("no_such_tool", {}), ("cancel_reservation", {"reservation_id": "NOPE00"})]
    assert score_episode(task, calls, [], data_dir=data_dir).reward == 1.0


def test_reference_actions_that_error_are_skipped_and_reported(data_dir, train_tasks):
    task = train_tasks["retail"]["105"]
    score = score_episode(task, [], [], data_dir=data_dir)
    assert score.components["DB"] == 1.0  # its only write fails upstream too
    assert score.gold_errors == (  # (upstream's action id in task 105 is "106_0")
        "106_0 (exchange_delivered_order_items): "
        "Error: Insufficient gift card balance to pay for the price difference",
    )


def test_communicate_matching_ignores_case_and_commas_in_the_message(data_dir, train_tasks):
    task = train_tasks["retail"]["24"]  # no actions; communicate_info ['polyester', 'cotton']
    score = score_episode(task, [], ["It is made of POLYESTER,", "and Cot,ton."], data_dir=data_dir)
    assert all(check.met for check in score.communicate_checks)


def test_truncated_episode_scores_zero(data_dir, train_tasks):
    task = train_tasks["airline"]["0"]
    score = score_episode(task, [], [], data_dir=data_dir, ended_normally=False)
    assert score.reward == 0.0 and not score.success


def test_task_without_criteria_scores_one(train_tasks):
    task = dataclasses.replace(train_tasks["airline"]["0"], evaluation_criteria=None)
    assert score_episode(task, [("cancel_reservation", {"reservation_id": "EHGLP3"})], []).reward == 1.0


def test_content_comparison_agrees_with_hash_comparison(data_dir, train_tasks):
    task = train_tasks["airline"]["14"]
    calls = _gold_calls(task)
    for tried in (calls, calls[:-1], calls + calls[-1:]):
        with_hashes = score_episode(task, tried, [], data_dir=data_dir)
        without = score_episode(task, tried, [], data_dir=data_dir, with_hashes=False)
        assert without.db_hash is None and without.gold_db_hash is None
        assert with_hashes.components["DB"] == without.components["DB"] == float(with_hashes.db_hash == with_hashes.gold_db_hash)
