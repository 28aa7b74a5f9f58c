"""Pieces every torch trainer shares: devices, seeding, environments, TensorBoard, checkpoints,
evaluation and the final report."""

from __future__ import annotations

import argparse
import functools
import io
import os
import pickle
import random
import shutil
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, Callable, NamedTuple

import gymnasium as gym
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from agentgym_envs import ENVIRONMENTS, resolve_env_id, success_criteria
from agentgym_envs.core import ToolUseEnv
from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.wrappers import ActiveAgentEnv, AgentIdTokens
from agentgym_envs.policies import evaluate
from agentgym_envs.tables import DEFAULT_COLUMNS, criteria_report, format_table
from agentgym_envs.wrappers import TokenIdsObservation

from .policy import MLPPolicy, Masks, TokenPolicy, TokenPolicyConfig, build_policy, masks_from_info
from .protocol import EPISODE_METRICS
from .registry import RunSpec, TrainResult

TRAINER_INFO_KEYS = ("action_mask", "argument_mask", "metrics", "task_tokens")
CHECKPOINT_NAME = "checkpoint.pt"
# PettingZoo team envs trained with one shared network: name -> Parallel env factory. Trainers
# see the team as one gymnasium env (ActiveAgentEnv: each step is the ticket holder's call) with
# the acting agent's id in observation column 0 (AgentIdTokens).
TEAM_ENVS = {"support_team_v0": support_team_v0.parallel_env}


class CheckpointError(ValueError):
    """A checkpoint file that is missing, truncated or not one of ours."""


# ------------------------------------------------------------------ basics
def resolve_device(device: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; anything else as given."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available (use --device cpu or auto)")
    return torch.device(device)


def seed_everything(seed: int, threads: int = 0) -> None:
    """Seed python, numpy and torch; ``threads`` > 0 also fixes torch's CPU thread count."""
    if threads > 0:
        torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def config_from_overrides(config_class: type, **values: Any) -> Any:
    """``config_class(**values)`` with a clear error naming unknown fields."""
    known = {f.name for f in fields(config_class)}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"unknown {config_class.__name__} field(s) {sorted(unknown)}; fields: {sorted(known)}")
    return config_class(**values)


def config_text(config: Any) -> str:
    """A markdown table of a config dataclass (printed, and logged to TensorBoard as text)."""
    return "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in asdict(config).items())


# ------------------------------------------------------------ environments
def is_tool_env(env_id: str) -> bool:
    """A tool-use env (token-id observations, masks, episode metrics): a registered agentgym
    env or a team env of :data:`TEAM_ENVS`."""
    return any(entry.env_id == env_id for entry in ENVIRONMENTS) or env_id in TEAM_ENVS


def canonical_env_id(env: str) -> str:
    """An agentgym name (``customer_support``), a team env (``support_team`` or
    ``support_team_v0``) or any registered gymnasium id (``CartPole-v1``)."""
    try:
        return resolve_env_id(env)
    except ValueError:
        team = next((name for name in TEAM_ENVS if env in (name, name.removesuffix("_v0"))), None)
        if team is not None:
            return team
        if env in gym.registry:
            return env
        raise ValueError(f"{env!r} is neither an agentgym env, a team env ({', '.join(TEAM_ENVS)}) "
                         "nor a registered gymnasium id") from None


class TrainerInfo(gym.Wrapper):
    """Keep only the ``info`` keys trainers read (masks, episode metrics): vector envs then
    stack small arrays instead of whole conversations."""

    def reset(self, **kwargs: Any):
        observation, info = self.env.reset(**kwargs)
        return observation, {k: info[k] for k in TRAINER_INFO_KEYS if k in info}

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {k: info[k] for k in TRAINER_INFO_KEYS if k in info}


def make_env(env_id: str, split: str = "train", context_len: int = 256, entity_len: int = 12,
             env_kwargs: dict[str, Any] | None = None) -> gym.Env:
    """One environment as trainers see it: tool-use envs as token ids with their masks; a team
    env as :class:`ActiveAgentEnv` with ``[agent_id, *token ids]`` observations."""
    if env_id in TEAM_ENVS:
        team = TEAM_ENVS[env_id](split=split, **(env_kwargs or {}))
        return TrainerInfo(AgentIdTokens(ActiveAgentEnv(team, context_len=context_len, entity_len=entity_len)))
    if not is_tool_env(env_id):
        return gym.make(env_id, **(env_kwargs or {}))
    env = gym.make(env_id, split=split, **(env_kwargs or {}))
    return TrainerInfo(TokenIdsObservation(env, context_len=context_len, entity_len=entity_len))


