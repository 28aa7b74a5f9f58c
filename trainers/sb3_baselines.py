"""Stable-Baselines3 / sb3-contrib baselines on the AgentGym environments.

=================  ==========================================  =============================
baseline           action space (tool-use envs)                policy input (default)
=================  ==========================================  =============================
sb3-ppo            ``FlatDiscreteAction`` (admissible layout)  features + SB3's ``MlpPolicy``
sb3-a2c            ``FlatDiscreteAction`` (admissible layout)  features + SB3's ``MlpPolicy``
sb3-maskable-ppo   ``FlatDiscreteAction``, its joint mask      features + SB3's ``MlpPolicy``
sb3-dqn            ``FlatDiscreteAction`` (admissible layout)  features + SB3's ``MlpPolicy``
=================  ==========================================  =============================

By default a tool-use env is made with ``observation="features"`` (a vector of the task, the
calls made, the turn and the entity rows) and ``mask_repeats`` (set ``mask_repeats=false`` to
keep repeated calls admissible), and acts through ``FlatDiscreteAction``: one ``Discrete``
action per admissible call, so that MaskablePPO's mask admits exactly the valid calls (a mask
per ``MultiDiscrete`` dimension admits thousands of invalid combinations, and SB3's heads sample
each dimension on its own). ``observation="tokens"`` (token ids + :class:`TokenFeaturesExtractor`)
and ``"bag"`` (hashed token counts + ``MlpPolicy``) read the text observation instead, on the
env's ``MultiDiscrete`` actions (DQN: always flat). An env whose observation is already a vector
(``CartPole-v1``) trains ``MlpPolicy`` on it as it is. Hyper-parameters live in one dataclass
per baseline (:class:`PPOConfig`, ...), set through ``--set``; ``torch.distributions``' argument checks
are off while a baseline trains and acts (:func:`unchecked_distributions`). The lifecycle
(:mod:`trainers.lifecycle`) gives the run directory, the envs (with the scenario's training
reward), the final evaluation and report. Every run: TensorBoard scalars under the project's
tags, a periodic evaluation on validation and train (``eval/validation_success``, the learning curve), atomic
checkpoints (``checkpoint.zip``, DQN's ``replay_buffer.pkl``, ``progress.json``) that
``--resume`` continues from: the weights, optimizer, step count and replay buffer; the
environments restart their episodes, so it is not bit-identical to an uninterrupted run. The
replay buffer serves an interrupted run only: a finished run's directory drops it (up to ~1 GB
per run), and a finished DQN run given more steps goes on from an empty buffer.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from torch import nn

from agentgym_envs.wrappers import PAD_ID, TokenIdsObservation

from .run import (
    EPISODE_METRICS,
    TRAINING_RETURN_TAG,
    CheckpointError,
    Run,
    Trained,
    features_kwargs,
    run_info,
    write_json_atomic,
)
from .run import make_env as make_base_env
from .torch_policy import TrainerInfo, policy_env

REPLAY_BUFFER_FILE = "replay_buffer.pkl"
# what the training envs' infos keep: the episode metrics BaselineCallback logs (Monitor adds "episode" above them).
# SB3's DummyVecEnv deep-copies every info every step, and a tool-use info holds the whole conversation.
TRAINING_INFO_KEYS = ("metrics",)
PROGRESS_FILE = "progress.json"


class ScaledReward(VecEnvWrapper):
    """The vector env with its rewards multiplied by ``scale`` (the episode returns its
    ``Monitor`` reports stay the env's own)."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        super().__init__(venv)
        self.scale = scale

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> Any:
        observations, rewards, dones, infos = self.venv.step_wait()
        return observations, rewards * self.scale, dones, infos


# --------------------------------------------------------------------------- configs
@dataclass
class SB3Config:
    """What every SB3 baseline shares: observation, features extractor, logging cadence.

    ``observation``: ``"features"`` (the env's features observation + ``MlpPolicy``, flat
    actions), ``"tokens"`` (``TokenIdsObservation`` + :class:`TokenFeaturesExtractor`) or
    ``"bag"`` (``BagOfTokensObservation`` + ``MlpPolicy``); ``mask_repeats``, ``action_layout``
    and ``action_capacity``: the env's and ``FlatDiscreteAction``'s settings; ``reward_scale``:
    the training rewards are multiplied by it, as our PPO's ``reward_scale`` does (1: SB3's own
    way; ``docs/training.md`` gives where 0.1 helped and where it hurt). Subclasses add the
    algorithm's own constructor arguments (every field not declared here).
    """

    observation: str = "features"
    mask_repeats: bool = True
    action_layout: str = "admissible"
    action_capacity: int | None = None
    n_envs: int = 8
    context_len: int = 256
    entity_len: int = 12
    bag_dim: int = 1024
    hash_buckets: int = 4_096
    embed_dim: int = 32
    recent_tokens: int = 32
    features_dim: int = 128
    net_arch: tuple[int, ...] = (64, 64)  # SB3's MlpPolicy default, and our PPO's MLP
    eval_every: int = 5_000
    curve_eval_episodes: int = 50
    log_every: int = 1_000
    checkpoint_every: int = 20_000
    torch_threads: int = 1
    reward_scale: float = 1.0

    def algo_kwargs(self) -> dict[str, Any]:
        """The SB3 constructor arguments: the fields a subclass adds."""
        shared = {f.name for f in fields(SB3Config)}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in shared}


