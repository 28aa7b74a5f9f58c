"""The coverage table of a chat model: greedy success, pass@1 and pass@k per task family, and
the results page with its command."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")


@pytest.fixture
def coverage(benchmark_script):
    return benchmark_script("llm_analysis").subcommand("coverage")


def test_pass_at_k_counts_the_tasks_that_one_sampled_episode_solves(coverage):
    rows = coverage.family_rows(["a", "b", "a"], np.array([1.0, 0.0, 0.0]),
                                np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
    assert rows == ["| a | 2 | 0.50 | 0.50 | 1.00 (2) |",
                    "| b | 1 | 0.00 | 0.00 | 0.00 (0) |",
                    "| **all** | 3 | 0.33 | 0.33 | 0.67 (2) |"]


def test_the_page_holds_its_command_and_one_table_per_split(coverage, micro_model, tmp_path):
    out = tmp_path / "coverage.md"
    argv = ["--model", str(micro_model), "--envs", "Math-v0", "--splits", "test", "train", "--tasks", "2",
            "--samples", "3", "--out", str(out)]
    results = coverage.main(argv)
    greedy, sampled = results["AgentGym/Math-v0, test"]
    assert greedy.shape == (2,) and sampled.shape == (2, 3)
    page = out.read_text()
    assert f"Command: `python benchmarks/llm_analysis.py coverage {' '.join(argv)}`" in page
    assert page.count("| task family | tasks | greedy | pass@1 | pass@3 |") == 2
    assert page.count("| **all** | 2 |") == 2
