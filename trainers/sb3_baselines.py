"""Stable-Baselines3 / sb3-contrib baselines on the AgentGym environments.

=================  ==========================  ============================================
baseline           action space                policy input (default ``observation``)
=================  ==========================  ============================================
sb3-ppo            structured MultiDiscrete    token ids + :class:`TokenFeaturesExtractor`
sb3-a2c            structured MultiDiscrete    token ids + :class:`TokenFeaturesExtractor`
sb3-maskable-ppo   structured MultiDiscrete,   token ids + :class:`TokenFeaturesExtractor`
                   masked by ``action_masks()``
sb3-dqn            ``FlatDiscreteAction``      token ids + :class:`TokenFeaturesExtractor`
=================  ==========================  ============================================

``observation="bag"`` switches any of them to ``BagOfTokensObservation`` + SB3's ``MlpPolicy``.
Hyper-parameters live in one dataclass per baseline (:class:`PPOConfig`, ...), set through
``RunSpec.overrides``. Every run: TensorBoard scalars under the project's stable tags, a
periodic test-split evaluation (``eval/test_success``, the learning curve), atomic
checkpoints (``checkpoint.zip``, DQN's ``replay_buffer.pkl``, ``progress.json``) that
``RunSpec(resume=True)`` continues from, and the shared final evaluation of
:mod:`trainers.protocol`. A resumed run continues from the checkpoint's weights, optimizer,
step count and replay buffer; the environments restart their episodes, so it is not
bit-identical to an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields, replace
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
from stable_baselines3.common.vec_env import VecEnv
from torch import nn
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from agentgym_envs.policies import evaluate
from agentgym_envs.tables import DEFAULT_COLUMNS, criteria_report, format_table
from agentgym_envs.wrappers import PAD_ID, BagOfTokensObservation, FlatDiscreteAction, TokenIdsObservation

from .protocol import EPISODE_METRICS, EVAL_SEED, TARGET_SUCCESS, TRAINING_REWARD, evaluate_splits, first_step_at_target, save_result, write_json_atomic
from .registry import RunSpec, TrainResult

CHECKPOINT_FILE = "checkpoint.zip"
REPLAY_BUFFER_FILE = "replay_buffer.pkl"
PROGRESS_FILE = "progress.json"


# --------------------------------------------------------------------------- configs
@dataclass
class SB3Config:
    """What every SB3 baseline shares: observation, features extractor, logging cadence.

    ``observation``: ``"tokens"`` (``TokenIdsObservation`` + :class:`TokenFeaturesExtractor`)
    or ``"bag"`` (``BagOfTokensObservation`` + ``MlpPolicy``). Subclasses add the
    algorithm's own constructor arguments (every field not declared here).
    """

    observation: str = "tokens"
    n_envs: int = 8
    context_len: int = 256
    entity_len: int = 12
    bag_dim: int = 1024
    hash_buckets: int = 4_096
    embed_dim: int = 32
    recent_tokens: int = 32
    features_dim: int = 128
    net_arch: tuple[int, ...] = (64,)
    eval_every: int = 5_000
    curve_eval_episodes: int = 50
    log_every: int = 1_000
    checkpoint_every: int = 20_000
    torch_threads: int = 1
    progress: bool = True
    # the training envs' reward_config, as our trainers' (None: the env's default); evaluation
    # always uses the env's default reward
    training_reward: dict[str, Any] | None = field(default_factory=lambda: dict(TRAINING_REWARD))

    def algo_kwargs(self) -> dict[str, Any]:
        """The SB3 constructor arguments: the fields a subclass adds."""
        shared = {f.name for f in fields(SB3Config)}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in shared}


@dataclass
class PPOConfig(SB3Config):
    learning_rate: float = 3e-4
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
def make_env(env_id: str, config: SB3Config, split: str, flat_actions: bool, training: bool = False) -> gym.Env:
    """The env a baseline trains (``training``: with ``config.training_reward``) or is evaluated
    on: the base env in structured mode, ``FlatDiscreteAction`` for DQN, then the observation
    wrapper ``config.observation`` names."""
    reward = {"reward_config": dict(config.training_reward)} if training and config.training_reward else {}
    env: gym.Env = gym.make(env_id, split=split, **reward)
    if flat_actions:
        env = FlatDiscreteAction(env)
    if config.observation == "tokens":
        return TokenIdsObservation(env, config.context_len, config.entity_len)
    if config.observation == "bag":
        return BagOfTokensObservation(env, config.bag_dim)
    raise ValueError(f"observation must be 'tokens' or 'bag', got {config.observation!r}")


def policy_kwargs(config: SB3Config) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"net_arch": list(config.net_arch)}
    if config.observation == "tokens":
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


class SB3Agent:
    """An agent callable ``(observation, info) -> action``: the model's deterministic
    ``predict`` on an env built by :func:`make_env` (masks read from that env if needed)."""

    def __init__(self, model: BaseAlgorithm, env: gym.Env, masked: bool) -> None:
        self.model, self.env, self.masked = model, env, masked

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        extra = {"action_masks": self.env.get_wrapper_attr("action_masks")()} if self.masked else {}
        action, _ = self.model.predict(observation, deterministic=True, **extra)
        return action


# ------------------------------------------------------------------ run progress
@dataclass
class Progress:
    """What a checkpoint remembers besides the model: the learning curve and the time spent
    training (evaluation and checkpointing excluded), so SPS survives a resume."""

    curve: list[tuple[int, float]] = field(default_factory=list)
    train_time_s: float = 0.0
    wall_time_s: float = 0.0

    @classmethod
    def load(cls, path: Path, up_to_step: int) -> "Progress":
        data = json.loads(path.read_text(encoding="utf-8"))
        curve = [(int(s), float(v)) for s, v in data["curve"] if s <= up_to_step]
        return cls(curve, data["train_time_s"], data["wall_time_s"])


class BaselineCallback(BaseCallback):
    """Logs the stable TensorBoard tags, evaluates on the test split every
    ``config.eval_every`` steps, checkpoints every ``config.checkpoint_every``, shows a
    progress bar."""

    def __init__(self, trainer: "BaselineRun") -> None:
        super().__init__()
        self.trainer = trainer
        self.config = trainer.config
        self.writer = trainer.writer
        self._returns: list[float] = []
        self._metrics: dict[str, list[float]] = {key: [] for key in EPISODE_METRICS}

    def _on_training_start(self) -> None:
        step = self.num_timesteps
        interval = lambda every: (step // every + 1) * every  # noqa: E731
        self._next_log, self._next_eval, self._next_ckpt = interval(self.config.log_every), interval(self.config.eval_every), interval(self.config.checkpoint_every)
        self._started = time.perf_counter()
        self._start_step = step
        self._overhead = 0.0
        self._bar = tqdm(total=self.trainer.spec.total_steps, initial=step, desc=self.trainer.baseline.name, unit="step", disable=not self.config.progress)

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                self._returns.append(float(info["episode"]["r"]))
            if "metrics" in info:
                for key in EPISODE_METRICS:
                    self._metrics[key].append(float(info["metrics"][key]))
        step = self.num_timesteps
        self._bar.update(step - self._bar.n)
        if step >= self._next_log:
            self._log(step)
            self._next_log += self.config.log_every
        if step >= self._next_eval:
            self._timed(self.trainer.evaluate_curve_point)
            self._next_eval += self.config.eval_every
        if step >= self._next_ckpt:
            self._timed(self.trainer.checkpoint)
            self._next_ckpt += self.config.checkpoint_every
        return True

    def _on_training_end(self) -> None:
        self._bar.close()

    def train_time_s(self) -> float:
        """Seconds spent training in this process, evaluation and checkpoints excluded."""
        return time.perf_counter() - self._started - self._overhead

    def _timed(self, job) -> None:
        started = time.perf_counter()
        self.trainer.progress.train_time_s = self.trainer.train_time_before + self.train_time_s()
        job()
        self._overhead += time.perf_counter() - started

    def _log(self, step: int) -> None:
        if self._returns:
            self.writer.add_scalar("charts/episodic_return", float(np.mean(self._returns)), step)
        for key, values in self._metrics.items():
            if values:
                self.writer.add_scalar(f"metrics/{key}", float(np.mean(values)), step)
                values.clear()
        self._returns.clear()
        elapsed = self.train_time_s()
        if elapsed > 0:
            self.writer.add_scalar("charts/SPS", (step - self._start_step) / elapsed, step)


class BaselineRun:
    """One training run of a baseline, from spec to :class:`TrainResult`."""

    def __init__(self, baseline: Baseline, spec: RunSpec) -> None:
        self.baseline, self.spec = baseline, spec
        self.config = build_config(baseline, spec.overrides)
        self.run_dir = Path(spec.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.writer = SummaryWriter(str(self.run_dir))
        self.progress = Progress()
        self.train_time_before = 0.0
        self.curve_env = make_env(spec.env_id, self.config, "test", baseline.flat_actions)

    def make_model(self, venv: VecEnv) -> BaseAlgorithm:
        checkpoint = self.run_dir / CHECKPOINT_FILE
        algorithm = self.baseline.algorithm
        if self.spec.resume and checkpoint.exists():
            model = algorithm.load(checkpoint, env=venv, device=self.spec.device)
            if self.baseline.flat_actions and (self.run_dir / REPLAY_BUFFER_FILE).exists():
                model.load_replay_buffer(self.run_dir / REPLAY_BUFFER_FILE)
            progress_file = self.run_dir / PROGRESS_FILE
            if progress_file.exists():
                self.progress = Progress.load(progress_file, model.num_timesteps)
            self.train_time_before = self.progress.train_time_s
            print(f"resuming {self.baseline.name} from {checkpoint} at step {model.num_timesteps}")
            return model
        if self.spec.resume:
            print(f"no checkpoint in {self.run_dir}: starting {self.baseline.name} from scratch")
        policy = "MlpPolicy"
        return algorithm(policy, venv, seed=self.spec.seed, device=self.spec.device, policy_kwargs=policy_kwargs(self.config), verbose=0, **self.config.algo_kwargs())

    def train(self) -> TrainResult:
        started = time.perf_counter()
        torch.set_num_threads(self.config.torch_threads)
        venv = make_vec_env(
            lambda: make_env(self.spec.env_id, self.config, "train", self.baseline.flat_actions, training=True),
            n_envs=self.config.n_envs,
            seed=self.spec.seed,
        )
        self.model = self.make_model(venv)
        self.model.set_logger(configure(str(self.run_dir), ["tensorboard"]))  # SB3's own train/* scalars
        config_text = f"{self.baseline.name} on {self.spec.env_id}, seed {self.spec.seed}\n{self.config}"
        print(config_text)
        self.writer.add_text("config", config_text.replace("\n", "  \n"), self.model.num_timesteps)
        wall_before = self.progress.wall_time_s
        remaining = self.spec.total_steps - self.model.num_timesteps
        callback = BaselineCallback(self)
        if remaining > 0:
            self.model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=False)
            self.progress.train_time_s = self.train_time_before + callback.train_time_s()
        self.progress.wall_time_s = wall_before + time.perf_counter() - started
        self.checkpoint()
        venv.close()
        return self.finish(started, wall_before)

    def evaluate_curve_point(self) -> None:
        """Test-split success now, as a curve point and ``eval/test_success``."""
        agent = SB3Agent(self.model, self.curve_env, self.baseline.masked)
        metrics = evaluate(self.curve_env, agent, episodes=self.config.curve_eval_episodes, seed=EVAL_SEED)
        step = self.model.num_timesteps
        self.progress.curve.append((step, metrics["success"]))
        self.writer.add_scalar("eval/test_success", metrics["success"], step)
        self.writer.add_scalar("eval/test_tool_reliability", metrics["tool_reliability"], step)

    def checkpoint(self) -> None:
        """Model (with its optimizer), DQN's replay buffer and :class:`Progress`, each replaced atomically."""
        if self.baseline.flat_actions:
            tmp = self.run_dir / f"tmp_{REPLAY_BUFFER_FILE}"
            self.model.save_replay_buffer(tmp)
            os.replace(tmp, self.run_dir / REPLAY_BUFFER_FILE)
        tmp = self.run_dir / f"tmp_{CHECKPOINT_FILE}"
        self.model.save(tmp)
        os.replace(tmp, self.run_dir / CHECKPOINT_FILE)
        write_json_atomic(self.run_dir / PROGRESS_FILE, asdict(self.progress))
        self.writer.flush()

    def finish(self, started: float, wall_before: float) -> TrainResult:
        """The shared final evaluation, the metrics table, ``result.json``."""
        make = lambda split: make_env(self.spec.env_id, self.config, split, self.baseline.flat_actions)  # noqa: E731
        metrics = evaluate_splits(make, lambda env: SB3Agent(self.model, env, self.baseline.masked), self.spec.eval_episodes)
        steps = int(self.model.num_timesteps)
        curve = [point for point in self.progress.curve if point[0] < steps] + [(steps, metrics["test"]["success"])]
        self.writer.add_scalar("eval/test_success", metrics["test"]["success"], steps)
        self.writer.close()
        self.curve_env.close()
        trained = self.progress.train_time_s
        result = TrainResult(
            algo=self.baseline.name,
            env_id=self.spec.env_id,
            seed=self.spec.seed,
            total_steps=steps,
            wall_time_s=wall_before + time.perf_counter() - started,
            sps=steps / trained if trained > 0 else float("nan"),
            train_metrics=metrics["train"],
            test_metrics=metrics["test"],
            curve=curve,
            steps_to_target=first_step_at_target(curve, TARGET_SUCCESS),
            run_dir=str(self.run_dir),
        )
        save_result(result)
        print(format_table([{"split": s, **metrics[s]} for s in ("train", "test")], ["split", *DEFAULT_COLUMNS]))
        criteria = {"success": TARGET_SUCCESS, **self.curve_env.unwrapped.scenario.success_criteria}
        print(f"success criteria (test split):\n{criteria_report(metrics['test'], criteria)}")
        return result