@dataclass
class PPOConfig(SB3Config):
    """The project's untuned settings for SB3's PPO, not SB3's defaults (learning rate 3e-4, n_steps
    2048, batch 64, 10 epochs, no entropy bonus): shorter rollouts, larger batches, fewer epochs, an
    entropy bonus and a higher learning rate. At 3e-4 the actor on the features observation settles
    on one script for every task before it learns to read the task (measured on
    CustomerSupport-L1-v0: the same action probabilities, to 2 decimals, on both ticket kinds after
    100k steps; 2e-3 reads them within 25k). The benchmark's rows train with the settings tuned on
    validation, or with SB3's defaults, labelled as such."""

    learning_rate: float = 2e-3
    n_steps: int = 128
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


@dataclass
class MaskablePPOConfig(PPOConfig):
    pass


@dataclass
class A2CConfig(SB3Config):
    learning_rate: float = 7e-4
    n_steps: int = 8
    gamma: float = 0.99
    gae_lambda: float = 1.0
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


@dataclass
class DQNConfig(SB3Config):
    """``train_freq`` counts vector steps: with 4 envs, one gradient step of 64 samples every
    16 env steps (4 samples per env step, as PPO's 4 epochs)."""

    n_envs: int = 4
    learning_rate: float = 2.5e-4
    buffer_size: int = 20_000
    learning_starts: int = 2_000
    batch_size: int = 64
    train_freq: int = 4
    gradient_steps: int = 1
    target_update_interval: int = 2_000
    exploration_fraction: float = 0.3
    exploration_final_eps: float = 0.05
    gamma: float = 0.99


@dataclass(frozen=True)
class Baseline:
    """One SB3 baseline: its algorithm class, config, and how it acts on the env."""

    name: str
    algorithm: type[BaseAlgorithm]
    config: type[SB3Config]
    flat_actions: bool = False  # through FlatDiscreteAction (DQN)
    masked: bool = False  # reads action_masks() (MaskablePPO)


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline("sb3-ppo", PPO, PPOConfig),
        Baseline("sb3-a2c", A2C, A2CConfig),
        Baseline("sb3-dqn", DQN, DQNConfig, flat_actions=True),
        Baseline("sb3-maskable-ppo", MaskablePPO, MaskablePPOConfig, masked=True),
    )
}


