"""The rollout store: concurrent writers, a writer killed mid-run, the schema version and its
migrations, and what evaluations record into it."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentgym_envs.evaluation import evaluate
from agentgym_envs.observe import store as store_module
from agentgym_envs.observe.store import EpisodeRow, RunStore

STEPS_PER_EPISODE = 5


def _row(index: int) -> EpisodeRow:
    messages = [{"role": "user", "content": f"task {index}"}, {"role": "assistant", "content": "done"}]
    return EpisodeRow(task=index, trial=0, ret=float(index), metrics={"success": float(index % 2)}, messages=messages,
                      rewards=[1.0] * STEPS_PER_EPISODE, split="test", task_id=f"test-{index}")


def _write_episodes(path: str, run_id: str, first: int, count: int) -> None:
    with RunStore(path) as store:
        for index in range(first, first + count):
            store.add_episode(run_id, _row(index))


def test_several_processes_write_one_store_at_once(tmp_path):
    path = str(tmp_path / "agentgym.db")
    with RunStore(path) as store:
        run_id = store.start_run("eval", "concurrent", {})
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_episodes, args=(path, run_id, 1000 * w, 40)) for w in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert [writer.exitcode for writer in writers] == [0, 0, 0, 0]
    with RunStore(path) as store:
        episodes = store.episodes(run_id)
        assert store.integrity() == "ok"
    assert sorted(int(e["task"]) for e in episodes) == sorted(1000 * w + i for w in range(4) for i in range(40))
    assert all(e["rewards"] == [1.0] * STEPS_PER_EPISODE for e in episodes)


WRITER = """
import sys
from agentgym_envs.observe.store import EpisodeRow, RunStore
store = RunStore(sys.argv[1])
run_id = store.start_run("eval", "killed", {})
print(run_id, flush=True)
index = 0
while True:
    store.add_episode(run_id, EpisodeRow(task=index, trial=0, ret=1.0, metrics={"success": 1.0},
                      messages=[{"role": "user", "content": "x" * 2000}], rewards=[0.5] * 5))
    index += 1
