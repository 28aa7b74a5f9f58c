"""A user's algorithm beside the baselines: the page names a tuning search smaller than the
protocol's, and a baseline row trained on another budget (not the evaluated-only rows)."""

from __future__ import annotations

from benchmarks.suite_lib.contender import budget_notes, tuning_text
from benchmarks.suite_lib.plan import PRESETS, cells

RECORD = {"trials": 16, "search_seed": 0, "env_steps": 50_000, "levels": ["AgentGym/Math-L1-v1"], "episodes": 50,
          "validation_success": 0.5, "settings": {"learning_rate": 0.001}}


def test_a_search_scored_on_fewer_validation_episodes_is_not_the_protocols_budget():
    protocol = (16, ("AgentGym/Math-L1-v1",), 50_000, 50)
    assert "Not the protocol's tuning budget" not in tuning_text(RECORD, *protocol)
    fewer = tuning_text({**RECORD, "episodes": 4}, *protocol)
    assert "scored on 4 validation episodes a level" in fewer
    assert "**Not the protocol's tuning budget** (16 trials of 50,000 env steps on AgentGym/Math-L1-v1, 50 validation " \
           "episodes a level)" in fewer


def test_only_trained_baseline_rows_of_another_budget_are_named():
    planned = cells(PRESETS["smoke"], ["customer_support"])  # 3,072 env steps on L0

    def row(algorithm: str, budget: int, model: str = "") -> dict[str, str]:
        return {"env": "customer_support", "level": "L0", "algorithm": algorithm, "budget": str(budget), "model": model}

    baselines = [row("expert", 0), row("llm-tiny", 0, "models/tiny sha256:0123"), row("ppo", 3072),
                 row("sb3-maskable-ppo", 2048)]
    assert budget_notes(baselines, planned) == ["customer_support L0 sb3-maskable-ppo: 2,048 env steps, this run 3,072"]