def build_config(baseline: Baseline, overrides: dict[str, Any]) -> SB3Config:
    """The baseline's default config with ``overrides`` applied (unknown names: ValueError)."""
    config = baseline.config()
    names = {f.name for f in fields(config)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown {baseline.name} config field(s) {unknown}; fields: {sorted(names)}")
    return replace(config, **overrides)


def train_baseline(name: str, spec: RunSpec) -> TrainResult:
    """Train baseline ``name`` (a key of :data:`BASELINES`) as ``spec`` says."""
    return BaselineRun(BASELINES[name], spec).train()


def run_ppo(spec: RunSpec) -> TrainResult:
    """SB3 PPO, structured MultiDiscrete actions, token-id features."""
    return train_baseline("sb3-ppo", spec)


def run_a2c(spec: RunSpec) -> TrainResult:
    """SB3 A2C, structured MultiDiscrete actions, token-id features."""
    return train_baseline("sb3-a2c", spec)


def run_dqn(spec: RunSpec) -> TrainResult:
    """SB3 DQN over ``FlatDiscreteAction`` (unmasked), token-id features."""
    return train_baseline("sb3-dqn", spec)


def run_maskable_ppo(spec: RunSpec) -> TrainResult:
    """sb3-contrib MaskablePPO, structured actions masked by ``action_masks()``, token-id features."""
    return train_baseline("sb3-maskable-ppo", spec)
