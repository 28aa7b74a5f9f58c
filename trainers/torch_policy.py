"""What the torch trainers (PPO, GRPO, BC) share: envs as the networks read them, the network
chosen by observation and action space, batched masks, episode logging, the clipped surrogate,
and the trained policy as a :class:`~trainers.run.TrainedPolicy` (``load_policy``).

Networks by space (never by env identity):

- a ``Text`` observation with a ``MultiDiscrete`` tool-call action (a tool-use env) is read
  through :class:`~agentgym_envs.wrappers.TokenIdsObservation`, and a ``Box`` of token ids
  that declares its layout (``context_len``, ``entity_len``, ``max_entities``: a team adapter)
  as it is: both train the token policy, sized by the env's ``tool_arities`` and, for a team,
  ``n_agents``;
- a ``Box`` observation with a ``Discrete`` or ``MultiDiscrete`` action (``CartPole-v1``, a
  tool-use env read as a bag of tokens: ``observation="bag"``, or made with its features
  observation and acting through ``FlatDiscreteAction``: ``observation="features"``, whose joint
  mask the MLP reads) trains CleanRL's MLP.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction, TokenIdsObservation

from . import checkpoints
from .policy import Masks, MLPPolicy, TokenPolicy, TokenPolicyConfig, TokenPolicyFields, build_policy, masks_from_info
from .run import EPISODE_METRICS, TRAINING_RETURN_TAG, Run, features_kwargs, make_env

MASK_KEYS = ("action_mask", "argument_mask")
# observation="features": the flat admissible actions (FlatDiscreteAction's layout; its capacity the config's
# action_capacity, by default the scenario's), repeated calls masked
FEATURES_ACTIONS = {"layout": "admissible"}
FEATURES_MASK_REPEATS = True
TRAINER_INFO_KEYS = (*MASK_KEYS, "metrics", "task_id", "task_tokens")
# an evaluation's env keeps the task's unit too: the results file records it, and the benchmark resamples it
EVALUATION_INFO_KEYS = (*TRAINER_INFO_KEYS, "unit_id")


class TrainerInfo(gym.Wrapper):
    """Keep only the ``info`` keys trainers read (``keys``: by default masks, episode metrics, the
    task id and the task-prompt length): vector envs then stack small arrays instead of whole
    conversations."""

    keys: tuple[str, ...] = TRAINER_INFO_KEYS  # also what a TrainerInfo pickled without its own keys keeps

    def __init__(self, env: gym.Env, keys: tuple[str, ...] = TRAINER_INFO_KEYS) -> None:
        super().__init__(env)
        self.keys = keys

    def reset(self, **kwargs: Any):
        observation, info = self.env.reset(**kwargs)
        return observation, {k: info[k] for k in self.keys if k in info}

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {k: info[k] for k in self.keys if k in info}


def is_tool_call_env(env: gym.Env) -> bool:
    """A ``MultiDiscrete`` tool-call action over a ``Text`` observation or a token-id ``Box``."""
    return isinstance(env.action_space, gym.spaces.MultiDiscrete) and (
        isinstance(env.observation_space, gym.spaces.Text) or has_attr(env, "context_len"))


def has_attr(env: gym.Env, name: str) -> bool:
    try:
        env.get_wrapper_attr(name)
    except AttributeError:
        return False
    return True


def policy_env(env: gym.Env, observation: str, context_len: int, entity_len: int, *, flat_actions: bool = False,
               action_layout: str = FEATURES_ACTIONS["layout"], action_capacity: int | None = None,
               bag_dim: int = 1024) -> gym.Env:
    """``env`` as a policy reads it, for every trainer (ours and the SB3 baselines): a tool-use
    env acts through :class:`FlatDiscreteAction` (``action_layout``, ``action_capacity`` calls a
    tool, the scenario's by default) for the features observation and where ``flat_actions``
    asks (DQN); a ``Text`` observation becomes token ids (``observation="tokens"``, the
    ``context_len`` / ``entity_len`` layout) or hashed token counts (``"bag"``, ``bag_dim``
    buckets); a vector observation stays as it is. The features observation is the env's own:
    make the env with :func:`~trainers.run.features_kwargs`."""
    if hasattr(env.unwrapped, "call_masks") and (flat_actions or observation == "features"):
        env = FlatDiscreteAction(env, action_layout, action_capacity)
    if not isinstance(env.observation_space, gym.spaces.Text):
        return env
    if observation == "tokens":
        return TokenIdsObservation(env, context_len=context_len, entity_len=entity_len)
    if observation == "bag":
        return BagOfTokensObservation(env, bag_dim)
    if observation == "features":
        raise ValueError("observation='features' needs the env made with its features observation: pass "
                         "features_kwargs(env_id, env_kwargs, mask_repeats) to gym.make (a run's env_factory(extra_kwargs=...))")
    raise ValueError(f"observation must be 'features', 'tokens' or 'bag', got {observation!r}")


def network_env(make_base: Callable[[], gym.Env], context_len: int, entity_len: int, observation: str = "tokens",
                info_keys: tuple[str, ...] = TRAINER_INFO_KEYS, action_capacity: int | None = None) -> gym.Env:
    """The env ``make_base`` builds, as the networks read it (:func:`policy_env`), with
    trainer-sized ``info`` (the ``info_keys`` present; the MLP on hashed token counts reads no
    masks: its ``info`` leaves them out, so that vector envs need not stack them every step)."""
    if action_capacity is not None and observation != "features":
        raise ValueError(f"action_capacity sizes the features' flat actions; observation is {observation!r}")
    env = policy_env(make_base(), observation, context_len, entity_len, action_capacity=action_capacity)
    keys = tuple(k for k in info_keys if k not in MASK_KEYS) if isinstance(env, BagOfTokensObservation) else info_keys
    return TrainerInfo(env, keys)


def env_factory(run: Run, split: str, training: bool, context_len: int, entity_len: int,
                observation: str = "tokens", info_keys: tuple[str, ...] = TRAINER_INFO_KEYS,
                action_capacity: int | None = None) -> Callable[[], gym.Env]:
    """A picklable factory of :func:`network_env` envs of the run's env (exact resume pickles them)."""
    extra = observation_kwargs(run.env_id, run.env_kwargs, observation)
    return functools.partial(network_env, run.env_factory(split, training, extra), context_len, entity_len, observation,
                             info_keys, action_capacity)


def observation_kwargs(env_id: str, env_kwargs: dict[str, Any], observation: str) -> dict[str, Any]:
    """The ``gym.make`` arguments an observation needs (``"features"``: the env's own features mode)."""
    return features_kwargs(env_id, env_kwargs, FEATURES_MASK_REPEATS) if observation == "features" else {}


def new_policy(env: gym.Env, token_config: TokenPolicyConfig) -> nn.Module:
    """The network for an env from :func:`network_env`, chosen by its spaces (see the module docstring)."""
    if is_tool_call_env(env):
        layout = {name: env.get_wrapper_attr(name) for name in ("context_len", "entity_len", "max_entities", "tool_arities")}
        n_agents = env.get_wrapper_attr("n_agents") if has_attr(env, "n_agents") else 0
        return TokenPolicy(layout["context_len"], layout["entity_len"], layout["max_entities"], layout["tool_arities"],
                           token_config, n_agents)
    obs_space, act_space = env.observation_space, env.action_space
    if isinstance(obs_space, gym.spaces.Box) and isinstance(act_space, gym.spaces.Discrete):
        return MLPPolicy(int(np.prod(obs_space.shape)), int(act_space.n))
    if isinstance(obs_space, gym.spaces.Box) and isinstance(act_space, gym.spaces.MultiDiscrete):
        return MLPPolicy(int(np.prod(obs_space.shape)), act_space.nvec.tolist())
    raise ValueError(f"no network for observation space {obs_space} and action space {act_space}: the torch trainers "
                     "take a tool-call env (Text observation, MultiDiscrete action, tool_arities) or Box -> (Multi)Discrete")


def initial_policy(run: Run, env: gym.Env, token_config: TokenPolicyConfig, device: str) -> nn.Module:
    """A fresh network for ``env``, or the warm start's (``run.init_checkpoint``: its size and weights)."""
    if run.init_checkpoint is None:
        return new_policy(env, token_config).to(device)
    return policy_from_checkpoint(checkpoints.load(run.init_checkpoint), device).train()


def batch_masks(info: dict[str, Any], device: torch.device | str) -> Masks | None:
    return masks_from_info(info, device) if "action_mask" in info else None


def policy_from_checkpoint(payload: dict[str, Any], device: torch.device | str) -> nn.Module:
    policy = build_policy(payload["policy_spec"])
    checkpoints.load_weights(policy, payload["policy"])
    return policy.to(device).eval()


def frozen_copy(policy: nn.Module, device: torch.device | str) -> nn.Module:
    """A copy of ``policy``'s current weights in eval mode: the reference of a KL penalty."""
    return policy_from_checkpoint({"policy_spec": policy.spec, "policy": policy.state_dict()}, device)


def kl_to_reference(reference: nn.Module, obs: torch.Tensor, masks: Masks | None, actions: torch.Tensor,
                    logprob: torch.Tensor) -> torch.Tensor:
    """The k3 estimate of KL(policy || reference), ``mean(r - log r - 1)`` with ``r = pi_ref / pi``,
    on the sampled ``actions`` whose log-probability under the trained policy is ``logprob``
    (non-negative, unbiased; Schulman's "Approximating KL divergence")."""
    with torch.no_grad():
        ref_logprob = reference.log_prob(obs, masks, actions)
    log_ratio = ref_logprob - logprob
    return (log_ratio.exp() - log_ratio - 1).mean()


def clipped_surrogate(ratio: torch.Tensor, advantages: torch.Tensor, clip_coef: float) -> torch.Tensor:
    """PPO's clipped policy loss ``mean(max(-A r, -A clip(r, 1 - eps, 1 + eps)))`` (to minimise)."""
    return torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()


def write_scalars(writer: Any, values: list[tuple[str, float]], step: int) -> None:
    """Log ``(tag, value)`` pairs of one step to a ``SummaryWriter`` as one TensorBoard event
    (``add_scalar`` writes an event per value, at several times the cost per value)."""
    from tensorboard.compat.proto.summary_pb2 import Summary

    if values:
        summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value)) for tag, value in values])
        writer._get_file_writer().add_summary(summary, step)


