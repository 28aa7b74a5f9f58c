"""The task-difficulty filter: it writes the task file's own lines of the tasks whose sampled
success lies in the band, and says so when too few do."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("transformers")

@pytest.fixture
def difficulty(benchmark_script):
    return benchmark_script("llm_analysis").subcommand("task-difficulty")


def run(difficulty, monkeypatch, *argv: str) -> None:
    monkeypatch.setattr(sys, "argv", ["llm_analysis.py", "task-difficulty", *argv])
    difficulty.main()


def test_the_tasks_in_the_band_are_written_as_the_files_own_lines(difficulty, micro_model, tmp_path, monkeypatch, capsys):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    lines = write_tasks(tmp_path / "tasks.jsonl", math_tasks(3, seed=1)).read_text().splitlines()
    common = ("--model", str(micro_model), "--task-file", str(tmp_path / "tasks.jsonl"), "--episodes", "2")
    run(difficulty, monkeypatch, *common, "--band", "0", "1", "--keep", "3", "--out", str(tmp_path / "all.jsonl"))
    printed = [line.split("\t") for line in capsys.readouterr().out.splitlines() if "\t" in line]
    success = {task_id: float(value) for task_id, value in printed}
    assert list(success) == ["aug-0", "aug-1", "aug-2"] and all(0 <= value <= 1 for value in success.values())
    assert (tmp_path / "all.jsonl").read_text().splitlines() == lines


def test_tasks_outside_the_band_are_left_out(difficulty, micro_model, tmp_path, monkeypatch):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    lines = write_tasks(tmp_path / "tasks.jsonl", math_tasks(3, seed=1)).read_text().splitlines()
    # the sampled success per task given (the test above plays it): only aug-1's lies in the band
    monkeypatch.setattr(sys.modules["llm_analysis"], "task_file_success", lambda *args: difficulty.np.array([0.0, 0.5, 1.0]))
    run(difficulty, monkeypatch, "--model", str(micro_model), "--task-file", str(tmp_path / "tasks.jsonl"),
        "--band", "0.2", "0.6", "--keep", "1", "--out", str(tmp_path / "band.jsonl"))
    assert (tmp_path / "band.jsonl").read_text().splitlines() == lines[1:2]


def test_too_few_tasks_in_the_band_is_an_error_that_names_the_band(difficulty, micro_model, tmp_path, monkeypatch):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    tasks = write_tasks(tmp_path / "tasks.jsonl", math_tasks(2, seed=1))
    with pytest.raises(SystemExit, match="only .* of the first 2 tasks lie in the band"):
        run(difficulty, monkeypatch, "--model", str(micro_model), "--task-file", str(tasks), "--episodes", "1",
            "--keep", "3", "--out", str(tmp_path / "band.jsonl"))
    assert not (tmp_path / "band.jsonl").exists()