def make_vec_env(env_id: str, num_envs: int, **make_kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` copies in a ``SyncVectorEnv`` (same-step autoreset: the returned observation
    and masks are always the next decision's), with episode statistics. Built from module-level
    factories so that the whole vector env pickles into checkpoints (exact ``--resume``)."""
    factory = functools.partial(make_env, env_id, **make_kwargs)
    envs = gym.vector.SyncVectorEnv([factory] * num_envs, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    return gym.wrappers.vector.RecordEpisodeStatistics(envs)


def new_policy(env: gym.Env, context_len: int, entity_len: int, token_config: TokenPolicyConfig) -> torch.nn.Module:
    """For one env as :func:`make_env` builds it: the token policy for tool-use envs (with an
    agent-id input for a team env: one network shared by the agents), the MLP policy for
    Box/Discrete control envs."""
    base = env.unwrapped
    if isinstance(base, (ToolUseEnv, ActiveAgentEnv)):
        scenario = base.base.scenario if isinstance(base, ActiveAgentEnv) else base.scenario
        n_agents = len(base.agents) if isinstance(base, ActiveAgentEnv) else 0
        arities = [len(tool.args) for tool in scenario.tools]
        return TokenPolicy(context_len, entity_len, scenario.max_entities, arities, token_config, n_agents)
    single_obs, single_act = env.observation_space, env.action_space
    if not (isinstance(single_obs, gym.spaces.Box) and isinstance(single_act, gym.spaces.Discrete)):
        raise ValueError(f"{env.spec.id if env.spec else env}: the MLP policy needs a Box observation and a Discrete action space, "
                         f"got {single_obs} and {single_act}")
    return MLPPolicy(int(np.prod(single_obs.shape)), int(single_act.n))


def batch_masks(info: dict[str, Any], device: torch.device) -> Masks | None:
    return masks_from_info(info, device) if "action_mask" in info else None


class RunStart(NamedTuple):
    """What every torch trainer has before its loop: the config (the checkpoint's, when resuming),
    the run directory, the checkpoint path, the checkpoint's state (None for a fresh run) and the device."""

    config: Any
    run_dir: Path
    checkpoint_path: Path
    state: dict[str, Any] | None
    device: torch.device


def start_run(config: Any, resume: bool, name: str) -> RunStart:
    """Prepare ``config.run_dir``, load its checkpoint when ``resume`` (the checkpoint's config
    then replaces ``config``), pick the device, seed everything and print the config."""
    run_dir = prepare_run_dir(config.run_dir, resume)
    checkpoint_path = run_dir / CHECKPOINT_NAME
    state = load_checkpoint(checkpoint_path) if resume and checkpoint_path.exists() else None
    if state is not None:
        config = type(config)(**state["config"])
    device = resolve_device(config.device)
    seed_everything(config.seed, config.threads)
    print(f"{name} on {config.env_id}, device {device}\n{config_text(config)}")
    return RunStart(config, run_dir, checkpoint_path, state, device)


def require_single_agent_tool_env(env_id: str, why: str) -> None:
    """A clear error unless ``env_id`` is a single-agent agentgym tool-use env (``why``: what
    the trainer needs, for the message)."""
    if not is_tool_env(env_id) or env_id in TEAM_ENVS:
        raise ValueError(f"{why}; got {env_id}")


def command_line(run: Callable[[RunSpec], TrainResult], description: str, default_total_steps: int) -> None:
    """``python -m trainers.<algo>``: ``--env --seed --total-steps --device --resume``, then ``run``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="customer_support")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--total-steps", type=int, default=default_total_steps)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    run(RunSpec(args.env, args.seed, args.total_steps, args.device, resume=args.resume))


# ----------------------------------------------------------------- logging
def prepare_run_dir(run_dir: str | Path, resume: bool) -> Path:
    """The run's directory; a fresh (non-resumed) run starts from an empty one."""
    path = Path(run_dir)
    if path.exists() and not resume:
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_writer(run_dir: Path, config: Any, global_step: int = 0) -> SummaryWriter:
    """A TensorBoard writer for ``run_dir``; a resumed run purges events logged after its
    checkpoint's ``global_step`` so that the curves continue without overlap."""
    writer = SummaryWriter(str(run_dir), purge_step=global_step or None)
    if not global_step:
        writer.add_text("hyperparameters", config_text(config))
    return writer


class EpisodeStats:
    """Logs every finished episode of a vector env: ``charts/episodic_return`` and
    ``metrics/<name>`` for the tool-use metrics."""

    def __init__(self, writer: SummaryWriter) -> None:
        self.writer = writer
        self.recent: dict[str, list[float]] = {}

    def log(self, info: dict[str, Any], global_step: int) -> None:
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                self.add("charts/episodic_return", float(info["episode"]["r"][i]), global_step)
                self.writer.add_scalar("charts/episodic_length", float(info["episode"]["l"][i]), global_step)
        final = info.get("final_info", {})
        if "metrics" in final:
            for i in np.flatnonzero(final["_metrics"]):
                for name in EPISODE_METRICS:
                    self.add(f"metrics/{name}", float(final["metrics"][name][i]), global_step)

    def add(self, tag: str, value: float, step: int) -> None:
        self.writer.add_scalar(tag, value, step)
        self.recent.setdefault(tag, []).append(value)
        del self.recent[tag][:-100]

    def mean(self, tag: str) -> float:
        values = self.recent.get(tag)
        return float(np.mean(values)) if values else float("nan")


# -------------------------------------------------------------- checkpoints
def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` with ``torch.save`` atomically: a temporary file in the same
    directory, flushed to disk, then renamed over ``path`` (a crash leaves the old one)."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint`; :class:`CheckpointError` if the
    file is missing, corrupt, or not an agentgym checkpoint."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): {type(exc).__name__}: {exc}") from exc
    if not isinstance(payload, dict) or "policy_spec" not in payload or "policy" not in payload:
        raise CheckpointError(f"{path} is not an agentgym trainer checkpoint (no policy_spec/policy entries)")
    return payload


