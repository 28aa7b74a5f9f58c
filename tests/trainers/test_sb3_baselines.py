"""The SB3 baselines train end to end on CustomerSupport-v0 (a few hundred steps each)."""

from __future__ import annotations

import glob
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.torch_layers import FlattenExtractor
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import agentgym_envs  # noqa: F401
from trainers import sb3_baselines
from trainers.lifecycle import load_result, start, train
from trainers.run import TrainRequest, make_env
from trainers.sb3_baselines import PPOConfig, TokenFeaturesExtractor, baseline_env

ENV_ID = "AgentGym/CustomerSupport-v0"
STABLE_TAGS = {"charts/episodic_return_training_reward", "charts/SPS", "metrics/success", "metrics/tool_reliability",
               "metrics/tokens_used", "metrics/cost_reduction", "eval/test_success", "final/test_success"}
TINY = {  # a few hundred steps, evaluations and checkpoints inside them
    "sb3-ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1},
    "sb3-maskable-ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1},
    "sb3-a2c": {"n_envs": 2, "n_steps": 8},
    "sb3-dqn": {"buffer_size": 500, "learning_starts": 64, "target_update_interval": 100},
}
COMMON = {"eval_every": 128, "checkpoint_every": 128, "log_every": 64, "curve_eval_episodes": 3}


def tiny_request(algo: str, root: Path, total_steps: int = 256, resume: bool = False, **overrides) -> TrainRequest:
    return TrainRequest(ENV_ID, algo=algo, seed=0, total_steps=total_steps, device="cpu", run_root=str(root), eval_episodes=3,
                        resume=resume, progress=False, overrides={**TINY[algo], **COMMON, **overrides})


def scalar_tags(run_dir: Path) -> set[str]:
    tags: set[str] = set()
    for path in glob.glob(str(run_dir / "events.out.tfevents.*")):
        accumulator = EventAccumulator(path)
        accumulator.Reload()
        tags |= set(accumulator.Tags()["scalars"])
    return tags


@pytest.mark.parametrize("algo", list(TINY))
def test_baseline_trains_end_to_end_and_logs_stable_tags(algo, tmp_path):
    result = train(tiny_request(algo, tmp_path))
    run_dir = Path(result.run_dir)
    assert result.algo == algo and result.total_steps >= 256
    assert result.sps > 0 and result.wall_time_s > 0
    assert {"success", "tool_reliability", "tokens_used"} <= set(result.test_metrics) & set(result.train_metrics)
    assert result.test_metrics["episodes"] == 3
    assert [s for s, _ in result.curve] == sorted(s for s, _ in result.curve) and result.curve[-1][0] == result.total_steps
    assert result.curve[0][0] == 128 and len(result.curve) >= 2  # periodic test evaluations, then the final one
    assert (run_dir / "checkpoint.zip").exists() and (run_dir / "result.json").exists()
    assert not (run_dir / "replay_buffer.pkl").exists()  # DQN's buffer serves an interrupted run only
    assert load_result(run_dir) == result
    assert STABLE_TAGS <= scalar_tags(run_dir)


class MaskViolations(gym.Wrapper):
    """Counts actions that fall outside the action masks of the space the baseline acts in (the
    joint mask of the flat admissible actions; per dimension for ``MultiDiscrete``)."""

    violations = 0
    actions = 0

    def step(self, action):
        mask = self.env.get_wrapper_attr("action_masks")()
        if isinstance(self.env.action_space, gym.spaces.Discrete):
            MaskViolations.violations += not mask[int(action)]
        else:
            offset = 0
            for size, value in zip(self.env.action_space.nvec, np.asarray(action)):
                MaskViolations.violations += not mask[offset + int(value)]
                offset += size
        MaskViolations.actions += 1
        return self.env.step(action)

    def action_masks(self):
        return self.env.get_wrapper_attr("action_masks")()


@pytest.fixture
def count_mask_violations(monkeypatch):
    MaskViolations.violations = MaskViolations.actions = 0
    monkeypatch.setattr(sb3_baselines, "baseline_env", lambda *args: MaskViolations(baseline_env(*args)))
    return MaskViolations


def test_maskable_ppo_never_takes_a_masked_action(count_mask_violations, tmp_path):
    train(tiny_request("sb3-maskable-ppo", tmp_path))
    assert count_mask_violations.actions > 256  # training and evaluation both went through the check
    assert count_mask_violations.violations == 0


def test_unmasked_ppo_does_take_masked_actions(count_mask_violations, tmp_path):
    """The check above can fail: the same untrained network without masks picks masked entities."""
    train(tiny_request("sb3-ppo", tmp_path))
    assert count_mask_violations.violations > 0


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    first = train(tiny_request("sb3-ppo", tmp_path, total_steps=256))
    checkpoint = Path(first.run_dir) / "checkpoint.zip"
    saved = PPO.load(checkpoint).policy.state_dict()
    again = train(tiny_request("sb3-ppo", tmp_path, total_steps=256, resume=True))
    assert again.total_steps == first.total_steps  # nothing left to train
    reloaded = PPO.load(checkpoint).policy.state_dict()
    assert all(torch.equal(saved[k], reloaded[k]) for k in saved)
    longer = train(tiny_request("sb3-ppo", tmp_path, total_steps=512, resume=True))
    assert longer.total_steps == 512
    assert [p for p in first.curve if p[0] < first.total_steps] == [p for p in longer.curve if p[0] < first.total_steps]
    assert any(s > first.total_steps for s, _ in longer.curve)
    trained = PPO.load(checkpoint).policy.state_dict()
    assert not all(torch.equal(saved[k], trained[k]) for k in saved)


