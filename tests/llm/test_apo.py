"""APO (``agentgym train ENV --algo apo``): beam search over system prompts, end to end against a
real OpenAI-compatible server (``server``: ``transformers serve`` with the micro model) as agent
and optimiser, resume, endpoint errors, and the pieces the search is made of."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainers.lifecycle import load_trained_policy, train
from trainers.llm.apo import Config, State, Version, fenced, hints, search_proposals
from trainers.llm.prompting import Prompt, PromptedPolicy, consecutive_runs, render_demo, with_system_prompt
from trainers.run import TrainRequest

# a few short episodes: two tool calls each, replies of a few tokens
SMALL = {"rounds": 2, "beam_width": 2, "train_batch": 2, "val_episodes": 1, "candidates_per_prompt": 1,
         "expert_demos": 2, "max_tokens": 8, "optimizer_max_tokens": 24, "concurrency": 2, "timeout": 60,
         "env_kwargs": {"max_turns": 2}}


def apo_run(tmp_path, overrides, resume=False):
    return train(TrainRequest("math", algo="apo", run_root=str(tmp_path), eval_episodes=2, resume=resume,
                              progress=False, overrides=overrides))


def state_of(run_dir) -> dict:
    return json.loads((run_dir / "apo_state.json").read_text())


def test_apo_runs_two_rounds_with_both_proposers_and_keeps_every_prompt_version(tmp_path, server, micro_model):
    model = str(micro_model)
    result = apo_run(tmp_path, {**SMALL, "model": model, "base_url": server, "optimizer_model": model,
                                "optimizer_base_url": server})
    run_dir = tmp_path / "Math-v0__apo__seed0"
    state = state_of(run_dir)
    assert state["round"] == 2
    prompts = state["prompts"]
    assert prompts["p000"]["proposer"] == "seed" and prompts["p000"]["text"].startswith("You are solving a math problem")
    assert {p["proposer"] for p in prompts.values()} <= {"seed", "critique", "search"}
    assert any(p["proposer"] == "search" for p in prompts.values())
    critiques = state["critiques"]  # the optimiser was asked; the micro model's edits may be empty
    assert critiques["requested"] >= 1 and critiques["failed"] == 0
    assert critiques["requested"] == critiques["edited"] + critiques["empty"]
    assert all(p["val_success"] is not None for p in prompts.values() if p["id"] in state["beam"])
    # episodes: the seed's validation, each round's batch per beam prompt, each new prompt's validation
    played = sum(SMALL["train_batch"] for p in prompts.values() for _ in p["train_success"])
    played += SMALL["val_episodes"] * sum(p["val_success"] is not None for p in prompts.values())
    assert state["episodes"] == played
    best = prompts[state["best"]]
    assert (run_dir / "best_prompt.txt").read_text() == best["text"] + "\n"
    events = EventAccumulator(str(run_dir)).Reload()
    assert [e.step for e in events.Scalars("apo/val_success")] == [0, 1, 2]
    assert [e.step for e in events.Scalars("apo/train_success")] == [1, 2]
    assert result.test_metrics["episodes"] == 2.0
    policy = load_trained_policy(run_dir / "apo_state.json")
    assert policy.system_prompt == best["text"]


def test_apo_resumes_from_its_last_round(tmp_path, server, micro_model):
    settings = {**SMALL, "model": str(micro_model), "base_url": server, "proposers": "search"}
    apo_run(tmp_path, {**settings, "rounds": 1})
    run_dir = tmp_path / "Math-v0__apo__seed0"
    first = state_of(run_dir)
    apo_run(tmp_path, {**settings, "rounds": 2}, resume=True)
    resumed = state_of(run_dir)
    assert (first["round"], resumed["round"]) == (1, 2)
    assert all(resumed["prompts"][k] == v for k, v in first["prompts"].items() if k not in first["beam"])
    assert resumed["episodes"] > first["episodes"]


def test_optimizer_endpoint_errors_are_recorded_and_the_search_goes_on(tmp_path, server, micro_model, free_port):
    model = str(micro_model)
    apo_run(tmp_path, {**SMALL, "rounds": 1, "model": model, "base_url": server, "optimizer_model": model,
                       "optimizer_base_url": f"http://127.0.0.1:{free_port}/v1", "max_retries": 0})
    run_dir = tmp_path / "Math-v0__apo__seed0"
    errors = [json.loads(line) for line in (run_dir / "errors.jsonl").read_text().splitlines()]
    assert errors and all(e["source"] == "optimizer" and "unreachable" in e["error"] for e in errors)
    state = state_of(run_dir)
    assert state["round"] == 1 and state["errors"] == len(errors)
    assert state["critiques"]["failed"] == state["critiques"]["requested"] == len(errors)
    assert all(p["proposer"] != "critique" for p in state["prompts"].values())


def test_an_unreachable_agent_is_a_clear_error(tmp_path, free_port):
    with pytest.raises(Exception, match="answered no episode.*unreachable"):
        apo_run(tmp_path, {**SMALL, "model": "m", "base_url": f"http://127.0.0.1:{free_port}/v1", "max_retries": 0})


def test_the_critique_proposer_needs_an_optimizer_model():
    with pytest.raises(ValueError, match="needs an optimizer_model"):
        Config(proposers="critique")
    assert Config().proposer_names == ["search"]
    assert Config(optimizer_model="m").proposer_names == ["critique", "search"]


def test_search_moves_edit_demonstrations_and_instructions_within_limits():
    pool = ["Task: a\nCall: add(a=1)\nResult: 1", "Task: b\nCall: add(a=2)\nResult: 2"]
    version = Version("p000", "First sentence. Second sentence.", [pool[0]], None, "seed", 0)
    config = Config(candidates_per_prompt=40, max_demos=1)
    proposals = search_proposals(version, pool, config, np.random.default_rng(0))
    demos = {tuple(demos) for _, demos, _ in proposals}
    assert demos == {(pool[0],), (pool[1],), ()}  # swapped or dropped, never more than max_demos
    texts = {instructions for instructions, _, _ in proposals}
    assert "Second sentence." in texts or "First sentence." in texts  # a sentence dropped
    assert any(text.startswith("First sentence. Second sentence. ") and text.endswith(tuple(hints(pool)))
               for text in texts)  # a hint added
    assert "A typical solution calls, in order: add." in hints(pool)  # the pool's order of calls


def test_state_skips_a_prompt_it_has_seen():
    state = State({}, {})
    assert state.add("Do it.", [], None, "seed", 0) is not None
    assert state.add(" Do it. ", [], "p000", "search", 1) is None


def test_prompt_rendering_and_the_system_message_it_replaces():
    prompt = Prompt("Solve it.", ("Task: x\nCall: f(a=1)",))
    assert prompt.render() == "Solve it.\n\nSolved examples:\nExample 1:\nTask: x\nCall: f(a=1)"
    messages = [{"role": "system", "content": "old"}, {"role": "user", "content": "task"}]
    assert with_system_prompt(messages, "new") == [{"role": "system", "content": "new"}, messages[1]]
    assert with_system_prompt(messages[1:], "new")[0] == {"role": "system", "content": "new"}
    assert with_system_prompt(messages, "") == messages[1:]

    class Echo:
        def respond(self, conversations, tools):
            return conversations

    assert PromptedPolicy(Echo(), "new").respond([messages], None)[0][0]["content"] == "new"


def test_a_demonstration_shows_the_task_calls_and_results():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "PROBLEM 1 + 2"},
                {"role": "assistant", "tool_calls": [{"function": {"name": "calculator",
                                                                   "arguments": '{"operation": "add", "a": 1, "b": 2}'}}]},
                {"role": "tool", "content": "1 + 2 = 3"}]
    assert render_demo(messages) == ('Task: PROBLEM 1 + 2\nCall: calculator(operation="add", a=1, b=2)\n'
                                     "Result: 1 + 2 = 3")


def test_fenced_reads_the_first_fence_or_the_whole_reply():
    assert fenced("Here:\n```text\nNew prompt.\n```\nbye") == "New prompt."
    assert fenced("  just text ") == "just text"
    assert consecutive_runs([3, 4, 5, 9, 1, 2]) == [[3, 4, 5], [9], [1, 2]]
