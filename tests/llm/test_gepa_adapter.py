"""GEPA on an agentgym env through the adapter, against a real server (``server``: ``transformers
serve`` with the micro model) as agent and reflection model."""

from __future__ import annotations

import pytest

from agentgym_envs.evaluation import OpenAIChatAgent
from agentgym_envs.inference import ChatClient
from trainers.llm.gepa_adapter import COMPONENT, AgentGymAdapter, optimize

gepa = pytest.importorskip("gepa")
MATH = "AgentGym/Math-v0"
SHORT = {"max_turns": 2}


def test_the_adapter_scores_episodes_and_explains_them_for_reflection(server, micro_model):
    agent = OpenAIChatAgent(str(micro_model), server, max_tokens=8)
    adapter = AgentGymAdapter(agent, MATH, SHORT, concurrency=2)
    batch = adapter.evaluate([5, 6, 9], {COMPONENT: "Solve it."}, capture_traces=True)
    assert len(batch.scores) == len(batch.trajectories) == 3 and set(batch.scores) <= {0.0, 1.0}
    assert [record["task"] for record in batch.trajectories] == [5, 6, 9]
    dataset = adapter.make_reflective_dataset({COMPONENT: "Solve it."}, batch, [COMPONENT])
    item = dataset[COMPONENT][0]
    assert item["Inputs"]["task"].startswith("PROBLEM") and item["Feedback"].startswith(("solved: ", "failed: "))
    assert adapter.episodes == 3


def test_gepa_optimizes_a_prompt_within_its_episode_budget(server, micro_model, tmp_path):
    model = str(micro_model)
    agent = OpenAIChatAgent(model, server, max_tokens=8, concurrency=2)
    reflection = ChatClient(model, server, request_options={"max_tokens": 24})
    result = optimize(agent, MATH, "Solve the problem.", [1, 2, 3], [10, 11], reflection, max_metric_calls=8,
                      env_kwargs=SHORT, concurrency=2, minibatch_size=2, run_dir=str(tmp_path / "gepa"))
    assert result["episodes"] == result["metric_calls"] >= 2  # every metric call is one agent episode
    # GEPA checks the budget before each iteration: at most one iteration's calls past it (the parent's and
    # the new prompt's minibatch, then the validation tasks)
    assert result["metric_calls"] <= 8 + 2 * 2 + 2
    assert isinstance(result["best_prompt"], str) and 0.0 <= result["val_success"] <= 1.0