def metric_values(metrics: dict[str, Any]) -> list[tuple[str, float]]:
    """``(metrics/<name>, value)`` for the :data:`EPISODE_METRICS` in ``metrics``."""
    return [(f"metrics/{name}", float(metrics[name])) for name in EPISODE_METRICS if name in metrics]


class EpisodeStats:
    """Finished episodes' :data:`TRAINING_RETURN_TAG` (the training reward's return),
    ``charts/episodic_length`` and ``metrics/<name>`` (the tool-use metrics), gathered over an
    update and logged as their means over its episodes (:meth:`update_means`, in the update's
    TensorBoard event, as SB3 logs them: an event per finished episode took a tenth of PPO's
    time on CustomerSupport-v0, TensorBoard's checksum being pure Python). Keeps the last 100
    values of each for the progress bar."""

    def __init__(self) -> None:
        self.recent: dict[str, list[float]] = {}
        self.this_update: dict[str, list[float]] = {}

    def log_vector(self, info: dict[str, Any]) -> None:
        """The episodes a vector env's ``info`` reports finished."""
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                self.add([(TRAINING_RETURN_TAG, float(info["episode"]["r"][i])),
                          ("charts/episodic_length", float(info["episode"]["l"][i]))])
        final = info.get("final_info", {})
        if "metrics" in final:
            for i in np.flatnonzero(final["_metrics"]):
                self.add(metric_values({name: column[i] for name, column in final["metrics"].items()}))

    def log_episode(self, episode_return: float, metrics: dict[str, Any]) -> None:
        self.add([(TRAINING_RETURN_TAG, episode_return), *metric_values(metrics)])

    def add(self, values: list[tuple[str, float]]) -> None:
        for tag, value in values:
            self.this_update.setdefault(tag, []).append(value)
            recent = self.recent.setdefault(tag, [])
            recent.append(value)
            del recent[:-100]

    def update_means(self) -> list[tuple[str, float]]:
        """``(tag, mean)`` over the episodes finished since the last call (no pair for a tag
        that no episode reported)."""
        means = [(tag, float(np.mean(values))) for tag, values in self.this_update.items()]
        self.this_update.clear()
        return means

    def mean(self, tag: str) -> float:
        values = self.recent.get(tag)
        return float(np.mean(values)) if values else float("nan")

    def postfix(self, sps: float) -> dict[str, str]:
        """The progress bar's fields: steps/s, the mean training-reward return, the success rate."""
        return {"sps": f"{sps:.0f}", "train_reward_ret": f"{self.mean(TRAINING_RETURN_TAG):.1f}",
                "success": f"{self.mean('metrics/success'):.2f}"}


