"""One evaluation path: every runner (the envs stepped here, one thread per env, Ray workers)
hands each finished episode to one sink as an ``EpisodeRow``, from which this process writes
both the results file and the run store; a reference policy's episodes on Ray are those of a
local run."""

from __future__ import annotations

import json
import pickle

import pytest

from agentgym_envs.agent_frameworks import EnvSession
from agentgym_envs.cli import main
from agentgym_envs.core.agent import expert_action, tool_env
from agentgym_envs.core.runners import EpisodeSetup, EpisodeShard, agent_seed
from agentgym_envs.evaluation import ReferenceSpec, episode_records
from agentgym_envs.observe import store as store_module
from agentgym_envs.observe.store import RunRecorder, RunStore

CS = "AgentGym/CustomerSupport-v0"


class ScriptedPlayer:
    """A policy that drives its own episodes, as a framework agent does: the expert's calls
    through an :class:`EnvSession` (so the evaluation plays it on the thread runner)."""

    def play_episode(self, env, seed, options):
        session = EnvSession(env, seed, options)
        while not session.ended:
            call = json.loads(expert_action(tool_env(env).episode, "text"))
            session.call_tool(call["name"], call["arguments"])
        return session.result()


def test_random_on_ray_matches_local_records():
    budget = {"episodes": 5, "seed": 4, "trials": 2}
    local = episode_records(CS, "random", **budget)
    assert episode_records(CS, "random", concurrency=3, **budget) == local
    assert episode_records(CS, ReferenceSpec("random"), num_workers=2, **budget) == local
    assert episode_records(CS, "random", num_workers=2, **budget) == local  # the name is the spec
    assert len({record["return"] for record in local}) > 1
    trials = [(first["return"], first["metrics"]) != (second["return"], second["metrics"])
              for first, second in zip(local[::2], local[1::2])]
    assert any(trials)  # a task's two trials are played by differently seeded agents


def test_a_ray_shard_returns_its_episodes_as_rows_that_pickle_whole():
    setup = EpisodeSetup(CS, "test", 0, 2, {"action_mode": "text"})
    rows = EpisodeShard(ReferenceSpec("expert"), setup)([(3, 0), (1, 0), (2, 0)])
    assert [(row.task, row.trial) for row in rows] == [(3, 0), (1, 0), (2, 0)]
    assert pickle.loads(pickle.dumps(rows)) == rows
    assert all(row.messages and row.tools and row.rewards and row.outcome["success"] for row in rows)


RUNNERS = {
    "stepping": ("expert", {}),
    "threads": (ScriptedPlayer(), {"concurrency": 2}),
    "ray": (ReferenceSpec("expert"), {"num_workers": 2, "concurrency": 2}),
}


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_every_runner_writes_the_run_store_and_results_file_from_one_row(runner, tmp_path, monkeypatch):
    policy, options = RUNNERS[runner]
    written = []  # the rows this process records in the run store
    record = RunRecorder.episode
    monkeypatch.setattr(RunRecorder, "episode", lambda self, row: written.append(row) or record(self, row))
    output, path = tmp_path / "episodes.jsonl", tmp_path / "agentgym.db"
    with store_module.recording(path, "eval", runner, {}) as recorder:
        records = episode_records(CS, policy, episodes=4, output=str(output), keep_messages=True, recorder=recorder,
                                  action_mode="text", **options)
    lines = [json.loads(line) for line in output.read_text().splitlines()[1:]]
    assert len(written) == len(lines) == 4 and all(record["metrics"]["success"] == 1.0 for record in records)
    assert lines == [json.loads(json.dumps(row.result(keep_messages=True))) for row in written]
    with RunStore(path) as store:
        stored = store.episodes(recorder.run_id)
    assert [(int(e["task"]), e["trial"]) for e in stored] == [(row.task, row.trial) for row in written]
    for episode, line in zip(stored, lines):
        assert episode["return"] == line["return"] and episode["metrics"] == line["metrics"]
        assert episode["messages"] == line["messages"] and episode["error"] is None
        assert episode["span_id"] is None and episode["split"] == "test" and episode["tools"]


def test_reference_policies_evaluated_on_ray_are_recorded_in_the_run_store(tmp_path, capsys):
    path = tmp_path / "agentgym.db"
    assert main(["eval", "customer_support", "--policy", "random", "--episodes", "3", "--seed", "5",
                 "--num-workers", "2", "--store", str(path)]) == 0
    capsys.readouterr()
    with RunStore(path) as store:
        [run] = store.runs()
        episodes = store.episodes(run["id"])
    assert sorted(int(e["task"]) for e in episodes) == [5, 6, 7] and run["summary"]["episodes"] == 3
    local = episode_records(CS, "random", episodes=3, seed=5, action_mode="structured")
    assert sorted((int(e["task"]), e["return"]) for e in episodes) == [(r["task"], r["return"]) for r in local]


def test_every_task_and_trial_gets_its_own_agent_seed_apart_from_the_reset_seed():
    keys = [("task-a", 0), ("task-b", 0), ("task-a", 1), (7, 0), (7, 1), (8, 0)]
    seeds = [agent_seed(key, 0) for key in keys]
    assert len(set(seeds)) == len(keys)
    assert agent_seed((7, 0), 0) != 7 and seeds == [agent_seed(key, 0) for key in keys]
