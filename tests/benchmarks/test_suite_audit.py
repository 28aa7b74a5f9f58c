"""Which committed rows the audit re-runs (the re-runs themselves: tests/benchmarks/test_suite.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.suite_audit import ROOT, audit_row, auditable, chosen, markdown, run_directory


def row(env: str, algorithm: str, seed: int, seconds: float, commit: str = "abc123",
        command: str = "agentgym train AgentGym/X --algo a") -> dict[str, str]:
    return {"env": env, "level": "L0", "algorithm": algorithm, "seed": str(seed), "wall_train_s": str(seconds),
            "wall_eval_s": "0", "commit": commit, "command": command}


ROWS = [row("math", "ppo", 0, 50), row("math", "ppo", 1, 20), row("math", "random", 0, 3),
        row("coding", "ppo", 0, 400), row("coding", "ppo", 1, 90),
        row("math", "llm-tiny", 0, 5, command="agentgym eval AgentGym/X --policy hf"),
        row("math", "bc", 0, 1, commit="abc123-dirty")]


def test_each_takes_the_quickest_row_of_every_family_and_algorithm():
    picked = chosen(auditable(ROWS, 300), [], 0, 0, each=True)
    assert sorted((r["env"], r["algorithm"], r["seed"]) for r in picked) == [
        ("coding", "ppo", "1"), ("math", "ppo", "1"), ("math", "random", "0")]


def test_language_model_rows_slow_rows_and_uncommitted_rows_are_not_audited():
    assert {(r["env"], r["algorithm"], r["seed"]) for r in auditable(ROWS, 60)} == {
        ("math", "ppo", "0"), ("math", "ppo", "1"), ("math", "random", "0")}
    assert ("math", "bc") in {(r["env"], r["algorithm"]) for r in auditable(ROWS, 60, here=True)}


def test_a_named_row_that_cannot_be_audited_is_a_clear_error():
    with pytest.raises(SystemExit, match="no auditable row math:L0:llm-tiny:0"):
        chosen(auditable(ROWS, float("inf")), ["math:L0:llm-tiny:0"], 0, 0)


def test_the_run_directory_of_a_rows_command_is_the_one_its_run_dir_and_run_name_give():
    words = ("agentgym train AgentGym/CustomerSupport-L0-v1 --algo sb3-ppo --seed 2 --total-steps 5 "
             "--run-dir runs/reproduce/sb3-ppo-defaults --no-store").split()
    assert run_directory(words) == Path("runs/reproduce/sb3-ppo-defaults/CustomerSupport-L0-v1__sb3-ppo__seed2")


def test_a_command_that_fails_is_a_row_that_differs_with_its_error(tmp_path):
    failing = row("math", "ppo", 0, 1, command="agentgym train AgentGym/NoSuchEnv-v0 --algo ppo --seed 0 --run-dir runs/x")
    audit = audit_row({**failing, "test_success": "1.0", "test_return": "1.0"}, [], ROOT, tmp_path)
    assert audit["equal"] is False and "NoSuchEnv" in str(audit["error"])
    versions = {"torch": "2.13.0", "stable_baselines3": "2.9.2", "gymnasium": "1.4.0"}
    page = markdown([audit], [{**failing, **versions}], "python -m benchmarks.suite_audit", "suite")
    assert "Equal: 0 of 1 rows" in page and "NoSuchEnv" in page
