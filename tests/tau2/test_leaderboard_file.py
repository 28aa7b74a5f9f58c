"""The leaderboard-style results file: pass^1..k in percent per domain, domains merged."""

from __future__ import annotations

import json

import pytest

from agentgym_envs.evaluation.results import summarize
from agentgym_envs.scenarios.tau2.leaderboard import domain_results, write_leaderboard


def _records(outcomes: dict[str, list[bool]]) -> list[dict]:
    return [{"task": task, "trial": t, "return": 0.0, "metrics": {"success": float(ok)}, "error": None}
            for task, results in outcomes.items() for t, ok in enumerate(results)]


def test_domain_results_are_upstreams_pass_k_in_percent():
    summary = summarize(_records({"1": [True, True, False], "2": [False, False, False], "3": [True, True, True]}), 3)
    entry = domain_results(summary, 3, tasks=3)
    # pass^1 = (2/3 + 0 + 1) / 3, pass^2 = (1/3 + 0 + 1) / 3, pass^3 = (0 + 0 + 1) / 3
    assert entry == {"pass_1": 55.56, "pass_2": 44.44, "pass_3": 33.33, "tasks": 3, "trials": 3, "episodes": 9, "errors": 0}
    assert domain_results(summarize(_records({"1": [True], "2": [False]}), 1), 1, tasks=2)["pass_1"] == 50.0


def test_domains_fill_one_file_and_another_models_file_is_refused(tmp_path):
    path = tmp_path / "board.json"
    write_leaderboard(path, "retail", {"pass_1": 10.0}, model_name="m", methodology={"user_simulator": "u"})
    write_leaderboard(path, "airline", {"pass_1": 20.0}, model_name="m", methodology={"user_simulator": "u"})
    data = json.loads(path.read_text())
    assert data["results"] == {"retail": {"pass_1": 10.0}, "airline": {"pass_1": 20.0}}
    assert data["methodology"]["user_simulator"] == "u" and "evaluation_date" in data["methodology"]
    before = path.read_text()
    with pytest.raises(ValueError, match="holds results of model 'm'"):
        write_leaderboard(path, "retail", {"pass_1": 0.0}, model_name="other", methodology={})
    assert path.read_text() == before
