"""Our PPO and BC on the features observation with flat admissible actions, and training
through a curriculum of levels."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import agentgym_envs  # noqa: F401
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.wrappers import LEVEL_KEY, Curriculum, FlatDiscreteAction
from trainers import bc
from trainers.lifecycle import load_trained_policy, start, train
from trainers.run import TrainRequest
from trainers.torch_policy import env_factory

L0, L1 = "AgentGym/CustomerSupport-L0-v0", "AgentGym/CustomerSupport-L1-v0"
TINY_PPO = {"observation": "features", "num_envs": 4, "num_steps": 32, "eval_every_steps": 256, "eval_curve_episodes": 3}


def request(tmp_path: Path, algo: str, total_steps: int, **fields) -> TrainRequest:
    overrides = fields.pop("overrides")
    return TrainRequest(L0, algo=algo, total_steps=total_steps, device="cpu", run_root=str(tmp_path), eval_episodes=5,
                        progress=False, record=False, overrides=overrides, **fields)


def test_ppo_on_features_never_makes_an_invalid_call_and_reloads(tmp_path):
    result = train(request(tmp_path, "ppo", 512, overrides=TINY_PPO))
    assert result.test_metrics["invalid_calls"] == 0 == result.train_metrics["invalid_calls"]
    assert [s for s, _ in result.train_curve] == [s for s, _ in result.curve]
    policy = load_trained_policy(Path(result.run_dir) / "checkpoint.pt", "cpu")
    env = policy.make_env("test")
    observation, info = env.reset(seed=0)
    assert env.action_space.n == 11 * 64 and observation.shape == env.observation_space.shape
    action = policy.agent(env)(observation, info)
    assert info["action_mask"][action]


def test_an_action_capacity_sizes_the_flat_actions_in_training_and_in_the_reloaded_policy(tmp_path):
    overrides = {**TINY_PPO, "action_capacity": 32, "bc_steps": 64, "bc_epochs": 1, "bc_eval_curve_episodes": 1}
    result = train(request(tmp_path, "bc-ppo", 256, overrides=overrides))
    policy = load_trained_policy(Path(result.run_dir) / "checkpoint.pt", "cpu")
    assert policy.make_env("test").action_space.n == 11 * 32
    assert policy.network.spec["n_actions"] == 11 * 32


@pytest.mark.parametrize(("algo", "observation"), [("ppo", "bag"), ("bc", "tokens"), ("grpo", "tokens")])
def test_an_action_capacity_without_the_features_is_refused(tmp_path, algo, observation):
    with pytest.raises(ValueError, match="action_capacity sizes the features' flat actions"):
        train(request(tmp_path, algo, 256, overrides={"observation": observation, "action_capacity": 32}))


def test_bc_trains_on_features_within_the_masks(tmp_path):
    result = train(request(tmp_path, "bc", 600, overrides={"observation": "features", "epochs": 2, "eval_curve_episodes": 3}))
    assert result.total_steps == 600
    assert result.test_metrics["invalid_calls"] == 0


def test_bc_on_features_records_the_experts_flat_actions(tmp_path):
    env, data = expert_data(tmp_path, L0, 30)
    outcomes, done, episode = [], True, 0
    for action in data["action"]:  # replayed on the recording's episodes (seeds 0, 1, ...)
        if done:
            env.reset(seed=episode)
            episode += 1
        _, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
        if done:
            outcomes.append(info["metrics"]["success"])
    assert len(outcomes) >= 3 and all(outcomes)  # every ticket the recording finished is solved


def expert_data(tmp_path, env_id: str, steps: int):
    """The BC run's train env for ``env_id`` on features, and ``steps`` expert steps recorded on it."""
    run = start(TrainRequest(env_id, algo="bc", total_steps=steps, device="cpu", run_root=str(tmp_path),
                             progress=False, record=False, overrides={"observation": "features"}))
    config = run.config(bc.Config)
    env = env_factory(run, "train", True, config.context_len, config.entity_len, config.observation)()
    return env, bc.expert_dataset(env, steps, seed=0)


@pytest.mark.parametrize("env_id", ["AgentGym/Tau2Retail-L0-v0", "AgentGym/SupportTeam-L0-v0"])
def test_bc_records_only_expert_calls_the_masks_admit(tmp_path, env_id):
    """Tau2Retail's expert repeats reads, which ``mask_repeats`` masks: played, not recorded."""
    _, data = expert_data(tmp_path, env_id, 60)
    assert len(data["action"]) == 60
    assert np.asarray(data["action_mask"])[np.arange(60), data["action"]].all()


def test_bc_clones_the_expert_teams_handoffs_on_the_support_team(tmp_path):
    """The team as one env (``ActiveAgentEnv``): the ticket holder's expert calls, handoffs included."""
    env, data = expert_data(tmp_path, "AgentGym/SupportTeam-L0-v0", 40)
    handoff = env.unwrapped.base.tool_names.index("handoff")
    offsets = bc.find_wrapper(env, FlatDiscreteAction).offsets
    assert handoff in np.searchsorted(offsets, data["action"], side="right") - 1


def test_a_curriculum_run_trains_on_its_levels_and_is_evaluated_on_the_last(tmp_path):
    run = start(request(tmp_path, "ppo", 256, overrides=TINY_PPO, curriculum=("L0", "L1"), curriculum_threshold=1.0))
    assert run.env_id == L1 and run.curriculum == (L0, L1)
    assert json.loads((run.run_dir / "run.json").read_text())["curriculum"] == [L0, L1]
    env = run.make_env("train")
    assert isinstance(env, Curriculum) and not isinstance(run.make_env("test", training=False), Curriculum)
    expert = ExpertPolicy(env)
    levels = []
    for episode in range(52):
        observation, info = env.reset(seed=episode)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(expert(observation, info))
            done = terminated or truncated
        levels.append(info["metrics"][LEVEL_KEY])
    assert levels[49] == 0.0 and levels[50:] == [1.0, 1.0]


def test_a_curriculum_run_logs_its_level(tmp_path):
    result = train(request(tmp_path, "ppo", 512, overrides=TINY_PPO, curriculum=("L0", "L1")))
    assert result.env_id == L1 and result.curriculum == [L0, L1]
    tags = set()
    for path in glob.glob(str(Path(result.run_dir) / "events.out.tfevents.*")):
        accumulator = EventAccumulator(path)
        accumulator.Reload()
        tags |= set(accumulator.Tags()["scalars"])
    assert f"metrics/{LEVEL_KEY}" in tags
