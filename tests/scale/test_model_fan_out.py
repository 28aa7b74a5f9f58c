"""A language model's evaluation fanned out over Ray workers, each with its own agent and
concurrency, against a real endpoint (``server`` in tests/conftest.py: ``transformers serve``
with the micro model): the records and summary (pass^k included) of a local run, written to
--output as shards return, and resumable."""

from __future__ import annotations

import json

import pytest

from agentgym_envs.cli import main
from agentgym_envs.evaluation import ModelSpec, evaluate

pytest.importorskip("openai")
pytest.importorskip("transformers")
MATH = "AgentGym/Math-v0"
BUDGET = {"episodes": 2, "trials": 2, "concurrency": 2, "seed": 3, "action_mode": "text", "max_turns": 2}


def _episodes(path) -> dict[tuple, dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {(entry["task"], entry["trial"]): entry for entry in lines[1:]}


def test_fanned_out_model_evaluation_matches_a_local_run(server, micro_model, tmp_path):
    spec = ModelSpec("openai", str(micro_model), {"base_url": server, "temperature": 0.0, "max_tokens": 8})
    local = evaluate(MATH, spec, output=str(tmp_path / "local.jsonl"), **BUDGET)
    fanned = evaluate(MATH, spec, output=str(tmp_path / "fanned.jsonl"), num_workers=2, **BUDGET)
    assert fanned == local and fanned["episodes"] == 4 and fanned["errors"] == 0 and "pass^2" in fanned
    assert _episodes(tmp_path / "fanned.jsonl") == _episodes(tmp_path / "local.jsonl")
    assert (tmp_path / "fanned.jsonl").read_text().splitlines()[0] == (tmp_path / "local.jsonl").read_text().splitlines()[0]


def test_cli_fans_out_a_model_and_resumes_its_output(server, micro_model, tmp_path, capsys):
    output = tmp_path / "run.jsonl"
    command = ["eval", "math", "--policy", "openai", "--model", str(micro_model), "--base-url", server,
               "--episodes", "2", "--trials", "2", "--concurrency", "2", "--seed", "3", "--max-turns", "2",
               "--max-tokens", "8", "--temperature", "0", "--num-workers", "2", "--output", str(output)]
    assert main(command) == 0
    full = _episodes(output)
    assert sorted(full) == [(3, 0), (3, 1), (4, 0), (4, 1)]
    lines = output.read_text().splitlines()
    output.write_text("\n".join(lines[:3]) + "\n")  # as if stopped after two episodes
    assert main([*command, "--resume"]) == 0
    assert _episodes(output) == full and len(output.read_text().splitlines()) == 5
    assert "pass^2" in capsys.readouterr().out


def test_reference_policies_fan_out_without_output_or_trials(capsys):
    assert main(["eval", "customer_support", "--num-workers", "2", "--trials", "2"]) == 2
    assert "a language model's episodes fan out" in capsys.readouterr().err
    with pytest.raises(ValueError, match="ModelSpec"):  # an agent object does not travel to workers
        evaluate(MATH, lambda observation, info: None, episodes=1, num_workers=2)
