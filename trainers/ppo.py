"""Proximal Policy Optimisation (clipped), CleanRL-style: one file, one loop, one config.

Tool-use environments train the token policy (``trainers/policy.py``) on token-id observations
with the env's action and argument masks; plain gymnasium control envs (``CartPole-v1``) train
CleanRL's MLP policy (:mod:`trainers.torch_policy` picks the network by space). Rollouts come
from a vector env; advantages from GAE. On tool-use envs the rollouts act on observations whose
task prompt is perturbed (:mod:`trainers.augment`), and the update scores the same perturbed
observations. ``total_steps`` is rounded up to whole rollouts of ``num_envs * num_steps``.

    agentgym train customer_support --algo ppo --total-steps 100000
"""

from __future__ import annotations

import math
import pickle
import time
from dataclasses import asdict, dataclass
from typing import Any

import cloudpickle
import numpy as np
import torch

from . import augment, checkpoints
from .flat_parameters import FlatParameters
from .policy import Masks, TokenPolicyFields
from .run import CheckpointError, Run, Trained, hyperparameter_table
from .torch_policy import (
    TRAINER_INFO_KEYS,
    EpisodeStats,
    batch_masks,
    clipped_surrogate,
    env_factory,
    frozen_copy,
    initial_policy,
    kl_to_reference,
    trained_policy,
    write_scalars,
)


@dataclass
class Config(augment.TaskTokenAugmentation, TokenPolicyFields):
    """Every hyper-parameter of a PPO run (defaults: CustomerSupport-v0 on a 2-core CPU); the
    token policy's fields come from :class:`TokenPolicyFields`, the augmentation's (applied to
    the observations the rollouts act on, where the env reports ``info["task_tokens"]``: other
    envs train on plain observations) from :class:`~trainers.augment.TaskTokenAugmentation`."""

    num_envs: int = 16
    num_steps: int = 32  # steps per env per rollout
    vectorization: str = "sync"  # "sync" | "async" | "ray": how the num_envs envs run (trainers.run.make_vector_env)
    learning_rate: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    reward_scale: float = 0.1  # rewards are multiplied by this for learning (logged returns are unscaled)
    eval_every_steps: int = 10_000  # greedy validation-split evaluation for the learning curve (0: only at the end)
    eval_curve_episodes: int = 50
    checkpoint_every: int = 10  # updates
    # the first N updates fit only the value head; the rest of the policy keeps its weights
    # (after BC: the policy acts as BC left it until its value estimates are no longer random)
    critic_warmup_updates: int = 0
    # > 0: penalise the k3 estimate of KL to the starting policy (the warm start's weights), as
    # RLHF's PPO does, so that fine-tuning keeps what BC learnt where the reward does not say otherwise
    kl_coef: float = 0.0
    threads: int = 1  # CPU threads for torch (0: torch's default); 1 suits a small shared machine

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches


# what the rollouts read of ``info`` (not the task id): the vector env stacks every key, every step
ROLLOUT_INFO_KEYS = tuple(key for key in TRAINER_INFO_KEYS if key != "task_id")


# ------------------------------------------------------------------ the objective
def gae(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, next_value: torch.Tensor,
        next_done: torch.Tensor, gamma: float, gae_lambda: float) -> torch.Tensor:
    """Generalised advantage estimates for a rollout of ``[T, N]`` rewards and values, where
    ``dones[t]`` says the observation at ``t`` began a new episode and ``next_value`` /
    ``next_done`` describe the observation after the last step:
    ``A_t = d_t + gamma * lambda * (1 - done_{t+1}) * A_{t+1}``,
    ``d_t = r_t + gamma * (1 - done_{t+1}) * V_{t+1} - V_t``."""
    nonterminal = 1.0 - torch.cat([dones[1:], next_done[None]])  # (1 - done_{t+1}) for every t at once
    deltas = rewards + gamma * torch.cat([values[1:], next_value[None]]) * nonterminal - values
    decays = gamma * gae_lambda * nonterminal
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(len(rewards))):
        advantages[t] = last = deltas[t] + decays[t] * last
    return advantages


