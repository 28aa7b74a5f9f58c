"""Episodes fanned out over Ray workers, with the same per-episode records as a local run.

:func:`fan_out` cuts a list of episode keys (seeds, or ``(task, trial)`` pairs) into shards,
runs a shard function on each in a Ray task (at most ``num_workers`` at once) and returns its
results in the order of the keys. The shard function is anything that maps keys to one result
per key. :class:`RayRunner`, the Ray runner of ``evaluate(..., num_workers=N)``, ships an
:class:`~agentgym_envs.core.runners.EpisodeShard` (each worker builds its own policy from a
picklable spec and plays its keys as a local run would) and hands the
:class:`~agentgym_envs.observe.store.EpisodeRow` each shard returns to the evaluation's one sink,
here in the driver. :class:`SeededEpisodes` plays seeds with an agent factory (reference
policies, checkpoints) and returns results-file records. When an episode depends on its key
alone (a fresh, seeded agent per episode, or a greedy model), the results are identical to
those of the same keys played locally.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_envs.core.agent import Agent
from agentgym_envs.core.runners import EpisodeSetup, EpisodeShard, Key, PolicySpec, SeededAgents, Sink, local_runner
from agentgym_envs.observe import tracing
from agentgym_envs.observe.store import EpisodeRow

from .runtime import init_ray, ray

logger = logging.getLogger(__name__)

Record = dict[str, Any]
ShardFn = Callable[[list[Any]], list[Any]]
WORKER_LOST = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError)


@dataclass(frozen=True)
class SeededEpisodes:
    """Plays one episode of ``env_id`` per seed, each with a fresh agent
    ``agent_factory(env, seed)``, so that an episode's record depends on its seed alone.

    A record is a results-file line (:meth:`~agentgym_envs.observe.store.EpisodeRow.result`:
    ``{"task": seed, "trial": 0, "return", "metrics", "error": None, "outcome"}``), which
    :func:`agentgym_envs.evaluation.results.summarize` summarizes. ``agent_factory`` has the signature
    of :data:`agentgym_envs.evaluation.POLICIES`' values and is shipped to the workers (Ray
    pickles it with cloudpickle, so lambdas and closures work). The episodes are played by
    :class:`~agentgym_envs.core.runners.SteppingRunner` with
    :class:`~agentgym_envs.core.runners.SeededAgents`, as an evaluation plays a reference policy.
    """

    env_id: str
    agent_factory: Callable[[gym.Env, int], Agent]
    split: str = "test"
    make_kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, seeds: Sequence[int]) -> list[Record]:
        rows: list[EpisodeRow] = []
        setup = EpisodeSetup(self.env_id, self.split, make_kwargs=self.make_kwargs)
        with local_runner(SeededAgents(self.agent_factory), setup, 1) as runner:
            runner.run([(seed, 0) for seed in seeds], rows.append)
        return [row.result() for row in rows]


@dataclass(frozen=True)
class RayRunner:
    """Plays episodes on Ray workers (at most ``num_workers`` at once; default one per CPU of the
    cluster): each worker plays a shard of the keys with its own policy, built from ``spec``, on
    ``setup``'s envs (an env id, ``concurrency`` per worker), and returns their rows; each row goes
    to ``finished`` here, in the driver, as its shard returns (so this process writes the results
    file and the run store)."""

    spec: PolicySpec
    setup: EpisodeSetup
    num_workers: int | None = None

    def run(self, keys: Sequence[Key], finished: Sink) -> None:
        def hand_over(rows: list[EpisodeRow]) -> None:
            for row in rows:
                finished(row)

        fan_out(EpisodeShard(self.spec, self.setup), keys, self.num_workers, on_records=hand_over)


def fan_out(
    shard_fn: ShardFn,
    keys: Sequence[Any],
    num_workers: int | None = None,
    shard_size: int | None = None,
    worker_options: dict[str, Any] | None = None,
    on_records: Callable[[list[Any]], None] | None = None,
    max_retries: int = 3,
) -> list[Any]:
    """``shard_fn`` over ``keys`` (picklable episode keys: seeds for :class:`SeededEpisodes`,
    ``(task, trial)`` pairs for an :class:`~agentgym_envs.core.runners.EpisodeShard`) on at most
    ``num_workers`` Ray workers at once (default: one per CPU of the Ray cluster); ``shard_fn``
    returns one result (a record, an episode row) per key.

    Keys are cut into shards of ``shard_size`` consecutive keys (default: one shard per
    worker). ``worker_options`` are Ray task options (default ``num_cpus=1``; an endpoint
    evaluator that mostly waits on the network can take a fraction). ``on_records`` is called
    with each shard's results as the shard finishes (to write them as they come, for resume).
    A shard whose worker dies is run again, up to ``max_retries`` times in all, with a logged
    warning. Without a Ray connection (:func:`~agentgym_envs.scale.init_ray`), a local Ray is
    started. While tracing is on, each worker traces its episodes to the same collector, under
    the span current here (the run's). Returns the results in the order of ``keys``.
    """
    if num_workers is not None and num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    keys = list(keys)
    if not keys:
        return []
    init_ray()
    num_workers = num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    shard_size = shard_size or math.ceil(len(keys) / num_workers)
    shards = [keys[start : start + shard_size] for start in range(0, len(keys), shard_size)]
    task = ray.remote(_run_shard).options(**{"num_cpus": 1, **(worker_options or {}), "max_retries": 0})
    shard_ref, trace = ray.put(shard_fn), tracing.propagation()
    results: dict[int, list[Any]] = {}
    running: dict[Any, int] = {}
    queue, retries = list(range(len(shards))), 0
    while queue or running:
        while queue and len(running) < num_workers:
            index = queue.pop(0)
            running[task.remote(shard_ref, shards[index], trace)] = index
        [done], _ = ray.wait(list(running), num_returns=1)
        index = running.pop(done)
        try:
            records = ray.get(done)
        except WORKER_LOST as error:
            if retries >= max_retries:
                raise RuntimeError(f"a Ray worker died running episodes {shards[index][0]}..{shards[index][-1]} and "
                                   f"the {max_retries} retries allowed are spent: {error}") from error
            retries += 1
            logger.warning("a Ray worker died running episodes %s..%s (%s); running them again (retry %d of %d)",
                           shards[index][0], shards[index][-1], type(error).__name__, retries, max_retries)
            queue.insert(0, index)
            continue
        if len(records) != len(shards[index]):
            raise RuntimeError(f"the shard function returned {len(records)} records for {len(shards[index])} episodes")
        results[index] = records
        if on_records is not None:
            on_records(records)
    return [record for index in range(len(shards)) for record in results[index]]


def _run_shard(shard_fn: ShardFn, keys: list[Any], trace: dict[str, Any] | None) -> list[Any]:
    with tracing.continued(trace):
        return shard_fn(keys)