def pickle_envs(envs: gym.vector.VectorEnv) -> bytes:
    """The vector env's whole state (episodes in progress, RNGs), for an exact resume."""
    buffer = io.BytesIO()
    pickle.dump(envs, buffer)
    return buffer.getvalue()


def unpickle_envs(data: bytes) -> gym.vector.VectorEnv:
    return pickle.loads(data)


def policy_from_checkpoint(payload: dict[str, Any], device: torch.device) -> torch.nn.Module:
    policy = build_policy(payload["policy_spec"])
    policy.load_state_dict(payload["policy"])
    return policy.to(device).eval()


def frozen_copy(policy: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """A copy of ``policy``'s current weights in eval mode: the reference of a KL penalty."""
    return policy_from_checkpoint({"policy_spec": policy.spec, "policy": policy.state_dict()}, device)


def kl_to_reference(reference: torch.nn.Module, obs: torch.Tensor, masks: Masks | None, actions: torch.Tensor,
                    logprob: torch.Tensor) -> torch.Tensor:
    """The k3 estimate of KL(policy || reference), ``mean(r - log r - 1)`` with ``r = pi_ref / pi``,
    on the sampled ``actions`` whose log-probability under the trained policy is ``logprob``
    (non-negative, unbiased; Schulman's "Approximating KL divergence")."""
    with torch.no_grad():
        _, ref_logprob, _, _ = reference.get_action_and_value(obs, masks, actions)
    log_ratio = ref_logprob - logprob
    return (log_ratio.exp() - log_ratio - 1).mean()


# --------------------------------------------------------------- evaluation
class GreedyAgent:
    """A trained policy as an agent callable ``(observation, info) -> action`` (argmax actions)."""

    def __init__(self, policy: torch.nn.Module, device: torch.device) -> None:
        self.policy, self.device = policy, device

    @torch.no_grad()
    def __call__(self, observation: Any, info: dict[str, Any]) -> np.ndarray:
        obs = torch.as_tensor(np.asarray(observation)[None], device=self.device)
        masks = batch_masks(info, self.device)
        action, *_ = self.policy.get_action_and_value(obs, masks, deterministic=True)
        return action[0].cpu().numpy()


def evaluate_policy(policy: torch.nn.Module, env_id: str, split: str, episodes: int, device: torch.device,
                    seed: int = 0, env_kwargs: dict[str, Any] | None = None) -> dict[str, float]:
    """Mean metrics of the greedy policy over ``episodes`` seeded episodes of ``split``.

    Tool-use envs go through :func:`agentgym_envs.policies.evaluate` (all episode metrics);
    control envs report the mean ``return``."""
    was_training = policy.training
    policy.eval()
    spec = getattr(policy, "spec", {})
    try:
        if is_tool_env(env_id):
            env = make_env(env_id, split, spec["context_len"], spec["entity_len"], env_kwargs)
            return evaluate(env, GreedyAgent(policy, device), episodes=episodes, split=split, seed=seed)
        env = make_env(env_id, env_kwargs=env_kwargs)
        agent = GreedyAgent(policy, device)
        returns = []
        for episode in range(episodes):
            observation, info = env.reset(seed=seed + episode)
            total, done = 0.0, False
            while not done:
                observation, reward, terminated, truncated, info = env.step(int(agent(observation, info)))
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
        return {"return": float(np.mean(returns)), "episodes": float(episodes)}
    finally:
        policy.train(was_training)


def final_report(env_id: str, algo: str, train_metrics: dict[str, float], test_metrics: dict[str, float]) -> str:
    """The metrics table on both splits and whether the scenario's success criteria were met."""
    rows = [{"split": "train", **train_metrics}, {"split": "test", **test_metrics}]
    columns = ["split", *(c for c in (*DEFAULT_COLUMNS, "handoffs") if c in test_metrics)]  # handoffs: team envs
    text = f"\n{env_id}, {algo}, greedy policy, {int(test_metrics.get('episodes', 0))} episodes per split\n"
    text += format_table(rows, columns)
    criteria = success_criteria(env_id)
    if criteria:
        text += f"\n\nsuccess criteria (test split):\n{criteria_report(test_metrics, criteria)}"
    return text


def default_run_dir(run_root: str, env_id: str, algo: str, seed: int) -> Path:
    """``<run_root>/<env name>__<algo>__seed<seed>``: stable, so ``--resume`` finds it."""
    name = env_id.split("/")[-1]
    return Path(run_root) / f"{name}__{algo}__seed{seed}"