# ------------------------------------------------------------- features extractor
class TokenFeaturesExtractor(BaseFeaturesExtractor):
    """Features of a :class:`TokenIdsObservation`: cheap enough for a 2-core CPU.

    Token ids are hashed into ``hash_buckets`` embeddings (PAD gets none). The context
    (task + recent turns) is summarised by a masked mean plus a mean over its last
    ``recent_tokens`` tokens (the latest tool result); each entity row by the mean of
    its tokens, kept in row order so a head can point at rows by position. A linear layer
    with ReLU maps the concatenation to ``features_dim``.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        context_len: int = 256,
        entity_len: int = 12,
        hash_buckets: int = 4_096,
        embed_dim: int = 32,
        recent_tokens: int = 32,
        features_dim: int = 128,
    ) -> None:
        super().__init__(observation_space, features_dim)
        size = observation_space.shape[0]
        if (size - context_len) % entity_len:
            raise ValueError(f"observation of {size} ids does not fit context_len={context_len} + rows of entity_len={entity_len}")
        self.context_len, self.entity_len = context_len, entity_len
        self.n_entities = (size - context_len) // entity_len
        self.hash_buckets, self.recent_tokens = hash_buckets, recent_tokens
        self.embed = nn.Embedding(hash_buckets + 1, embed_dim, padding_idx=0)
        self.project = nn.Sequential(nn.Linear((2 + self.n_entities) * embed_dim, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        ids = observations.long()  # SB3 hands Box observations over as floats (exact below 2**24)
        present = ids != PAD_ID
        vectors = self.embed(torch.where(present, ids % self.hash_buckets + 1, 0))
        context, entities = vectors[:, : self.context_len], vectors[:, self.context_len :]
        in_context = present[:, : self.context_len]
        count = in_context.sum(1, keepdim=True).clamp(min=1)
        mean = context.sum(1) / count
        position = torch.cumsum(in_context, 1)
        recent_mask = in_context & (position > count - self.recent_tokens)
        recent = (context * recent_mask[..., None]).sum(1) / recent_mask.sum(1, keepdim=True).clamp(min=1)
        rows = entities.reshape(len(ids), self.n_entities, self.entity_len, -1)
        row_count = present[:, self.context_len :].reshape(len(ids), self.n_entities, self.entity_len).sum(2, keepdim=True)
        row_mean = rows.sum(2) / row_count.clamp(min=1)
        return self.project(torch.cat([mean, recent, row_mean.flatten(1)], dim=1))


# ------------------------------------------------------------------- environments
def baseline_env(make_base: Callable[[], gym.Env], config: SB3Config, flat_actions: bool) -> gym.Env:
    """The env a baseline acts in: the base env from ``make_base`` (made with the features
    observation where ``config`` asks for it: :func:`env_options`) as
    :func:`~trainers.torch_policy.policy_env` builds it with ``config``'s observation and action
    settings (``flat_actions``: through ``FlatDiscreteAction`` whatever the observation, DQN)."""
    return policy_env(make_base(), config.observation, config.context_len, config.entity_len, flat_actions=flat_actions,
                      action_layout=config.action_layout, action_capacity=config.action_capacity, bag_dim=config.bag_dim)


def env_options(env_id: str, env_kwargs: dict[str, Any], config: SB3Config) -> dict[str, Any]:
    """The ``gym.make`` arguments ``config`` adds to a tool-use env (the features observation)."""
    return features_kwargs(env_id, env_kwargs, config.mask_repeats) if config.observation == "features" else {}


def policy_kwargs(config: SB3Config, env: gym.Env) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"net_arch": list(config.net_arch)}
    if isinstance(env, TokenIdsObservation):
        kwargs["features_extractor_class"] = TokenFeaturesExtractor
        kwargs["features_extractor_kwargs"] = dict(
            context_len=config.context_len,
            entity_len=config.entity_len,
            hash_buckets=config.hash_buckets,
            embed_dim=config.embed_dim,
            recent_tokens=config.recent_tokens,
            features_dim=config.features_dim,
        )
    return kwargs


@contextmanager
def unchecked_distributions() -> Iterator[None]:
    """``torch.distributions`` without argument validation inside the block (checks only: the same numbers).
    sb3-contrib's ``MaskableCategorical`` builds its distribution twice per call (once more to apply the mask),
    so the checks cost about 5 % of a MaskablePPO run's CPU time, and the Simplex check of a re-masked
    distribution can fail on float32 rounding alone (sb3-contrib's known error with many actions)."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(before)


class SB3Agent:
    """An agent callable ``(observation, info) -> action``: the model's deterministic
    ``predict`` on an env built by :func:`baseline_env` (masks read from that env if needed)."""

    def __init__(self, model: BaseAlgorithm, env: gym.Env, masked: bool) -> None:
        self.model, self.env, self.masked = model, env, masked

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        extra = {"action_masks": self.env.get_wrapper_attr("action_masks")()} if self.masked else {}
        with unchecked_distributions():
            action, _ = self.model.predict(observation, deterministic=True, **extra)
        return action


@dataclass
class SB3Policy:
    """A trained SB3 model as a :class:`~trainers.run.TrainedPolicy`."""

    env_id: str
    model: BaseAlgorithm
    baseline: Baseline
    config: SB3Config
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    def make_env(self, split: str) -> gym.Env:
        return baseline_env(lambda: make_base_env(self.env_id, split, self.env_kwargs), self.config, self.baseline.flat_actions)

    def agent(self, env: gym.Env) -> SB3Agent:
        return SB3Agent(self.model, env, self.baseline.masked)


# ------------------------------------------------------------------ run progress
@dataclass
class Progress:
    """What a checkpoint remembers besides the model: the learning curve and the time spent
    training (evaluation and checkpointing excluded), so SPS survives a resume."""

    curve: list[tuple[int, float]] = field(default_factory=list)
    train_time_s: float = 0.0

    @classmethod
    def load(cls, path: Path, up_to_step: int) -> Progress:
        data = json.loads(path.read_text(encoding="utf-8"))
        curve = [(int(s), float(v)) for s, v in data["curve"] if s <= up_to_step]
        return cls(curve, data["train_time_s"])


class BaselineCallback(BaseCallback):
    """Logs the project's TensorBoard tags, evaluates a learning-curve point every
    ``config.eval_every`` steps (the run's ``curve_every`` when set) once the weights have learnt
    from them, stops when the run's early stopping says so, checkpoints every
    ``config.checkpoint_every``, shows a progress bar."""

    def __init__(self, trainer: BaselineRun) -> None:
        super().__init__()
        self.trainer = trainer
        self.config = trainer.config
        self.writer = trainer.run.writer
        self._returns: list[float] = []
        self._metrics: dict[str, list[float]] = {key: [] for key in EPISODE_METRICS}

    def _on_training_start(self) -> None:
        step = self.num_timesteps
        interval = lambda every: (step // every + 1) * every  # noqa: E731
        self._eval_every = self.trainer.run.curve_interval(self.config.eval_every)
        self._next_log, self._next_eval, self._next_ckpt = (interval(self.config.log_every), interval(self._eval_every),
                                                            interval(self.config.checkpoint_every))
        self._started = time.perf_counter()
        self._overhead = 0.0
        self._bar = self.trainer.run.progress_bar(self.trainer.run.total_steps, initial=step)

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                self._returns.append(float(info["episode"]["r"]))
            if "metrics" in info:
                for key in EPISODE_METRICS:
                    if key in info["metrics"]:
                        self._metrics[key].append(float(info["metrics"][key]))
        step = self.num_timesteps
        self._bar.update(step - self._bar.n)
        if step >= self._next_log:
            self._log(step)
            self._next_log += self.config.log_every
        if step >= self._next_ckpt:
            self._timed(self.trainer.checkpoint)
            self._next_ckpt += self.config.checkpoint_every
        return not self.trainer.run.early_stopped(self.trainer.progress.curve)  # False: SB3 stops learning

    def _on_rollout_start(self) -> None:
        self.curve_point_if_due()

    def curve_point_if_due(self) -> None:
        """A learning-curve point once the steps reach the next one of the grid. Called where the
        weights have learnt from every step so far (a rollout's start, the end of training), so
        that a point at step s is, as for the project's PPO, the policy after s steps."""
        if self.num_timesteps >= self._next_eval:
            self._timed(self.trainer.evaluate_curve_point)
            self._next_eval = (self.num_timesteps // self._eval_every + 1) * self._eval_every

    def _on_training_end(self) -> None:
        self._bar.close()

    def train_time_s(self) -> float:
        """Seconds spent training in this process, evaluation and checkpoints excluded."""
        return time.perf_counter() - self._started - self._overhead

    def _timed(self, job: Callable[[], None]) -> None:
        started = time.perf_counter()
        self.trainer.progress.train_time_s = self.trainer.train_time_before + self.train_time_s()
        job()
        self._overhead += time.perf_counter() - started

    def _log(self, step: int) -> None:
        if self._returns:
            self.writer.add_scalar(TRAINING_RETURN_TAG, float(np.mean(self._returns)), step)
            self._bar.set_postfix(train_reward_ret=f"{np.mean(self._returns):.1f}",
                                  success=f"{np.mean(self._metrics['success']) if self._metrics['success'] else float('nan'):.2f}",
                                  refresh=False)
        for key, values in self._metrics.items():
            if values:
                self.writer.add_scalar(f"metrics/{key}", float(np.mean(values)), step)
                values.clear()
        self._returns.clear()
        elapsed = self.trainer.train_time_before + self.train_time_s()
        if elapsed > 0:
            self.writer.add_scalar("charts/SPS", step / elapsed, step)


class BaselineRun:
    """One training run of a baseline inside the lifecycle's :class:`~trainers.run.Run`."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.baseline = BASELINES[run.algo]
        self.config = run.config(self.baseline.config)
        self.progress = Progress()
        self.train_time_before = 0.0
        self.policy: SB3Policy | None = None

    def make_model(self, venv: Any, env: gym.Env) -> BaseAlgorithm:
        run, algorithm = self.run, self.baseline.algorithm
        if run.resume and run.checkpoint_path.exists():
            model = algorithm.load(run.checkpoint_path, env=venv, device=run.device)
            if self.baseline.flat_actions:
                if (run.run_dir / REPLAY_BUFFER_FILE).exists():
                    model.load_replay_buffer(run.run_dir / REPLAY_BUFFER_FILE)
                else:
                    print(f"{run.run_dir} keeps no replay buffer (the run had finished): any further steps start from an empty one")
            progress_file = run.run_dir / PROGRESS_FILE
            if progress_file.exists():
                self.progress = Progress.load(progress_file, model.num_timesteps)
            self.train_time_before = self.progress.train_time_s
            print(f"resuming {run.algo} from {run.checkpoint_path} at step {model.num_timesteps}")
            return model
        return algorithm("MlpPolicy", venv, seed=run.seed, device=run.device, policy_kwargs=policy_kwargs(self.config, env),
                         verbose=0, **self.config.algo_kwargs())

    def train(self) -> Trained:
        run = self.run
        torch.set_num_threads(self.config.torch_threads)
        extra = env_options(run.env_id, run.env_kwargs, self.config)
        factory = run.env_factory("train", training=True, extra_kwargs=extra)
        make = lambda: baseline_env(factory, self.config, self.baseline.flat_actions)  # noqa: E731
        probe = make()
        venv = make_vec_env(lambda: TrainerInfo(make(), TRAINING_INFO_KEYS), n_envs=self.config.n_envs, seed=run.seed)
        if self.config.reward_scale != 1.0:  # SB3's own way otherwise: no wrapper on every step
            venv = ScaledReward(venv, self.config.reward_scale)
        self.model = self.make_model(venv, probe)
        probe.close()
        self.model.set_logger(configure(str(run.run_dir), ["tensorboard"]))  # SB3's own train/* scalars
        self.policy = SB3Policy(run.env_id, self.model, self.baseline, self.config, {**run.env_kwargs, **extra})
        print(f"{self.baseline.name}: {self.config}")
        run.writer.add_text("config", str(self.config), self.model.num_timesteps)
        remaining = run.total_steps - self.model.num_timesteps
        callback = BaselineCallback(self)
        if remaining > 0 and not run.early_stopped(self.progress.curve):
            with unchecked_distributions():
                self.model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=False)
            if not run.early_stopped(self.progress.curve):
                callback.curve_point_if_due()
            self.progress.train_time_s = self.train_time_before + callback.train_time_s()
        self.checkpoint(finished=True)
        venv.close()
        steps = int(self.model.num_timesteps)
        return Trained(self.policy, steps, self.progress.curve, self.progress.train_time_s)

    def evaluate_curve_point(self) -> None:
        """Success now on the curve split (the curve point) and on train."""
        step = self.model.num_timesteps
        self.progress.curve.append((step, self.run.curve_point(self.policy, step, self.config.curve_eval_episodes)))

    def checkpoint(self, finished: bool = False) -> None:
        """Model (with its optimizer), DQN's replay buffer and :class:`Progress`, each replaced
        atomically; a ``finished`` run's checkpoint drops the replay buffer instead."""
        run_dir = self.run.run_dir
        if self.baseline.flat_actions and not finished:
            tmp = run_dir / f"tmp_{REPLAY_BUFFER_FILE}"
            self.model.save_replay_buffer(tmp)
            os.replace(tmp, run_dir / REPLAY_BUFFER_FILE)
        tmp = run_dir / f"tmp_{self.run.checkpoint_path.name}"
        self.model.save(tmp)
        os.replace(tmp, self.run.checkpoint_path)
        write_json_atomic(run_dir / PROGRESS_FILE, asdict(self.progress))
        if finished:
            (run_dir / REPLAY_BUFFER_FILE).unlink(missing_ok=True)
        self.run.writer.flush()


def train(run: Run) -> Trained:
    """The registry's entry point of every SB3 baseline (``run.algo`` names which)."""
    return BaselineRun(run).train()


def load_policy(checkpoint: str | Path, device: str) -> SB3Policy:
    """The registry's loader: the model in ``checkpoint.zip``, its config from the run's ``run.json``."""
    info = run_info(checkpoint)
    baseline = BASELINES[info["algo"]]
    try:
        model = baseline.algorithm.load(checkpoint, device=device)
    except Exception as exc:
        raise CheckpointError(f"{checkpoint} is not a readable {baseline.name} model: {type(exc).__name__}: {exc}") from exc
    config = baseline.config(**info.get("overrides", {}))  # checked when the run started
    env_kwargs = info.get("env_kwargs", {})
    return SB3Policy(info["env_id"], model, baseline, config, {**env_kwargs, **env_options(info["env_id"], env_kwargs, config)})