def normalize_advantages(advantages: torch.Tensor) -> torch.Tensor:
    """Zero mean, unit (sample) standard deviation within the minibatch."""
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8)


def value_loss(new_values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, clip_coef: float,
               clip: bool) -> torch.Tensor:
    """``0.5 * mean((V - R)^2)``; with ``clip``, PPO's pessimistic form: the larger of that error
    and the error of ``V`` kept within ``clip_coef`` of the rollout's value estimate."""
    unclipped = (new_values - returns) ** 2
    if not clip:
        return 0.5 * unclipped.mean()
    clipped = old_values + torch.clamp(new_values - old_values, -clip_coef, clip_coef)
    return 0.5 * torch.max(unclipped, (clipped - returns) ** 2).mean()


# ------------------------------------------------------------------ the loop
def vector_env_state(envs: Any) -> bytes | None:
    """The pickled vector env (every episode in progress, every RNG), or None where it does not
    pickle (subprocess envs). cloudpickle, as gymnasium and SB3 pickle env factories: it takes
    closures and lambdas by value (tau2's tools are closures); plain ``pickle`` loads it."""
    try:
        return cloudpickle.dumps(envs)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None


def restored_vector_env(blob: bytes, run: Run) -> Any:
    """The vector env :func:`vector_env_state` pickled; a clear error when the code that pickled it
    differs from this one (a class it names is gone or moved)."""
    try:
        return pickle.loads(blob)
    except (AttributeError, ImportError, pickle.UnpicklingError, TypeError) as exc:
        raise CheckpointError(f"{run.checkpoint_path}: its envs were saved by other code of agentgym ({exc}); it cannot "
                              f"continue exactly: start the run afresh (without --resume, or delete {run.run_dir})") from exc