"""


def test_a_writer_killed_mid_run_leaves_the_store_consistent(tmp_path):
    path = tmp_path / "agentgym.db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    try:
        run_id = writer.stdout.readline().strip()
        with RunStore(path) as reader:
            deadline = time.monotonic() + 60
            while len(reader.episodes(run_id)) < 50 and time.monotonic() < deadline:
                time.sleep(0.05)
        os.kill(writer.pid, signal.SIGKILL)  # mid-write: it never stops writing
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    with RunStore(path) as store:
        assert store.integrity() == "ok"
        episodes = store.episodes(run_id)
        assert len(episodes) >= 50
        assert all(e["rewards"] == [0.5] * 5 for e in episodes)  # each episode whole, with all its steps
        assert store.run(run_id)["status"] == "interrupted"  # its process is gone, its end never recorded
        store.add_episode(run_id, _row(1))  # and it takes new writes
        assert store.run(store.start_run("eval", "alive", {}))["status"] == "running"  # this process's run


def test_a_new_store_has_the_schema_version_and_a_newer_one_is_refused(tmp_path):
    path = tmp_path / "agentgym.db"
    with RunStore(path) as store:
        assert store.schema_version == store_module.SCHEMA_VERSION
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {store_module.SCHEMA_VERSION + 1}")
    with pytest.raises(ValueError, match="newer than this agentgym"):
        RunStore(path)


def test_opening_a_store_applies_the_migrations_it_lacks_and_keeps_its_data(tmp_path, monkeypatch):
    path = tmp_path / "agentgym.db"
    with RunStore(path) as store:
        run_id = store.start_run("eval", "old", {"a": 1})
        store.add_episode(run_id, _row(3))
    later = [*store_module.MIGRATIONS, ("ALTER TABLE runs ADD COLUMN note TEXT", "UPDATE runs SET note = 'migrated'")]
    monkeypatch.setattr(store_module, "MIGRATIONS", later)
    with RunStore(path) as store:
        assert store.schema_version == len(later)
        run = store.run(run_id)
        assert run["note"] == "migrated" and run["config"] == {"a": 1}
        assert store.episodes(run_id)[0]["messages"][0]["content"] == "task 3"


def test_a_run_is_found_by_id_prefix_or_name_and_an_unknown_one_is_a_clear_error(tmp_path):
    with RunStore(tmp_path / "agentgym.db") as store:
        first = store.start_run("eval", "same-name", {})
        second = store.start_run("eval", "same-name", {})
        assert store.run(first)["id"] == first
        assert store.run(second[:-2])["id"] == second
        assert store.run("same-name")["id"] in (first, second)
        with pytest.raises(ValueError, match="no run 'nope'"):
            store.run("nope")
        with pytest.raises(ValueError, match="give more of it"):
            store.run("eval-")


def test_an_evaluation_records_each_episode_with_messages_rewards_and_its_figures(tmp_path):
    path = tmp_path / "agentgym.db"
    with store_module.recording(path, "eval", "expert", {"episodes": 3}, "AgentGym/CustomerSupport-v0",
                                ("policy", {"name": "expert"})) as recorder:
        recorder.summary = evaluate("AgentGym/CustomerSupport-v0", "expert", episodes=3, recorder=recorder)
    with RunStore(path) as store:
        run = store.run(recorder.run_id)
        episodes = store.episodes(recorder.run_id)
    assert run["status"] == "finished" and run["summary"]["success"] == 1.0 and run["version"]["name"] == "expert"
    assert [int(e["task"]) for e in episodes] == [0, 1, 2]
    for episode in episodes:
        assert episode["split"] == "test" and episode["task_id"].startswith("test-")
        assert sum(episode["rewards"]) == pytest.approx(episode["return"])
        assert len(episode["rewards"]) == episode["metrics"]["turns"]
        assert episode["messages"][-1]["role"] == "tool" and episode["tools"]


def test_a_run_that_raises_is_recorded_as_failed(tmp_path):
    path = tmp_path / "agentgym.db"
    with pytest.raises(RuntimeError):
        with store_module.recording(path, "eval", "boom", {}) as recorder:
            raise RuntimeError("boom")
    with RunStore(path) as store:
        assert store.run(recorder.run_id)["status"] == "failed"


def test_runs_list_show_and_export_the_chat_jsonl_llm_sft_reads(tmp_path, capsys):
    from agentgym_envs.cli import main
    from trainers.llm.model import read_trajectories

    path = tmp_path / "agentgym.db"
    assert main(["eval", "customer_support", "--policy", "expert", "--episodes", "2", "--store", str(path)]) == 0
    capsys.readouterr()
    assert main(["runs", "--store", str(path)]) == 0
    listing = capsys.readouterr().out
    assert "CustomerSupport-v1__expert__test__seed0" in listing and "finished" in listing
    run_id = listing.splitlines()[2].split("|")[1].strip()
    assert main(["runs", "--store", str(path), "show", run_id]) == 0
    assert "2 episodes" in capsys.readouterr().out
    exported = tmp_path / "sft.jsonl"
    assert main(["runs", "--store", str(path), "export", run_id, "--format", "jsonl", "-o", str(exported)]) == 0
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(lines) == 2 and all(line["messages"][0]["role"] == "system" and line["tools"] for line in lines)
    assert read_trajectories(str(exported)) == read_trajectories(f"store:{run_id}@{path}")
    assert main(["runs", "--store", str(path), "show", "missing-run"]) == 2


def test_llm_grpo_reads_the_task_ids_of_a_stored_run(tmp_path):
    path = tmp_path / "agentgym.db"
    with store_module.recording(path, "eval", "expert", {}) as recorder:
        evaluate("AgentGym/Math-v0", "expert", episodes=3, split="train", recorder=recorder)
    ids = store_module.task_ids(f"store:{recorder.run_id}@{path}")
    assert len(ids) == 3 and all(task_id.startswith("train-") for task_id in ids)
