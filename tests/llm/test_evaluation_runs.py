"""Evaluation runs: pass^k, concurrency and trials, and the per-episode JSONL that resumes."""

from __future__ import annotations

import json

import pytest

from agentgym_envs.evaluation import episode_records, evaluate, pass_at_k, pass_hat_k
from agentgym_envs.evaluation.results import summarize

CS = "AgentGym/CustomerSupport-v0"


def test_pass_hat_k_follows_tau2_definition():
    trials = {"a": [True, True, False, False], "b": [True] * 4}
    assert pass_hat_k(trials, 1) == pytest.approx((0.5 + 1) / 2)
    assert pass_hat_k(trials, 2) == pytest.approx((1 / 6 + 1) / 2)  # C(2,2)/C(4,2) for task a
    assert pass_hat_k(trials, 4) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="fewer than k=5"):
        pass_hat_k(trials, 5)


def test_pass_at_k_is_the_chance_that_one_of_k_trials_succeeds():
    trials = {"a": [True, False, False, False], "b": [False] * 4, "c": [True] * 4}
    assert pass_at_k(trials, 1) == pytest.approx(pass_hat_k(trials, 1))
    assert pass_at_k(trials, 2) == pytest.approx((1 - 3 / 6 + 0 + 1) / 3)  # 1 - C(3,2)/C(4,2) for task a
    assert pass_at_k(trials, 4) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="fewer than k=5"):
        pass_at_k(trials, 5)


def test_an_episode_ended_by_an_error_is_a_failure_and_leaves_other_means_alone():
    records = [
        {"task": 0, "trial": 0, "return": 2.0, "metrics": {"success": 1.0, "turns": 3.0}, "error": None},
        {"task": 0, "trial": 1, "return": 0.0, "metrics": {"success": 0.0}, "error": "unreachable"},
    ]
    summary = summarize(records, trials=2)
    assert summary["success"] == 0.5 and summary["turns"] == 3.0 and summary["return"] == 2.0
    assert summary["errors"] == 1.0 and summary["pass^1"] == 0.5 and summary["pass^2"] == 0.0
    assert summary["pass@2"] == 1.0 and "pass@1" not in summary


def test_concurrency_and_trials_give_the_sequential_metrics():
    sequential = evaluate(CS, "expert", episodes=4, seed=3)
    parallel = evaluate(CS, "expert", episodes=4, seed=3, trials=2, concurrency=3)
    assert parallel["episodes"] == 8 and parallel["pass^2"] == 1.0
    for key in ("success", "tokens_used", "turns", "return"):
        assert parallel[key] == pytest.approx(sequential[key])


def test_results_file_is_never_overwritten_and_resumes_only_the_same_evaluation(tmp_path):
    path = tmp_path / "episodes.jsonl"
    evaluate(CS, "expert", episodes=2, output=str(path))
    before = path.read_text()
    with pytest.raises(ValueError, match="--resume"):
        evaluate(CS, "expert", episodes=2, output=str(path))
    with pytest.raises(ValueError, match="differs in policy"):
        evaluate(CS, "random", episodes=2, output=str(path), resume=True)
    assert path.read_text() == before


def test_resume_plays_only_the_missing_episodes_and_drops_a_torn_line(tmp_path):
    path = tmp_path / "episodes.jsonl"
    evaluate(CS, "expert", episodes=2, output=str(path))
    finished = path.read_text()
    path.write_text(finished + '{"task": 2, "trial": 0, "ret')  # a kill in the middle of a write
    summary = evaluate(CS, "expert", episodes=4, output=str(path), resume=True)
    lines = path.read_text().splitlines()
    assert path.read_text().startswith(finished)
    assert [(r["task"], r["trial"]) for r in map(json.loads, lines[1:])] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert summary["episodes"] == 4 and summary["success"] == 1.0


def test_a_header_cut_short_by_a_kill_is_written_again_on_resume(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"config": {"env')  # killed while writing the header
    evaluate(CS, "expert", episodes=2, output=str(path), resume=True)
    summary = evaluate(CS, "expert", episodes=3, output=str(path), resume=True)
    header, *episodes = map(json.loads, path.read_text().splitlines())
    assert "config" in header and [(r["task"], r["trial"]) for r in episodes] == [(0, 0), (1, 0), (2, 0)]
    assert summary["episodes"] == 3


@pytest.mark.parametrize(("line", "problem"), [(b"\xff\xfe{}", "not UTF-8 text"),
                                               (b"[" * 100_000 + b"]" * 100_000, "not JSON this evaluation wrote")])
def test_a_results_line_of_no_json_text_is_a_clear_error_naming_the_line(tmp_path, line, problem):
    path = tmp_path / "episodes.jsonl"
    evaluate(CS, "expert", episodes=1, output=str(path))
    path.write_bytes(path.read_bytes() + line + b"\n")
    with pytest.raises(ValueError, match=f"episodes.jsonl, line 3: {problem}"):
        evaluate(CS, "expert", episodes=2, output=str(path), resume=True)


def test_settings_that_cannot_work_are_clear_errors(capsys):
    import gymnasium as gym

    from agentgym_envs.cli import main
    from agentgym_envs.evaluation import ExpertPolicy

    env = gym.make(CS)
    with pytest.raises(ValueError, match="agent callable plays one env"):
        evaluate(CS, ExpertPolicy(env), episodes=2, concurrency=2)
    with pytest.raises(ValueError, match="need an env id"):
        evaluate(env, "expert", episodes=2, concurrency=2)
    assert main(["eval", "math", "--policy", "hf"]) == 2
    assert "--policy hf needs --model" in capsys.readouterr().err
    assert main(["eval", "math", "--policy", "openai", "random", "--model", "m"]) == 2
    assert "evaluates one model" in capsys.readouterr().err


def test_episode_records_carry_the_graders_outcome_and_on_request_the_conversation():
    kept = episode_records("AgentGym/Math-v0", "expert", episodes=2, split="train", keep_messages=True, action_mode="text")
    assert [record["task"] for record in kept] == [0, 1]
    assert all(record["outcome"]["success"] and "expected" in record["outcome"]["reason"] for record in kept)
    assert all(record["messages"][1]["role"] == "user" and record["messages"][-1]["role"] == "tool" for record in kept)
    assert "messages" not in episode_records("AgentGym/Math-v0", "expert", episodes=1)[0]
