"""``agentgym eval`` with language models: pass^k, recorded endpoint errors, and a killed
evaluation that resumes without losing an episode."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from agentgym_envs.cli import main
from agentgym_envs.evaluation import evaluate
from agentgym_envs.evaluation.results import summarize

pytest.importorskip("transformers")


def episode_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_hf_policy_reports_pass_hat_k_beside_the_mean(micro_model, tmp_path, capsys):
    path = tmp_path / "episodes.jsonl"
    assert main(["eval", "math", "--policy", "hf", "--model", str(micro_model), "--episodes", "1", "--trials", "2",
                 "--concurrency", "2", "--max-tokens", "4", "--max-turns", "2", "--output", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 tasks x 2 trials" in out and "| pass^1 | pass^2 | pass@2 |" in out and "llm_completion_tokens" in out
    assert sorted((r["task"], r["trial"]) for r in episode_lines(path)) == [(0, 0), (0, 1)]


def test_an_unreachable_endpoint_is_reported_not_raised(tmp_path, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "episodes.jsonl"
    assert main(["eval", "math", "--policy", "openai", "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1",
                 "--episodes", "2", "--max-retries", "0", "--output", str(path)]) == 0
    assert "| errors |" in capsys.readouterr().out
    assert [r["error"] is not None and r["metrics"]["success"] == 0.0 for r in episode_lines(path)] == [True, True]


def test_a_killed_evaluation_resumes_and_loses_nothing(micro_model, tmp_path, monkeypatch):
    # The evaluation is killed (SIGKILL) the moment its first episode line is complete on disk: the
    # other 11 episodes would have to finish within the 5 ms between two looks at the file to outrun it.
    episodes = 12
    path = tmp_path / "episodes.jsonl"
    command = ["eval", "math", "--policy", "hf", "--model", str(micro_model), "--episodes", str(episodes),
               "--max-tokens", "4", "--max-turns", "3", "--output", str(path)]
    process = subprocess.Popen([sys.executable, "-m", "agentgym_envs.cli", *command], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while (path.read_bytes().count(b"\n") if path.exists() else 0) < 2:  # the config line and one episode
            assert process.poll() is None, "the evaluation ended before its first episode was seen"
            assert time.monotonic() < deadline, "no episode within 240 s"
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL  # killed while it ran, not after it had finished
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = path.read_text()
    kept = before[: before.rfind("\n") + 1]  # a line cut short by the kill is dropped on resume
    played = [json.loads(line) for line in kept.splitlines()[1:]]
    assert 1 <= len(played) < episodes  # the kill came mid-evaluation

    summaries = []

    def recording_evaluate(*args, **kwargs):
        summaries.append(evaluate(*args, **kwargs))
        return summaries[-1]

    monkeypatch.setattr("agentgym_envs.cli.evaluate", recording_evaluate)
    assert main([*command, "--resume"]) == 0
    after = path.read_text()
    assert after.startswith(kept)  # the episodes played before the kill are kept as they were
    records = episode_lines(path)
    resumed = records[len(played):]
    assert sorted(r["task"] for r in resumed) == sorted(set(range(episodes)) - {r["task"] for r in played})
    assert sorted((r["task"], r["trial"]) for r in records) == [(task, 0) for task in range(episodes)]
    [summary] = summaries
    assert summary["episodes"] == episodes
    assert summary == pytest.approx(summarize(sorted(records, key=lambda r: r["task"]), 1), nan_ok=True)