class Interrupted(Exception):
    pass


def test_dqn_resume_restores_the_replay_buffer(tmp_path, monkeypatch):
    checkpoint = sb3_baselines.BaselineRun.checkpoint

    def checkpoint_then_die(self, finished=False):
        checkpoint(self, finished)
        raise Interrupted  # as a run killed right after its first checkpoint

    with monkeypatch.context() as patch:
        patch.setattr(sb3_baselines.BaselineRun, "checkpoint", checkpoint_then_die)
        with pytest.raises(Interrupted):
            train(tiny_request("sb3-dqn", tmp_path, total_steps=400))
    resumed = sb3_baselines.BaselineRun(start(tiny_request("sb3-dqn", tmp_path, total_steps=400, resume=True)))
    n_envs = resumed.config.n_envs
    extra = sb3_baselines.env_options(resumed.run.env_id, resumed.run.env_kwargs, resumed.config)  # the features observation
    make = lambda: baseline_env(resumed.run.env_factory("train", extra_kwargs=extra), resumed.config, True)  # noqa: E731
    venv = sb3_baselines.make_vec_env(make, n_envs=n_envs)
    model = resumed.make_model(venv, make())
    # one row per vector step, but the one the checkpoint fires in: SB3 calls back before it stores the step
    assert model.num_timesteps == COMMON["checkpoint_every"] and model.replay_buffer.size() == model.num_timesteps // n_envs - 1


def test_a_finished_dqn_run_given_more_steps_goes_on_from_an_empty_buffer(tmp_path):
    first = train(tiny_request("sb3-dqn", tmp_path, total_steps=200))
    longer = train(tiny_request("sb3-dqn", tmp_path, total_steps=400, resume=True))
    assert first.total_steps < 400 <= longer.total_steps
    assert not (Path(longer.run_dir) / "replay_buffer.pkl").exists()


def test_bag_of_tokens_observation_trains_with_mlp_policy(tmp_path):
    result = train(tiny_request("sb3-a2c", tmp_path, observation="bag"))
    model = A2C.load(Path(result.run_dir) / "checkpoint.zip", device="cpu")
    bag = baseline_env(lambda: make_env(ENV_ID, "train", {}), PPOConfig(observation="bag"), flat_actions=False)
    assert result.total_steps >= 256
    assert model.observation_space == bag.observation_space  # the bag's vector, not the features'
    assert isinstance(model.policy.features_extractor, FlattenExtractor)


def test_unknown_override_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown sb3-ppo setting.*n_step"):
        train(tiny_request("sb3-ppo", tmp_path, n_step=3))


def test_features_extractor_sees_entity_rows_by_position():
    env = baseline_env(lambda: make_env(ENV_ID, "train", {}), PPOConfig(observation="tokens"), flat_actions=False)
    observation, _ = env.reset(seed=0)
    extractor = TokenFeaturesExtractor(env.observation_space)
    rows = observation[256:].reshape(-1, 12)
    swapped = rows.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    batch = torch.as_tensor(np.stack([observation, np.concatenate([observation[:256], swapped.ravel()])]), dtype=torch.float32)
    features = extractor(batch)
    assert features.shape == (2, 128)
    assert not torch.allclose(features[0], features[1])


def test_baselines_train_on_the_scenarios_training_reward_and_evaluate_on_the_default(tmp_path):
    run = start(tiny_request("sb3-ppo", tmp_path))
    declared = gym.make(ENV_ID).unwrapped.training_reward
    config = PPOConfig(observation="tokens")  # the text observation: the env as the run's factory makes it
    training = baseline_env(run.env_factory("train", training=True), config, False).unwrapped.reward_config
    evaluation = sb3_baselines.SB3Policy(ENV_ID, None, sb3_baselines.BASELINES["sb3-ppo"], config).make_env("test")
    assert declared and all(getattr(training, name) == value for name, value in declared.items())
    assert evaluation.unwrapped.reward_config == gym.make(ENV_ID).unwrapped.reward_config


def test_scaled_reward_scales_what_the_algorithm_learns_from_not_the_logged_returns():
    from stable_baselines3.common.env_util import make_vec_env

    def rewards(scale: float) -> tuple[np.ndarray, list[float]]:
        venv = sb3_baselines.ScaledReward(make_vec_env("CartPole-v1", n_envs=2, seed=0), scale)
        venv.reset()
        learnt, returns = [], []
        for _ in range(40):
            _, reward, _, infos = venv.step(np.zeros(2, dtype=np.int64))
            learnt.append(reward)
            returns += [info["episode"]["r"] for info in infos if "episode" in info]
        return np.array(learnt), returns

    (raw, raw_returns), (scaled, scaled_returns) = rewards(1.0), rewards(0.1)
    np.testing.assert_allclose(scaled, raw * 0.1)
    assert raw_returns and scaled_returns == raw_returns


def test_distribution_checks_are_off_inside_the_block_and_as_before_after_it():
    logits = torch.zeros(2, 3)
    checked_before = torch.distributions.Categorical(logits=logits)._validate_args
    with sb3_baselines.unchecked_distributions():
        assert not torch.distributions.Categorical(logits=logits)._validate_args
        with pytest.raises(ValueError):  # an explicit request still checks
            torch.distributions.Categorical(probs=torch.tensor([-1.0, 1.0, 1.0]), validate_args=True)
    assert torch.distributions.Categorical(logits=logits)._validate_args == checked_before
