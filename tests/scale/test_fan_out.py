"""Evaluation fanned out over Ray workers gives the records of a local run, in seed order,
and runs a shard again when its worker dies."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from agentgym_envs.evaluation import POLICIES
from agentgym_envs.evaluation.results import summarize
from agentgym_envs.scale import SeededEpisodes, fan_out

CS = "AgentGym/CustomerSupport-v0"


def test_fanned_out_records_equal_a_local_run():
    episodes = SeededEpisodes(CS, POLICIES["random"], split="test")
    seeds = list(range(10, 17))
    local = episodes(seeds)
    streamed = []
    remote = fan_out(episodes, seeds, num_workers=2, shard_size=3, on_records=streamed.extend)
    assert remote == local and [record["task"] for record in remote] == seeds
    assert sorted(streamed, key=lambda record: record["task"]) == local
    assert summarize(remote, trials=1) == summarize(local, trials=1)
    assert len({record["return"] for record in local}) > 1  # the episodes differ


class DiesOnce:
    """A shard function whose process exits abruptly the first time it is called."""

    def __init__(self, episodes: SeededEpisodes, marker: Path) -> None:
        self.episodes, self.marker = episodes, marker

    def __call__(self, seeds):
        if not self.marker.exists():
            self.marker.touch()
            os._exit(1)
        return self.episodes(seeds)


def test_a_shard_whose_worker_dies_runs_again(tmp_path, caplog):
    episodes = SeededEpisodes(CS, POLICIES["expert"])
    with caplog.at_level(logging.WARNING, logger="agentgym_envs.scale.fan_out"):
        records = fan_out(DiesOnce(episodes, tmp_path / "died"), [0, 1, 2, 3], num_workers=2)
    assert records == episodes([0, 1, 2, 3])
    assert "a Ray worker died running episodes" in caplog.text and "retry 1 of 3" in caplog.text


def test_bad_worker_count_is_a_clear_error():
    with pytest.raises(ValueError, match="num_workers"):
        fan_out(SeededEpisodes(CS, POLICIES["expert"]), [0], num_workers=0)


def test_episodes_played_on_workers_are_traced_under_the_run(phoenix):
    from agentgym_envs.observe import tracing

    episodes = SeededEpisodes(CS, POLICIES["expert"], split="test")
    with tracing.session(f"{phoenix.url}/v1/traces"), tracing.run_span("eval", {}) as run:
        trace_id, run_span_id = tracing.span_ids(run)
        records = fan_out(episodes, [1, 2, 3, 4], num_workers=2, shard_size=2)
    steps = int(sum(record["metrics"]["turns"] for record in records))
    spans = phoenix.spans(trace_id, 1 + 4 + steps)
    agent_spans = [span for span in spans if span["span_kind"] == "AGENT"]
    assert sorted(span["attributes"]["agentgym.seed"] for span in agent_spans) == [1, 2, 3, 4]
    assert {span["parent_id"] for span in agent_spans} == {run_span_id}  # the driver's run span, across processes
    assert sum(span["span_kind"] == "TOOL" for span in spans) == steps
