"""Group Relative Policy Optimisation for tool-use environments, CleanRL-style: one loop.

Each update draws ``groups_per_update`` tasks; every task is played ``group_size`` times from the
same reset (``options={"task_id": ...}``). A rollout's advantage is its episode return
normalised within its group, ``(R_i - mean(R)) / (std(R) + eps)``, given to every step of the
rollout; no critic. The loss is PPO's clipped ratio objective on those advantages, minus an
entropy bonus, plus (``kl_coef`` > 0) the k3 estimate of KL to a frozen reference policy (the
starting weights: random, or a BC checkpoint).

A group whose rollouts all return the same has zero advantages: its only gradient is the
entropy bonus. ``skip_uniform_groups`` leaves such groups out of the update, as DAPO's dynamic
sampling does (their env steps still count; an update with no other group is skipped). Off by
default: on a policy that has collapsed onto one behaviour, that bonus is what still pushes it to
explore. ``charts/uniform_groups`` logs the share of such groups either way.

Which return: ``reward_mode="shaped"`` (default) uses the env's shaped rewards summed over the
episode; ``"outcome"`` makes the env pay only the outcome score (``reward_config={"mode":
"outcome"}``). From random weights almost every group fails every rollout, so outcome returns
are all 0 and group-normalised advantages vanish; the shaped return still ranks the rollouts of a
group. ``outcome`` is the right choice after BC (``bc-grpo``), when groups mix successes and
failures.

Tasks are chosen through the env contract only: a reset with a fresh seed draws a task and
reports ``info["task_id"]``; the group then resets with ``options={"task_id": ...}``.

    agentgym train customer_support --algo grpo --total-steps 100000
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from . import checkpoints
from .policy import Masks, TokenPolicyFields
from .run import Run, Trained
from .torch_policy import (
    EpisodeStats,
    batch_masks,
    clipped_surrogate,
    env_factory,
    frozen_copy,
    initial_policy,
    kl_to_reference,
    trained_policy,
)


@dataclass
class Config(TokenPolicyFields):
    """Every hyper-parameter of a GRPO run."""

    group_size: int = 8  # rollouts per task
    groups_per_update: int = 8  # tasks per update
    reward_mode: str = "shaped"  # "shaped" | "outcome" (see the module docstring)
    learning_rate: float = 5e-4
    anneal_lr: bool = True
    update_epochs: int = 2
    num_minibatches: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    kl_coef: float = 0.0  # > 0: penalise KL to the frozen starting policy
    skip_uniform_groups: bool = False  # leave groups with equal returns (zero advantages) out of the update
    max_grad_norm: float = 0.5
    eval_every_steps: int = 10_000
    eval_curve_episodes: int = 50
    checkpoint_every: int = 10  # updates
    threads: int = 1


@dataclass
class Rollout:
    """One episode: per-step observations, masks, actions and log-probs; its return and metrics."""

    obs: list[np.ndarray] = field(default_factory=list)
    action_masks: list[np.ndarray] = field(default_factory=list)
    argument_masks: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    ret: float = 0.0
    task_id: str = ""
    metrics: dict[str, float] = field(default_factory=dict)


def draw_task(env: gym.Env, seed: int) -> str:
    """The id of the task a reset with ``seed`` draws (the env contract's ``info["task_id"]``)."""
    _, info = env.reset(seed=seed)
    if "task_id" not in info:
        raise ValueError("GRPO plays groups of rollouts of one task: it needs an env whose reset reports "
                         "info['task_id'] and accepts options={'task_id': ...}")
    return info["task_id"]


@torch.no_grad()
def play_group(policy: nn.Module, envs: list[gym.Env], task_id: str, seed: int, device: str) -> list[Rollout]:
    """Play one rollout per env, all on task ``task_id``, batching the policy over live envs."""
    rollouts = [Rollout(task_id=task_id) for _ in envs]
    current = [env.reset(seed=seed, options={"task_id": task_id}) for env in envs]
    live = list(range(len(envs)))
    while live:
        obs = np.stack([current[i][0] for i in live])
        info = {key: np.stack([current[i][1][key] for i in live]) for key in ("action_mask", "argument_mask")}
        actions, logprobs, _, _ = policy.get_action_and_value(torch.as_tensor(obs, device=device), batch_masks(info, device))
        still_live = []
        for row, i in enumerate(live):
            rollout, action = rollouts[i], actions[row].cpu().numpy()
            rollout.obs.append(obs[row])
            rollout.action_masks.append(info["action_mask"][row])
            rollout.argument_masks.append(info["argument_mask"][row])
            rollout.actions.append(action)
            rollout.logprobs.append(float(logprobs[row]))
            observation, reward, terminated, truncated, step_info = envs[i].step(action)
            rollout.ret += float(reward)
            current[i] = (observation, step_info)
            if terminated or truncated:
                rollout.metrics = step_info.get("metrics", {})
            else:
                still_live.append(i)
        live = still_live
    return rollouts


def group_advantages(returns: np.ndarray, scale: bool = True, eps: float = 1e-8) -> np.ndarray:
    """``(R - mean) / (std + eps)`` within each group (the last axis), population std; all
    zeros when a group's returns are equal. ``scale=False`` leaves out the division by the
    std (Dr. GRPO: ``R - mean``)."""
    centred = returns - returns.mean(-1, keepdims=True)
    return centred / (returns.std(-1, keepdims=True) + eps) if scale else centred


def clipped_update(policy: nn.Module, reference: nn.Module, optimizer: torch.optim.Optimizer,
                   steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]], config: Config,
                   device: str) -> dict[str, float]:
    """``update_epochs`` epochs of the clipped ratio objective (plus KL to ``reference``) over
    ``steps`` = (obs, action mask, argument mask, action, old log-prob, advantage); returns the
    last minibatch's losses under their TensorBoard tags."""
    b_obs, b_action_masks, b_argument_masks, b_actions = (torch.as_tensor(np.stack(x), device=device) for x in list(zip(*steps))[:4])
    b_logprobs, b_advantages = (torch.as_tensor(x, dtype=torch.float32, device=device) for x in list(zip(*steps))[4:])
    batch_size = len(steps)
    minibatch_size = -(-batch_size // config.num_minibatches)
    for _ in range(config.update_epochs):
        order = torch.randperm(batch_size, device=device)
        for start in range(0, batch_size, minibatch_size):
            mb = order[start : start + minibatch_size]
            masks = Masks(b_action_masks[mb], b_argument_masks[mb])
            _, newlogprob, entropy, _ = policy.get_action_and_value(b_obs[mb], masks, b_actions[mb])
            logratio = newlogprob - b_logprobs[mb]
            ratio = logratio.exp()
            pg_loss = clipped_surrogate(ratio, b_advantages[mb], config.clip_coef)
            loss = pg_loss - config.ent_coef * entropy.mean()
            kl = torch.zeros(())
            if config.kl_coef > 0:
                kl = kl_to_reference(reference, b_obs[mb], masks, b_actions[mb], newlogprob)
                loss = loss + config.kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean().item()
    return {"losses/policy_loss": pg_loss.item(), "losses/entropy": entropy.mean().item(), "losses/approx_kl": approx_kl,
            "losses/kl_to_reference": kl.item()}


def train(run: Run) -> Trained:
    """Train for ``run.total_steps`` env steps (whole groups: the last update may pass it)."""
    config: Config = run.config(Config)
    state = run.resume_state()
    device = run.device
    checkpoints.seed_everything(run.seed, config.threads)
    if config.reward_mode not in ("shaped", "outcome"):
        raise ValueError(f"reward_mode must be 'shaped' or 'outcome', got {config.reward_mode!r}")
    if config.observation != "tokens":
        raise ValueError(f"GRPO trains the token policy: observation must be 'tokens', got {config.observation!r}")
    if config.reward_mode == "outcome":
        run.training_reward = {**(run.training_reward or {}), "mode": "outcome"}
    envs = [env_factory(run, "train", True, config.context_len, config.entity_len,
                        action_capacity=config.action_capacity)() for _ in range(config.group_size)]
    policy = initial_policy(run, envs[0], config.token_config(), device)
    reference = frozen_copy(policy, device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5)
    task_rng = np.random.default_rng(run.seed)

    global_step, update, curve, train_seconds = 0, 0, [], 0.0
    if state is not None:
        checkpoints.load_weights(policy, state["policy"], f"the checkpoint in {run.run_dir}")
        reference.load_state_dict(state["reference"])
        optimizer.load_state_dict(state["optimizer"])
        task_rng.bit_generator.state = state["task_rng"]
        global_step, update, curve, train_seconds = state["global_step"], state["update"], state["curve"], state["train_seconds"]
        checkpoints.set_rng_state(state["rng"])
        print(f"resumed from {run.checkpoint_path} at step {global_step}")

    writer = run.writer
    stats = EpisodeStats()
    bar = run.progress_bar(run.total_steps, initial=global_step)
    every = run.curve_interval(config.eval_every_steps)
    next_eval = (global_step // every + 1) * every if every else None

    while global_step < run.total_steps and not run.early_stopped(curve):
        update_started = time.time()
        update += 1
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = max(0.0, 1.0 - global_step / run.total_steps) * config.learning_rate

        # ---- groups of rollouts on shared tasks
        steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]] = []
        uniform = 0  # groups whose rollouts all returned the same
        for _ in range(config.groups_per_update):
            task_id = draw_task(envs[0], int(task_rng.integers(2**31)))
            group = play_group(policy, envs, task_id, int(task_rng.integers(2**31)), device)
            advantages = group_advantages(np.array([r.ret for r in group]))
            for rollout in group:
                global_step += len(rollout.actions)
                stats.log_episode(rollout.ret, rollout.metrics)
            if not advantages.any():
                uniform += 1
                if config.skip_uniform_groups:
                    continue
            for rollout, advantage in zip(group, advantages):
                steps += [(o, am, gm, a, lp, float(advantage)) for o, am, gm, a, lp in
                          zip(rollout.obs, rollout.action_masks, rollout.argument_masks, rollout.actions, rollout.logprobs)]

        # ---- clipped ratio objective on group-relative advantages
        losses = clipped_update(policy, reference, optimizer, steps, config, device) if steps else {}

        # ---- log, evaluate, checkpoint
        train_seconds += time.time() - update_started
        sps = global_step / train_seconds
        for tag, value in (("charts/learning_rate", optimizer.param_groups[0]["lr"]), ("charts/SPS", sps),
                           ("charts/uniform_groups", uniform / config.groups_per_update), *losses.items(),
                           *stats.update_means()):
            writer.add_scalar(tag, value, global_step)
        done = global_step >= run.total_steps
        if next_eval is not None and (global_step >= next_eval or done):
            curve.append((global_step, run.curve_point(trained_policy(run, policy), global_step, config.eval_curve_episodes)))
            next_eval = (global_step // every + 1) * every
        bar.update(min(global_step, run.total_steps) - bar.n)
        bar.set_postfix(stats.postfix(sps), refresh=False)
        if update % config.checkpoint_every == 0 or done or run.early_stopped(curve):
            run.save_checkpoint({
                "config": asdict(config), "env_kwargs": run.env_kwargs, "policy_spec": policy.spec,
                "policy": policy.state_dict(), "reference": reference.state_dict(), "optimizer": optimizer.state_dict(),
                "global_step": global_step, "update": update, "curve": curve, "train_seconds": train_seconds,
                "rng": checkpoints.rng_state(), "task_rng": task_rng.bit_generator.state,
            })
    bar.close()
    return Trained(trained_policy(run, policy), global_step, curve, train_seconds)
