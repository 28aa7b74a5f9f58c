"""The LLM user and the NL-assertion judge against a real OpenAI-compatible server
(``transformers serve`` with the locally built micro model: real HTTP, real greedy
generation; the micro model's text is gibberish, which is fine: the loop is what is tested),
and against endpoints that are down."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.evaluation import ExpertPolicy, run_episode
from agentgym_envs.inference import ChatClient
from agentgym_envs.scenarios.tau2.llm_user import CONTROL_TOKENS, USER_GUIDELINES, parse_judgement, user_scenario_text

pytest.importorskip("openai")
RETAIL = "AgentGym/Tau2Retail-v0"
NL_TASK = "2"  # a retail train task scored on DB x NL_ASSERTION, which the expert solves


def _respond(message: str) -> str:
    return json.dumps({"name": "respond", "arguments": {"message": message}})


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_the_user_reads_only_its_scenario_and_knows_the_control_tokens(data_dir):
    task = {t.id: t for t in gym.make(RETAIL, data_dir=data_dir).unwrapped.scenario.domain.load_tasks("train", data_dir)}[NL_TASK]
    text = user_scenario_text(task.user_scenario)
    instructions = task.user_scenario["instructions"]
    assert instructions["reason_for_call"] in text and instructions["known_info"] in text
    assert all(token in USER_GUIDELINES for token in CONTROL_TOKENS)
    assert "nl_assertions" not in text and task.evaluation_criteria.nl_assertions[0] not in text


def test_judge_answers_are_parsed_strictly():
    answer = 'Sure.\n```json\n{"results": [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": true},' \
             ' {"expectedOutcome": "b", "reasoning": "s", "metExpectation": false}]}\n```'
    judgement = parse_judgement(answer, 2)
    assert judgement.met == (True, False) and judgement.error is None and not judgement.all_met
    assert parse_judgement(answer, 3).error.startswith("NL judge: expected 3 boolean verdicts")
    assert parse_judgement("all good!", 1).error.startswith("NL judge: the answer is not the expected JSON")
    assert parse_judgement('{"results": [{"metExpectation": "yes"}]}', 1).error is not None


def test_llm_user_talks_through_a_real_server(server, micro_model, data_dir):
    env = gym.make(RETAIL, data_dir=data_dir, source="real", split="train", action_mode="text", max_turns=2,
                   user="llm", user_model=str(micro_model), user_base_url=server, llm_max_tokens=12)
    observation, info = env.reset(options={"task_id": NL_TASK})
    session = env.unwrapped.episode.world
    opening = session.transcript[0][1]
    assert observation.startswith("CUSTOMER: " + opening[:20].strip()) or opening == ""
    assert session.user.messages[1] == {"role": "user", "content": "Hi! How can I help you today?"}
    assert session.user.error is None

    _, reward, terminated, truncated, info = env.step(_respond("Could you give me your email address?"))
    reply = info["messages"][-1]["content"]
    # the simulator's reply is exactly what the server generates for its conversation (greedy)
    direct = ChatClient(str(micro_model), server, request_options={"temperature": 0.0, "max_tokens": 12})
    assert reply == (direct.chat(session.user.messages[:-1]).message.get("content") or "")
    assert session.transcript[-2:] == [("assistant", "Could you give me your email address?"), ("user", reply)]
    if not terminated:
        _, reward, terminated, truncated, info = env.step(_respond("Thank you."))
    assert terminated or truncated
    assert info["metrics"]["endpoint_error"] == 0.0
    env.close()


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_judge_runs_end_to_end_and_an_unusable_verdict_is_a_recorded_failure(server, micro_model, data_dir):
    env = gym.make(RETAIL, data_dir=data_dir, source="real", split="train", action_mode="text",
                   nl_judge_model=str(micro_model), nl_judge_base_url=server, llm_max_tokens=16)
    _, metrics = run_episode(env, ExpertPolicy(env), options={"task_id": NL_TASK})
    assert metrics["db"] == 1.0 and metrics["nl_not_evaluated"] == 0.0
    # the micro model cannot write the verdict JSON: the judge's failure is recorded, never a pass
    assert metrics["success"] == 0.0 and metrics["endpoint_error"] == 1.0
    assert env.unwrapped.episode.world.score.judge_error.startswith("NL judge:")
    env.close()


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_without_a_judge_nothing_changes(data_dir):
    env = gym.make(RETAIL, data_dir=data_dir, source="real", split="train", action_mode="text")
    _, metrics = run_episode(env, ExpertPolicy(env), options={"task_id": NL_TASK})
    assert metrics["success"] == 1.0 and metrics["nl_not_evaluated"] == 1.0 and metrics["endpoint_error"] == 0.0
    env.close()


def test_a_user_endpoint_that_is_down_ends_the_episode_with_a_recorded_error(free_port, data_dir):
    env = gym.make(RETAIL, data_dir=data_dir, source="real", split="train", action_mode="text",
                   user="llm", user_model="m", user_base_url=f"http://127.0.0.1:{free_port}/v1", llm_max_retries=0)
    observation, _ = env.reset(options={"task_id": NL_TASK})
    assert "the user simulator failed" in observation
    _, reward, terminated, _, info = env.step(_respond("Hello?"))
    assert terminated and reward == 0.0 and info["metrics"]["success"] == 0.0
    assert info["metrics"]["endpoint_error"] == 1.0
    assert "user simulator:" in info["outcome"]["reason"] and "unreachable" in info["outcome"]["reason"]
    env.close()


@pytest.mark.usefixtures("reference_tasks")  # names tasks of the reference copy
def test_a_judge_endpoint_that_is_down_fails_the_episode_with_a_recorded_error(free_port, data_dir):
    env = gym.make(RETAIL, data_dir=data_dir, source="real", split="train", action_mode="text", nl_judge_model="m",
                   nl_judge_base_url=f"http://127.0.0.1:{free_port}/v1", llm_max_retries=0)
    _, metrics = run_episode(env, ExpertPolicy(env), options={"task_id": NL_TASK})
    assert metrics["success"] == 0.0 and metrics["endpoint_error"] == 1.0 and metrics["db"] == 1.0
    env.close()


def test_unknown_user_kind_is_a_clear_error(data_dir):
    with pytest.raises(ValueError, match="user must be one of"):
        gym.make(RETAIL, data_dir=data_dir, user="human")


def test_eval_plays_every_task_k_times_and_writes_pass_k_per_domain(server, micro_model, data_dir, tmp_path):
    from agentgym_envs.cli import main

    episodes, board = tmp_path / "episodes.jsonl", tmp_path / "board.json"
    common = ["--policy", "openai", "--model", str(micro_model), "--base-url", server, "--episodes", "2",
              "--trials", "2", "--split", "test", "--max-turns", "2", "--max-tokens", "8", "--user", "llm",
              "--user-model", str(micro_model), "--user-base-url", server, "--llm-max-tokens", "8",
              "--data-dir", str(data_dir), "--leaderboard", str(board)]
    assert main(["eval", "tau2_retail", *common, "--output", str(episodes)]) == 0
    records = [json.loads(line) for line in episodes.read_text().splitlines()[1:]]
    assert sorted((r["task"], r["trial"]) for r in records) == [("5", 0), ("5", 1), ("9", 0), ("9", 1)]  # first test ids
    results = json.loads(board.read_text())
    assert results["model_name"] == str(micro_model) and set(results["results"]) == {"retail"}
    retail = results["results"]["retail"]
    assert set(retail) == {"pass_1", "pass_2", "tasks", "trials", "episodes", "errors"}
    assert (retail["tasks"], retail["trials"], retail["episodes"]) == (2, 2, 4)
    assert 0.0 <= retail["pass_2"] <= retail["pass_1"] <= 100.0
    assert "LLM" in results["methodology"]["user_simulator"]
