"""Proximal Policy Optimisation (clipped), CleanRL-style: one file, one loop, one config.

Tool-use environments train the token policy (``trainers/policy.py``) on token-id observations
with the env's action and argument masks; plain gymnasium control envs (``CartPole-v1``) train
CleanRL's MLP policy. Rollouts come from a ``SyncVectorEnv``; advantages from GAE. On tool-use
envs the rollouts act on observations whose task prompt is perturbed (:mod:`trainers.augment`),
and the update scores the same perturbed observations.

    python -m trainers.ppo --env customer_support --total-steps 100000
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from . import augment, common
from .policy import Masks, TokenPolicyFields
from .protocol import TARGET_SUCCESS, TRAINING_REWARD, first_step_at_target
from .registry import RunSpec, TrainResult


@dataclass
class Config(augment.TaskTokenAugmentation, TokenPolicyFields):
    """Every hyper-parameter of a PPO run (defaults: CustomerSupport-v0 on a 2-core CPU); the
    token policy's fields come from :class:`TokenPolicyFields`, the augmentation's (applied to
    the observations the rollouts act on, where the env reports ``info["task_tokens"]``: other
    envs train on plain observations) from :class:`~trainers.augment.TaskTokenAugmentation`."""

    env_id: str = "AgentGym/CustomerSupport-v0"
    seed: int = 0
    total_steps: int = 60_000
    device: str = "auto"
    run_dir: str = "runs/CustomerSupport-v0__ppo__seed0"
    num_envs: int = 16
    num_steps: int = 32  # steps per env per rollout
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
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # passed to gym.make, for training and evaluation
    # the reward_config the training envs of a tool-use env use (None: the env's own default);
    # evaluation always uses env_kwargs. See the README, "Training reward".
    training_reward: dict[str, Any] | None = field(default_factory=lambda: dict(TRAINING_REWARD))
    # evaluation, checkpoints
    eval_every_steps: int = 10_000  # greedy test-split evaluation for the learning curve (0: only at the end)
    eval_curve_episodes: int = 50
    eval_episodes: int = 100  # final evaluation on each split
    checkpoint_every: int = 10  # updates
    init_checkpoint: str | None = None  # start from these weights (e.g. a BC checkpoint)
    # the first N updates fit only the value head; the rest of the policy keeps its weights
    # (after BC: the policy acts as BC left it until its value estimates are no longer random)
    critic_warmup_updates: int = 0
    # > 0: penalise the k3 estimate of KL to the starting policy (init_checkpoint's weights), as
    # RLHF's PPO does, so that fine-tuning keeps what BC learnt where the reward does not say otherwise
    kl_coef: float = 0.0
    progress: bool = True
    threads: int = 1  # CPU threads for torch (0: torch's default); 1 suits a small shared machine

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.batch_size)


def train(config: Config, resume: bool = False, algo: str = "ppo") -> TrainResult:
    """Train as ``config`` says; ``resume`` continues from ``run_dir``'s checkpoint if there is one."""
    config, run_dir, checkpoint_path, state, device = common.start_run(config, resume, "PPO")

    envs = common.make_vec_env(config.env_id, config.num_envs, context_len=config.context_len,
                               entity_len=config.entity_len, env_kwargs=training_env_kwargs(config))
    policy = common.new_policy(envs.unwrapped.envs[0], config.context_len, config.entity_len, config.token_config()).to(device)
    if config.init_checkpoint and state is None:
        policy.load_state_dict(common.load_checkpoint(config.init_checkpoint)["policy"])
    reference = common.frozen_copy(policy, device) if config.kl_coef > 0 else None
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5)
    value_head = {id(parameter) for parameter in policy.value_head_parameters()}
    frozen_during_warmup = [parameter for parameter in policy.parameters() if id(parameter) not in value_head]

    # rollout storage
    obs_shape = envs.single_observation_space.shape
    obs = torch.zeros((config.num_steps, config.num_envs, *obs_shape), dtype=torch.long if common.is_tool_env(config.env_id) else torch.float32, device=device)
    actions = torch.zeros((config.num_steps, config.num_envs, *envs.single_action_space.shape), dtype=torch.long, device=device)
    logprobs, rewards, dones, values = (torch.zeros((config.num_steps, config.num_envs), device=device) for _ in range(4))
    action_masks: torch.Tensor | None = None
    argument_masks: torch.Tensor | None = None

    if state is None:
        global_step, first_update, curve, elapsed = 0, 1, [], 0.0
        next_obs_np, info = envs.reset(seed=config.seed)
        next_done_np = np.zeros(config.num_envs)
    else:  # continue exactly where the checkpoint left off
        policy.load_state_dict(state["policy"])
        if reference is not None:
            reference.load_state_dict(state["reference"])
        optimizer.load_state_dict(state["optimizer"])
        envs.close()
        envs = common.unpickle_envs(state["envs"])
        next_obs_np, next_done_np, info = state["next_obs"], state["next_done"], state["next_info"]
        global_step, first_update, curve, elapsed = state["global_step"], state["update"] + 1, state["curve"], state["elapsed"]
        common.set_rng_state(state["rng"])
        print(f"resumed from {checkpoint_path} at step {global_step}")
    next_obs = torch.as_tensor(next_obs_np, device=device)
    next_done = torch.as_tensor(next_done_np, dtype=torch.float32, device=device)
    next_masks = common.batch_masks(info, device)
    augmenting = config.augments and "task_tokens" in info
    if next_masks is not None:
        action_masks = torch.zeros((config.num_steps, *next_masks.action.shape), dtype=torch.bool, device=device)
        argument_masks = torch.zeros((config.num_steps, *next_masks.argument.shape), dtype=torch.bool, device=device)

    writer = common.make_writer(run_dir, config, global_step)
    stats = common.EpisodeStats(writer)
    bar = tqdm(total=config.num_updates * config.batch_size, initial=global_step, unit="step", desc="ppo",
               disable=not config.progress, dynamic_ncols=True)
    start_time, start_step = time.time(), global_step
    next_eval = (global_step // config.eval_every_steps + 1) * config.eval_every_steps if config.eval_every_steps else None

    for update in range(first_update, config.num_updates + 1):
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / config.num_updates) * config.learning_rate

        # ---- rollout
        rollout_start, env_seconds = time.time(), 0.0
        for step in range(config.num_steps):
            global_step += config.num_envs
            if augmenting:  # the policy acts on (and is updated on) the perturbed observation
                next_obs = config.perturb(next_obs, torch.as_tensor(info["task_tokens"], device=device))
            obs[step], dones[step] = next_obs, next_done
            if next_masks is not None:
                action_masks[step], argument_masks[step] = next_masks
            with torch.no_grad():
                action, logprob, _, value = policy.get_action_and_value(next_obs, next_masks)
            actions[step], logprobs[step], values[step] = action, logprob, value
            env_start = time.time()
            next_obs_np, reward, terminated, truncated, info = envs.step(action.cpu().numpy())
            env_seconds += time.time() - env_start
            rewards[step] = torch.as_tensor(reward * config.reward_scale, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(next_obs_np, device=device)
            next_done = torch.as_tensor(np.logical_or(terminated, truncated), dtype=torch.float32, device=device)
            next_masks = common.batch_masks(info, device)
            stats.log(info, global_step)

        # ---- generalised advantage estimation
        update_start = time.time()
        with torch.no_grad():
            next_value = policy.get_value(next_obs)
            advantages = torch.zeros_like(rewards)
            last_gae = 0
            for t in reversed(range(config.num_steps)):
                next_nonterminal = 1.0 - (next_done if t == config.num_steps - 1 else dones[t + 1])
                next_values = next_value if t == config.num_steps - 1 else values[t + 1]
                delta = rewards[t] + config.gamma * next_values * next_nonterminal - values[t]
                advantages[t] = last_gae = delta + config.gamma * config.gae_lambda * next_nonterminal * last_gae
            returns = advantages + values

        # ---- optimise the clipped surrogate
        b_obs = obs.reshape((-1, *obs_shape))
        b_actions = actions.reshape((-1, *envs.single_action_space.shape))
        b_logprobs, b_advantages, b_returns, b_values = (x.reshape(-1) for x in (logprobs, advantages, returns, values))
        b_masks = None if action_masks is None else Masks(action_masks.flatten(0, 1), argument_masks.flatten(0, 1))
        clipfracs = []
        for parameter in frozen_during_warmup:  # while frozen, the loss reaches the value head alone
            parameter.requires_grad_(update > config.critic_warmup_updates)
        for epoch in range(config.update_epochs):
            order = torch.randperm(config.batch_size, device=device)
            for start in range(0, config.batch_size, config.minibatch_size):
                mb = order[start : start + config.minibatch_size]
                mb_masks = None if b_masks is None else Masks(b_masks.action[mb], b_masks.argument[mb])
                _, newlogprob, entropy, newvalue = policy.get_action_and_value(b_obs[mb], mb_masks, b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > config.clip_coef).float().mean().item())
                mb_advantages = b_advantages[mb]
                if config.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(-mb_advantages * ratio,
                                    -mb_advantages * torch.clamp(ratio, 1 - config.clip_coef, 1 + config.clip_coef)).mean()
                if config.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -config.clip_coef, config.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - config.ent_coef * entropy_loss + v_loss * config.vf_coef
                if reference is not None:
                    kl_loss = common.kl_to_reference(reference, b_obs[mb], mb_masks, b_actions[mb], newlogprob)
                    loss = loss + config.kl_coef * kl_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
                optimizer.step()
            if config.target_kl is not None and approx_kl > config.target_kl:
                break

        # ---- log, evaluate, checkpoint
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        sps = (global_step - start_step) / (time.time() - start_time)
        for tag, value in (("charts/learning_rate", optimizer.param_groups[0]["lr"]), ("losses/value_loss", v_loss.item()),
                           ("losses/policy_loss", pg_loss.item()), ("losses/entropy", entropy_loss.item()),
                           ("losses/old_approx_kl", old_approx_kl.item()), ("losses/approx_kl", approx_kl.item()),
                           ("losses/clipfrac", float(np.mean(clipfracs))), ("losses/explained_variance", explained_var),
                           ("charts/SPS", sps), ("perf/rollout_s", update_start - rollout_start), ("perf/env_step_s", env_seconds),
                           ("perf/update_s", time.time() - update_start)):
            writer.add_scalar(tag, value, global_step)
        if reference is not None:
            writer.add_scalar("losses/kl_to_reference", kl_loss.item(), global_step)
        if next_eval is not None and (global_step >= next_eval or update == config.num_updates):
            curve.append((global_step, _curve_point(policy, config, device)))
            writer.add_scalar("eval/test_success" if common.is_tool_env(config.env_id) else "eval/test_return", curve[-1][1], global_step)
            next_eval = (global_step // config.eval_every_steps + 1) * config.eval_every_steps
        bar.update(config.batch_size)
        bar.set_postfix(sps=f"{sps:.0f}", ret=f"{stats.mean('charts/episodic_return'):.1f}",
                        success=f"{stats.mean('metrics/success'):.2f}", refresh=False)
        if update % config.checkpoint_every == 0 or update == config.num_updates:
            common.save_checkpoint(checkpoint_path, {
                "algo": algo, "config": asdict(config), "policy_spec": policy.spec, "policy": policy.state_dict(),
                "optimizer": optimizer.state_dict(), "global_step": global_step, "update": update, "curve": curve,
                "elapsed": elapsed + time.time() - start_time, "rng": common.rng_state(), "envs": common.pickle_envs(envs),
                "next_obs": next_obs_np, "next_done": next_done.cpu().numpy(), "next_info": info,
                **({} if reference is None else {"reference": reference.state_dict()}),
            })
    bar.close()
    envs.close()
    wall_time = elapsed + time.time() - start_time
    return finish(policy, config, device, writer, algo, curve, global_step, wall_time, run_dir)


def training_env_kwargs(config: Any) -> dict[str, Any]:
    """``env_kwargs`` with the config's ``training_reward`` as ``reward_config`` (tool-use envs)."""
    if not common.is_tool_env(config.env_id) or config.training_reward is None:
        return dict(config.env_kwargs)
    return {**config.env_kwargs, "reward_config": {**config.env_kwargs.get("reward_config", {}), **config.training_reward}}


def _curve_point(policy: nn.Module, config: Config, device: torch.device) -> float:
    metrics = common.evaluate_policy(policy, config.env_id, "test", config.eval_curve_episodes, device,
                                     seed=10_000, env_kwargs=config.env_kwargs)
    return metrics["success"] if "success" in metrics else metrics["return"]


def finish(policy: nn.Module, config: Any, device: torch.device, writer: Any, algo: str, curve: list[tuple[int, float]],
           global_step: int, wall_time: float, run_dir: Path) -> TrainResult:
    """Final evaluation on both splits, the report, and the :class:`TrainResult` (shared by every trainer)."""
    train_metrics = common.evaluate_policy(policy, config.env_id, "train", config.eval_episodes, device, env_kwargs=config.env_kwargs)
    test_metrics = common.evaluate_policy(policy, config.env_id, "test", config.eval_episodes, device, env_kwargs=config.env_kwargs)
    if "success" in test_metrics:
        writer.add_scalar("eval/test_success", test_metrics["success"], global_step)
    writer.close()
    print(common.final_report(config.env_id, algo, train_metrics, test_metrics))
    tool_env = common.is_tool_env(config.env_id)
    return TrainResult(
        algo=algo, env_id=config.env_id, seed=config.seed, total_steps=global_step, wall_time_s=wall_time,
        sps=global_step / wall_time if wall_time > 0 else float("nan"), train_metrics=train_metrics,
        test_metrics=test_metrics, curve=curve,
        steps_to_target=first_step_at_target(curve, TARGET_SUCCESS) if tool_env else None, run_dir=str(run_dir),
    )


def config_for(spec: RunSpec, algo: str, config_class: type = Config) -> Any:
    """A trainer's config from a :class:`RunSpec` (its ``overrides`` set further fields)."""
    env_id = common.canonical_env_id(spec.env_id)
    values = {"env_id": env_id, "seed": spec.seed, "total_steps": spec.total_steps, "device": spec.device,
              "run_dir": str(common.default_run_dir(spec.run_dir, env_id, algo, spec.seed)),
              "eval_episodes": spec.eval_episodes}
    return common.config_from_overrides(config_class, **{**values, **spec.overrides})


def run(spec: RunSpec) -> TrainResult:
    """The registry's entry point (``ppo``)."""
    return train(config_for(spec, "ppo"), resume=spec.resume)


if __name__ == "__main__":
    common.command_line(run, __doc__, Config.total_steps)
