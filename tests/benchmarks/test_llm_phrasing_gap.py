"""Tickets of one split's values in the other split's words, and the page that compares them."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("transformers")


@pytest.fixture
def gap(benchmark_script):
    return benchmark_script("llm_analysis").subcommand("phrasing-gap")


def test_crossed_tickets_are_a_task_file_the_env_plays(gap, tmp_path):
    lines = gap.crossed_tickets("train", "test", 5)
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    env = gym.make("AgentGym/CustomerSupport-v0", task_file=str(path))
    _, info = env.reset(seed=0, options={"task_id": "train-values-test-words-3"})
    assert json.loads(lines[3])["text"] in info["messages"][-1]["content"]
    env.close()


def test_each_crossing_counts_the_kinds_of_its_values_split(gap):
    kinds = {"train": ["a", "b"], "test": ["b", "b"]}
    success = {("train", "test"): np.array([1.0, 0.0]), ("test", "train"): np.array([1.0, 0.0])}
    assert gap.kind_table(kinds, success)[2:] == ["| a | 1.00 (1) |  |",
                                                  "| b | 0.00 (1) | 0.50 (2) |",
                                                  "| **all** | 0.50 (2) | 0.50 (2) |"]


def test_the_page_holds_its_command_and_all_four_crossings(gap, micro_model, tmp_path):
    out = tmp_path / "gap.md"
    argv = ["--model", str(micro_model), "--tickets", "2", "--out", str(out)]
    success = gap.main(argv)
    assert set(success) == {(v, w) for v in ("train", "test") for w in ("train", "test")}
    assert all(values.shape == (2,) for values in success.values())
    page = out.read_text()
    assert f"Command: `python benchmarks/llm_analysis.py phrasing-gap {' '.join(argv)}`" in page
    assert "| **all** |" in page and "train values, test words" in page
