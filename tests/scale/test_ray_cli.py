"""``agentgym train`` and ``agentgym eval`` on Ray workers (--num-workers, --ray-address)."""

from __future__ import annotations

import functools
import json

import gymnasium as gym

from agentgym_envs.cli import _eval_on_ray, build_parser, main
from agentgym_envs.evaluation import POLICIES
from agentgym_envs.evaluation.results import summarize
from agentgym_envs.scale import RayVectorEnv, SeededEpisodes
from trainers.run import make_vector_env

CS = "AgentGym/CustomerSupport-v1"
TINY = ["--set", "num_envs=2", "--set", "num_steps=16", "--set", "embed_dim=16", "--set", "layers=1", "--set", "heads=2",
        "--set", "ff_dim=32", "--set", "eval_every_steps=0", "--no-progress", "--eval-episodes", "2"]


def test_the_lifecycle_makes_a_ray_vector_env_with_same_step_autoreset():
    envs = make_vector_env([functools.partial(gym.make, CS)] * 3, "ray", num_workers=2)
    try:
        assert isinstance(envs.unwrapped, RayVectorEnv) and envs.unwrapped.num_workers == 2
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    finally:
        envs.close()


def test_train_runs_ppo_on_ray_workers(tmp_path):
    assert main(["train", "customer_support", "--total-steps", "32", "--device", "cpu", "--run-dir", str(tmp_path),
                 "--num-workers", "2", *TINY]) == 0
    run = json.loads((tmp_path / "CustomerSupport-v1__ppo__seed0" / "run.json").read_text())
    assert run["overrides"]["vectorization"] == "ray"


def test_train_rejects_ray_workers_with_another_vectorization(tmp_path, capsys):
    assert main(["train", "customer_support", "--run-dir", str(tmp_path), "--num-workers", "2",
                 "--set", "vectorization=async"]) == 2
    assert "drop --set vectorization" in capsys.readouterr().err


def test_eval_on_ray_gives_the_records_of_a_local_run_of_the_same_seeds():
    args = build_parser().parse_args(["eval", "customer_support", "--episodes", "5", "--seed", "7", "--num-workers", "2"])
    local = summarize(SeededEpisodes(CS, POLICIES["random"], "test", {"action_mode": "structured"})(range(7, 12)), trials=1)
    assert _eval_on_ray(args, CS, "random", {"action_mode": "structured"}) == local


def test_training_on_ray_workers_traces_their_episodes_under_the_run(tmp_path, phoenix):
    from agentgym_envs.observe.store import RunStore

    assert main(["train", "customer_support", "--total-steps", "32", "--device", "cpu", "--run-dir", str(tmp_path),
                 "--num-workers", "2", "--store", str(tmp_path / "s.db"), "--otlp-endpoint", f"{phoenix.url}/v1/traces",
                 *TINY]) == 0
    with RunStore(tmp_path / "s.db") as store:
        (run,) = store.runs()
        evaluation_steps = sum(len(e["rewards"]) for e in store.episodes(run["id"]))  # the final evaluation's, here
    spans = phoenix.spans(run["trace_id"], 1 + 32 + evaluation_steps)
    workers = {s["context"]["span_id"] for s in spans if s["span_kind"] == "AGENT" and s["parent_id"] == run["span_id"]}
    tools = [s for s in spans if s["span_kind"] == "TOOL"]
    assert len(tools) == 32 + evaluation_steps
    assert sum(s["parent_id"] in workers for s in tools) == 32  # the training steps, in the workers' episodes
