"""The task-difficulty filter: it writes the task file's own lines of the tasks whose sampled
success lies in the band, and says so when too few do."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("transformers")

@pytest.fixture
def difficulty(benchmark_script):
    return benchmark_script("llm_analysis").subcommand("task-difficulty")


def run(difficulty, monkeypatch, *argv: str) -> None:
    monkeypatch.setattr(sys, "argv", ["llm_analysis.py", "task-difficulty", *argv])
    difficulty.main()


def test_the_tasks_in_the_band_are_written_as_the_files_own_lines(difficulty, micro_model, tmp_path, monkeypatch):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    tasks = write_tasks(tmp_path / "tasks.jsonl", math_tasks(3, seed=1))
    out = tmp_path / "band.jsonl"
    success = difficulty.task_file_success(str(micro_model), "AgentGym/Math-v0", tasks.read_text().splitlines(), 2,
                                           1.0, difficulty.torch.device("cpu"))
    assert success.shape == (3,) and ((success >= 0) & (success <= 1)).all()
    run(difficulty, monkeypatch, "--model", str(micro_model), "--task-file", str(tasks), "--episodes", "2",
        "--band", "0", "1", "--keep", "2", "--out", str(out))
    written = out.read_text().splitlines()
    assert written == tasks.read_text().splitlines()[:2]
    assert [json.loads(line)["task_id"] for line in written] == ["aug-0", "aug-1"]


def test_too_few_tasks_in_the_band_is_an_error_that_names_the_band(difficulty, micro_model, tmp_path, monkeypatch):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    tasks = write_tasks(tmp_path / "tasks.jsonl", math_tasks(2, seed=1))
    with pytest.raises(SystemExit, match="only .* of the first 2 tasks lie in the band"):
        run(difficulty, monkeypatch, "--model", str(micro_model), "--task-file", str(tasks), "--episodes", "1",
            "--keep", "3", "--out", str(tmp_path / "band.jsonl"))
    assert not (tmp_path / "band.jsonl").exists()
