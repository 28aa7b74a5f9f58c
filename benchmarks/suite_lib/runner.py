"""Running the suite's cells: one cell through ``trainers.lifecycle.train`` into plain data (its
row, curve points and final episodes), here one after the other or as Ray tasks, as they finish.

A cell resumes its run directory only when that directory was started with the cell's settings
hash (kept beside it, ``<run>.settings``) and the run resumes bit-identically
(``trainers.lifecycle.resumes_exactly``: our torch trainers, from a checkpoint that holds its envs;
an SB3 run, or one whose checkpoint holds no envs (subprocess envs), starts afresh, so that its row is its
command's run); any other run there is started afresh. A resumed run's training and evaluation
seconds are summed over its sittings by the lifecycle (``wall.json``)."""

from __future__ import annotations

import importlib
import itertools
import json
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.processor import cpu_name

from .llm_rows import LLMCell
from .plan import Cell, trainer
from .store import KEY, latest_episodes

VERSIONS = ("torch", "stable_baselines3", "gymnasium")


@dataclass(frozen=True)
class Job:
    """A cell and where it runs: the run root (on the machine that runs it), device, commit, and the
    modules that register its algorithm."""

    cell: Cell | LLMCell
    run_root: str
    device: str
    commit: str
    imports: tuple[str, ...] = ()  # modules the run imports first: they register its algorithm (--import)


def versions() -> dict[str, str]:
    """The installed versions of torch, SB3 and gymnasium (read without importing them)."""
    return {name: metadata.version(name.replace("_", "-")) for name in VERSIONS}


def machine() -> str:
    """The processor this process runs on and the kernels torch picks for it (``<model name> / <capability>``,
    e.g. ``AMD EPYC / AVX512``): a command's float results can differ between processors."""
    import torch

    return f"{cpu_name()} / {torch.backends.cpu.get_cpu_capability()}"


def episode_rows(cell: Cell | LLMCell, path: Path, split: str) -> list[dict[str, object]]:
    """A final evaluation's per-episode outcomes (its JSONL results file) as rows of :data:`EPISODE_FIELDS`."""
    rows = []
    for record in latest_episodes(path):
        metrics = record["metrics"]
        task_id = record.get("task_id") or str(record["task"])
        rows.append({**dict(zip(KEY, cell.key)), "split": split, "task_id": task_id,
                     "unit_id": record.get("unit_id") or task_id, "success": int(bool(metrics.get("success", 0))),
                     "return": round(float(record["return"]), 4), "turns": int(metrics.get("turns", 0)),
                     "invalid_calls": int(metrics.get("invalid_calls", 0))})
    return rows


def row_command(cell: Cell, device: str, imports: tuple[str, ...] = ()) -> str:
    """The command that reproduces the cell from the repository root: ``agentgym train ...``; for a
    user's algorithm (a module path, or a name that ``imports`` register) ``python -m agentgym_envs.cli
    train ...``, which imports modules from the working directory as the console script does not."""
    command = cell.command(device) + "".join(f" --import {shlex.quote(module)}" for module in imports)
    return f"python -m agentgym_envs.cli{command.removeprefix('agentgym')}" if imports or "." in cell.algorithm else command


def run_job(job: Job) -> dict[str, Any]:
    """Train and evaluate ``job``'s cell (a language model's: evaluate it); its row, curve points and episodes."""
    from trainers.lifecycle import episodes_path, resumes_exactly, train
    from trainers.run import TrainRequest, run_dir_for

    for module in job.imports:
        importlib.import_module(module)
    cell = job.cell
    if isinstance(cell, LLMCell):
        return cell.evaluate(job)
    settings_hash = cell.settings_hash(job.device)
    algo = trainer(cell.algorithm)
    run_root = cell.run_root(job.run_root)
    run_dir = run_dir_for(run_root, cell.env_id, algo, cell.seed)
    marker = run_dir.with_name(run_dir.name + ".settings")
    same = marker.exists() and marker.read_text(encoding="utf-8") == settings_hash
    # a row must be its command's run: a run that would not resume bit-identically starts afresh
    resume = same and resumes_exactly(algo, run_dir)
    if not resume:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(settings_hash, encoding="utf-8")
        if run_dir.exists():
            why = "its run directory holds other settings" if not same else "it would not resume exactly"
            print(f"  {cell.name} starting afresh: {why}", flush=True)
    request = TrainRequest(cell.env_id, algo=algo, seed=cell.seed, total_steps=cell.env_steps,
                           device=job.device, run_root=run_root, eval_episodes=cell.eval_episodes, resume=resume,
                           progress=False, record=False, overrides=dict(cell.overrides))
    result = train(request)
    sittings = json.loads((Path(result.run_dir) / "wall.json").read_text(encoding="utf-8"))["sittings"]
    row = {**dict(zip(KEY, cell.key)), "env_id": cell.env_id, "budget": cell.env_steps, "env_steps": result.total_steps,
           "train_success": round(result.train_metrics["success"], 4),
           "test_success": round(result.test_metrics["success"], 4), "test_return": round(result.test_metrics["return"], 4),
           "wall_train_s": round(result.wall_train_s, 3), "wall_eval_s": round(result.wall_eval_s, 3),
           "sittings": sittings, "settings_hash": settings_hash, "commit": job.commit,
           "command": row_command(cell, job.device, job.imports), **versions(), "cpu": machine()}
    curves = [{**dict(zip(KEY, cell.key)), "split": split, "env_steps": step, "success": round(value, 4)}
              for split, points in ((result.curve_split, result.curve), ("train", result.train_curve)) for step, value in points]
    episodes = [e for split in ("train", "test") for e in episode_rows(cell, episodes_path(result.run_dir, split), split)]
    return {"row": row, "curves": curves, "episodes": episodes}


Outcome = Callable[[], dict[str, Any]]  # the job's result, or its error raised


def run_here(jobs: Iterable[Job]) -> Iterator[tuple[Job, Outcome]]:
    """Each job, one after the other in this process."""
    for job in jobs:
        yield job, lambda job=job: run_job(job)


def run_on_ray(jobs: Iterable[Job], address: str | None, workers: int | None) -> Iterator[tuple[Job, Outcome]]:
    """Each job a Ray task (one CPU), yielded as it finishes: on a local Ray of ``workers`` CPUs
    (``address`` None), or on the cluster at ``address`` ("auto": the one this machine joined). A job is
    drawn from ``jobs`` when a CPU of the cluster (counted again as each run finishes, so that workers that join
    are used) is free for it, so that ``jobs`` can stop yielding while runs go on."""
    import ray
    from ray import cloudpickle  # Ray's own copy: the one that pickles its tasks

    from agentgym_envs.scale import init_ray

    # the suite's modules travel by value, but a task imports the repository's packages at run time (trainers,
    # agentgym_envs, benchmarks.suite_lib for a language model's row): every machine has the repository (docs/benchmark.md)
    cloudpickle.register_pickle_by_value(sys.modules[__package__])
    init_ray(address, None if address else workers)
    task = ray.remote(num_cpus=1, max_retries=0)(run_job)
    queue: Iterator[Job] = iter(jobs)
    pending: dict[Any, Job] = {}

    def top_up() -> None:  # one run in flight per CPU of the cluster
        free = max(1, int(ray.cluster_resources().get("CPU", 1))) - len(pending)
        pending.update((task.remote(job), job) for job in itertools.islice(queue, max(0, free)))

    top_up()
    while pending:
        (ready,), _ = ray.wait(list(pending), num_returns=1)
        yield pending.pop(ready), lambda ready=ready: ray.get(ready)  # written before the next run is drawn
        top_up()
