"""The dataset rows for verl and SkyRL: one command writes them per env and split; each row
draws the task its prompt shows, and the splits stay disjoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentgym_envs.external_trainers.data import main, skyrl_rows, verl_rows
from agentgym_envs.external_trainers.episode import TextEpisode

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_verl_rows_command_writes_parquet_per_env_and_split(tmp_path: Path) -> None:
    written = main(["--framework", "verl", "--env", "math", "--split", "both", "--tasks", "3", "--out", str(tmp_path)])
    assert [p.name for p in written] == ["math_train.parquet", "math_test.parquet"]
    train, test = (pd.read_parquet(p) for p in written)
    assert len(train) == len(test) == 3
    assert set(train.columns) == {"data_source", "prompt", "agent_name", "ability", "reward_model", "extra_info"}
    assert set(train["agent_name"]) == {"agentgym"} and set(train["data_source"]) == {"agentgym/math"}
    assert not set(r["task_id"] for r in train["extra_info"]) & set(r["task_id"] for r in test["extra_info"])
    for row in train.to_dict("records"):
        info = row["extra_info"]
        episode = TextEpisode(info["env"], info["split"], **json.loads(info["env_kwargs"]))
        assert episode.reset(info["seed"], info["task_id"]) == [dict(m) for m in row["prompt"]]


def test_env_kwargs_travel_with_the_rows(tmp_path: Path) -> None:
    row = verl_rows("customer_support", 1, seed=5, split="test", env_kwargs={"max_turns": 4})[0]
    assert json.loads(row["extra_info"]["env_kwargs"]) == {"max_turns": 4}
    assert row["extra_info"]["split"] == "test" and row["extra_info"]["seed"] == 5
    sky = skyrl_rows("customer_support", 1, seed=5, split="test", env_kwargs={"max_turns": 4})[0]
    assert sky["prompt"] == row["prompt"] and sky["task_id"] == row["extra_info"]["task_id"]


def test_rows_command_runs_as_a_module(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentgym_envs.external_trainers.data", "--framework", "skyrl",
                           "--env", "coding", "--split", "train", "--tasks", "2", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert done.returncode == 0, done.stderr
    frame = pd.read_parquet(tmp_path / "coding_train.parquet")
    assert list(frame["env_class"]) == ["agentgym", "agentgym"] and list(frame["seed"]) == [0, 1]