def train(run: Run) -> Trained:
    """Train for ``run.total_steps`` env steps; a resumed run continues exactly where its
    checkpoint left off (weights, optimizer, envs mid-episode, random state; where the vector
    env cannot be pickled, as with ``vectorization="async"``, the envs start new episodes)."""
    config: Config = run.config(Config)
    state = run.resume_state()
    device = run.device
    checkpoints.seed_everything(run.seed, config.threads)
    num_updates = max(1, math.ceil(run.total_steps / config.batch_size))
    print(f"PPO: {num_updates} updates of {config.num_envs} envs x {config.num_steps} steps "
          f"= {num_updates * config.batch_size} env steps")

    factory = env_factory(run, "train", True, config.context_len, config.entity_len, config.observation, ROLLOUT_INFO_KEYS,
                          config.action_capacity)
    envs = run.make_vector_env([factory] * config.num_envs, config.vectorization)
    probe = factory()
    policy = initial_policy(run, probe, config.token_config(), device)
    probe.close()
    reference = frozen_copy(policy, device) if config.kl_coef > 0 else None
    # the weights as views of two flat tensors (the value head; the rest, frozen during the critic's warm-up), so that
    # Adam (foreach: the per-tensor arithmetic of the default CPU path), clipping and zeroing take a few long
    # operations: the same weights to the last bit (fused=True Adam is faster still but rounds differently: other
    # trajectories, CartPole's gate no longer bit for bit)
    value_head = {id(parameter) for parameter in policy.value_head_parameters()}
    weights = FlatParameters(policy.parameters(), [[p for p in policy.parameters() if id(p) in value_head],
                                                   [p for p in policy.parameters() if id(p) not in value_head]])
    optimizer = torch.optim.Adam(weights.tensors, lr=config.learning_rate, eps=1e-5, foreach=True)

    if state is None:
        global_step, first_update, curve, train_seconds = 0, 1, [], 0.0
        next_obs_np, info = envs.reset(seed=run.seed)
        next_done_np = np.zeros(config.num_envs)
    else:  # continue exactly where the checkpoint left off
        checkpoints.load_weights(policy, state["policy"], f"the checkpoint in {run.run_dir}")
        if reference is not None:
            reference.load_state_dict(state["reference"])
        optimizer.load_state_dict(weights.optimizer_state(state["optimizer"]))
        if state["envs"] is not None:  # the vector env as it was, episodes in progress and all
            envs.close()
            envs = restored_vector_env(state["envs"], run)
            next_obs_np, next_done_np, info = state["next_obs"], state["next_done"], state["next_info"]
        else:  # subprocess envs, or envs that do not pickle, start new episodes
            next_obs_np, info = envs.reset(seed=run.seed + state["global_step"])
            next_done_np = np.zeros(config.num_envs)
        global_step, first_update, curve, train_seconds = state["global_step"], state["update"] + 1, state["curve"], state["train_seconds"]
        checkpoints.set_rng_state(state["rng"])
        print(f"resumed from {run.checkpoint_path} at step {global_step}")

    # rollout storage
    obs_shape, action_shape = envs.single_observation_space.shape, envs.single_action_space.shape
    obs = torch.zeros((config.num_steps, config.num_envs, *obs_shape), dtype=torch.as_tensor(next_obs_np).dtype, device=device)
    actions = torch.zeros((config.num_steps, config.num_envs, *action_shape), dtype=torch.long, device=device)
    logprobs, rewards, dones, values = (torch.zeros((config.num_steps, config.num_envs), device=device) for _ in range(4))
    next_obs = torch.as_tensor(next_obs_np, device=device)
    next_done = torch.as_tensor(next_done_np, dtype=torch.float32, device=device)
    next_masks = batch_masks(info, device)
    augmenting = config.augments and "task_tokens" in info
    if next_masks is not None:
        action_masks = torch.zeros((config.num_steps, *next_masks.action.shape), dtype=torch.bool, device=device)
        argument_masks = None if next_masks.argument is None else \
            torch.zeros((config.num_steps, *next_masks.argument.shape), dtype=torch.bool, device=device)

    writer = run.writer
    if state is None:
        writer.add_text("hyperparameters", hyperparameter_table(asdict(config)))
    stats = EpisodeStats()
    bar = run.progress_bar(num_updates * config.batch_size, initial=global_step)
    every = run.curve_interval(config.eval_every_steps)
    next_eval = (global_step // every + 1) * every if every else None
    last_update = first_update - 1 if run.early_stopped(curve) else num_updates  # a run that stopped early stays stopped

    for update in range(first_update, last_update + 1):
        update_started, cpu_started = time.time(), time.process_time()
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * config.learning_rate

        # ---- rollout
        env_seconds = 0.0
        for step in range(config.num_steps):
            global_step += config.num_envs
            if augmenting:  # the policy acts on (and is updated on) the perturbed observation
                next_obs = config.perturb(next_obs, torch.as_tensor(info["task_tokens"], device=device))
            obs[step], dones[step] = next_obs, next_done
            if next_masks is not None:
                action_masks[step] = next_masks.action
                if argument_masks is not None:
                    argument_masks[step] = next_masks.argument
            with torch.no_grad():
                action, logprob, _, value = policy.get_action_and_value(next_obs, next_masks)
            actions[step], logprobs[step], values[step] = action, logprob, value
            env_start = time.time()
            next_obs_np, reward, terminated, truncated, info = envs.step(action.cpu().numpy())
            env_seconds += time.time() - env_start
            rewards[step] = torch.as_tensor(reward * config.reward_scale, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(next_obs_np, device=device)
            next_done = torch.as_tensor(np.logical_or(terminated, truncated), dtype=torch.float32, device=device)
            next_masks = batch_masks(info, device)
            stats.log_vector(info)

        # ---- generalised advantage estimation
        optimise_started = time.time()
        with torch.no_grad():
            advantages = gae(rewards, values, dones, policy.get_value(next_obs), next_done, config.gamma, config.gae_lambda)
            returns = advantages + values

        # ---- optimise the clipped surrogate
        b_obs = obs.reshape((-1, *obs_shape))
        b_actions = actions.reshape((-1, *action_shape))
        b_logprobs, b_advantages, b_returns, b_values = (x.reshape(-1) for x in (logprobs, advantages, returns, values))
        b_masks = None if next_masks is None else \
            Masks(action_masks.flatten(0, 1), None if argument_masks is None else argument_masks.flatten(0, 1))
        clipfracs = []
        weights.set_trainable(-1, update > config.critic_warmup_updates)  # while frozen, the loss reaches the value head alone
        for _epoch in range(config.update_epochs):
            order = torch.randperm(config.batch_size, device=device)
            for start in range(0, config.batch_size, config.minibatch_size):
                mb = order[start : start + config.minibatch_size]
                mb_masks = None if b_masks is None else \
                    Masks(b_masks.action[mb], None if b_masks.argument is None else b_masks.argument[mb])
                _, newlogprob, entropy, newvalue = policy.get_action_and_value(b_obs[mb], mb_masks, b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > config.clip_coef).float().mean().item())
                mb_advantages = normalize_advantages(b_advantages[mb]) if config.norm_adv else b_advantages[mb]
                pg_loss = clipped_surrogate(ratio, mb_advantages, config.clip_coef)
                v_loss = value_loss(newvalue, b_values[mb], b_returns[mb], config.clip_coef, config.clip_vloss)
                entropy_loss = entropy.mean()
                loss = pg_loss - config.ent_coef * entropy_loss + v_loss * config.vf_coef
                if reference is not None:
                    kl_loss = kl_to_reference(reference, b_obs[mb], mb_masks, b_actions[mb], newlogprob)
                    loss = loss + config.kl_coef * kl_loss
                weights.zero_grad()
                loss.backward()
                weights.clip_grad_norm_(config.max_grad_norm)
                optimizer.step()
            if config.target_kl is not None and approx_kl > config.target_kl:
                break

        # ---- log, evaluate, checkpoint
        now, cpu_now = time.time(), time.process_time()
        train_seconds += now - update_started
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        sps = global_step / train_seconds
        write_scalars(writer, [("charts/learning_rate", optimizer.param_groups[0]["lr"]), ("losses/value_loss", v_loss.item()),
                               ("losses/policy_loss", pg_loss.item()), ("losses/entropy", entropy_loss.item()),
                               ("losses/old_approx_kl", old_approx_kl.item()), ("losses/approx_kl", approx_kl.item()),
                               ("losses/clipfrac", float(np.mean(clipfracs))), ("losses/explained_variance", explained_var),
                               ("charts/SPS", sps), ("perf/rollout_s", optimise_started - update_started),
                               ("perf/env_step_s", env_seconds), ("perf/update_s", now - optimise_started),
                               ("perf/cpu_s", cpu_now - cpu_started), *stats.update_means(),
                               *([] if reference is None else [("losses/kl_to_reference", kl_loss.item())])], global_step)
        if next_eval is not None and (global_step >= next_eval or update == num_updates):
            point = run.curve_point(trained_policy(run, policy, config), global_step, config.eval_curve_episodes)
            curve.append((global_step, point))
            next_eval = (global_step // every + 1) * every
        stopping = run.early_stopped(curve)
        bar.update(config.batch_size)
        bar.set_postfix(stats.postfix(sps), refresh=False)
        if update % config.checkpoint_every == 0 or update == num_updates or stopping:
            run.save_checkpoint({
                "config": asdict(config), "env_kwargs": run.env_kwargs, "policy_spec": policy.spec,
                "policy": policy.state_dict(), "optimizer": optimizer.state_dict(), "global_step": global_step,
                "update": update, "curve": curve, "train_seconds": train_seconds, "rng": checkpoints.rng_state(),
                "envs": vector_env_state(envs), "next_obs": next_obs_np, "next_done": next_done.cpu().numpy(), "next_info": info,
                **({} if reference is None else {"reference": reference.state_dict()}),
            })
        if stopping:
            break
    bar.close()
    envs.close()
    return Trained(trained_policy(run, policy, config), global_step, curve, train_seconds)