# --------------------------------------------------------------- the trained policy
class GreedyAgent:
    """A network as an agent callable ``(observation, info) -> action`` (argmax actions)."""

    def __init__(self, policy: nn.Module, device: torch.device | str) -> None:
        self.policy, self.device = policy, device

    @torch.no_grad()
    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        obs = torch.as_tensor(np.asarray(observation)[None], device=self.device)
        action = self.policy.greedy_action(obs, batch_masks(info, self.device))[0].cpu().numpy()
        return int(action) if action.ndim == 0 else action


@dataclass
class TorchPolicy:
    """A torch network trained on ``env_id`` as a :class:`~trainers.run.TrainedPolicy`."""

    env_id: str
    network: nn.Module
    device: torch.device | str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    observation: str = "tokens"  # how a Text observation is read (network_env)
    action_capacity: int | None = None  # the features' flat actions a tool (None: the scenario's)

    def make_env(self, split: str) -> gym.Env:
        spec = self.network.spec
        base = functools.partial(make_env, self.env_id, split, self.env_kwargs)
        return network_env(base, spec.get("context_len", 0), spec.get("entity_len", 0), self.observation,
                           EVALUATION_INFO_KEYS, self.action_capacity)

    def agent(self, env: gym.Env) -> GreedyAgent:
        return GreedyAgent(self.network, self.device)


def trained_policy(run: Run, network: nn.Module, fields: TokenPolicyFields | None = None) -> TorchPolicy:
    """The run's network as a policy that reads the env as ``fields`` (its config's) say: ``observation``
    and ``action_capacity`` (the token policy when None)."""
    observation, capacity = (fields.observation, fields.action_capacity) if fields else ("tokens", None)
    env_kwargs = {**run.env_kwargs, **observation_kwargs(run.env_id, run.env_kwargs, observation)}
    return TorchPolicy(run.env_id, network, run.device, env_kwargs, observation, capacity)


def load_policy(checkpoint: str | Path, device: str) -> TorchPolicy:
    """The registry's loader for checkpoints of the torch trainers."""
    payload = checkpoints.load(checkpoint)
    config, env_kwargs = payload["config"], payload.get("env_kwargs", {})
    observation = config.get("observation", "tokens")
    env_kwargs = {**env_kwargs, **observation_kwargs(payload["env_id"], env_kwargs, observation)}
    return TorchPolicy(payload["env_id"], policy_from_checkpoint(payload, device), device, env_kwargs, observation,
                       config.get("action_capacity"))
