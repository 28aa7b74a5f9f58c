"""Random and expert reference runs: evaluation only, the benchmarks' floor and ceiling."""

import math
from dataclasses import replace

import pytest

from trainers.lifecycle import load_result


def test_expert_reference_solves_both_splits(train_tiny):
    result = train_tiny("expert", eval_episodes=20)
    assert result.total_steps == 0 and result.steps_to_target is None  # nothing trained: no curve
    assert result.test_metrics["success"] == 1.0 and result.train_metrics["success"] == 1.0
    assert math.isnan(result.sps)  # nothing trained
    assert replace(load_result(result.run_dir), sps=0.0) == replace(result, sps=0.0)


def test_random_reference_is_the_floor_and_depends_on_its_seed(train_tiny):
    first = train_tiny("random", seed=0, eval_episodes=20)
    second = train_tiny("random", seed=1, eval_episodes=20)
    assert first.test_metrics["success"] < 0.5 and first.steps_to_target is None
    assert first.test_metrics != second.test_metrics


def test_reference_runs_reject_overrides(train_tiny):
    with pytest.raises(ValueError, match="unknown expert setting"):
        train_tiny("expert", lr=1)


def test_reference_runs_on_the_team_adapter_act_for_the_agent_holding_the_ticket(train_tiny):
    expert = train_tiny("expert", env="AgentGym/SupportTeam-L0-v0", eval_episodes=5)
    random = train_tiny("random", env="AgentGym/SupportTeam-L0-v0", eval_episodes=5)
    assert expert.test_metrics["success"] == 1.0 == expert.train_metrics["success"]
    assert random.test_metrics["success"] < 0.5
