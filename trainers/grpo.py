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
group. ``outcome`` is the right choice after BC (``init_checkpoint``), when groups mix successes
and failures.

    python -m trainers.grpo --env customer_support --total-steps 100000
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from . import common
from .policy import Masks, TokenPolicyFields
from .ppo import config_for, finish, training_env_kwargs
from .protocol import TRAINING_REWARD
from .registry import RunSpec, TrainResult


@dataclass
class Config(TokenPolicyFields):
    """Every hyper-parameter of a GRPO run."""

    env_id: str = "AgentGym/CustomerSupport-v0"
    seed: int = 0
    total_steps: int = 100_000
    device: str = "auto"
    run_dir: str = "runs/CustomerSupport-v0__grpo__seed0"
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
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    training_reward: dict[str, Any] | None = field(default_factory=lambda: dict(TRAINING_REWARD))  # as PPO's
    eval_every_steps: int = 10_000
    eval_curve_episodes: int = 50
    eval_episodes: int = 100
    checkpoint_every: int = 10  # updates
    init_checkpoint: str | None = None
    progress: bool = True
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


@torch.no_grad()
def play_group(policy: nn.Module, envs: list, task_id: str, seed: int, device: torch.device) -> list[Rollout]:
    """Play one rollout per env, all on task ``task_id``, batching the policy over live envs."""
    rollouts = [Rollout(task_id=task_id) for _ in envs]
    current = [env.reset(seed=seed, options={"task_id": task_id}) for env in envs]
    live = list(range(len(envs)))
    while live:
        obs = np.stack([current[i][0] for i in live])
        info = {key: np.stack([current[i][1][key] for i in live]) for key in ("action_mask", "argument_mask")}
        actions, logprobs, _, _ = policy.get_action_and_value(torch.as_tensor(obs, device=device), common.batch_masks(info, device))
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
                rollout.metrics = step_info["metrics"]
            else:
                still_live.append(i)
        live = still_live
    return rollouts


def group_advantages(returns: np.ndarray, eps: float = 1e-8) -> np.ndarray:
    """``(R - mean) / (std + eps)`` within one group (all zeros when the group's returns are equal)."""
    return (returns - returns.mean()) / (returns.std() + eps)


def clipped_update(policy: nn.Module, reference: nn.Module, optimizer: torch.optim.Optimizer,
                   steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]], config: Config,
                   device: torch.device) -> dict[str, float]:
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
            pg_loss = torch.max(-b_advantages[mb] * ratio,
                                -b_advantages[mb] * torch.clamp(ratio, 1 - config.clip_coef, 1 + config.clip_coef)).mean()
            loss = pg_loss - config.ent_coef * entropy.mean()
            kl = torch.zeros(())
            if config.kl_coef > 0:
                kl = common.kl_to_reference(reference, b_obs[mb], masks, b_actions[mb], newlogprob)
                loss = loss + config.kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean().item()
    return {"losses/policy_loss": pg_loss.item(), "losses/entropy": entropy.mean().item(), "losses/approx_kl": approx_kl,
            "losses/kl_to_reference": kl.item()}


def train(config: Config, resume: bool = False, algo: str = "grpo") -> TrainResult:
    common.require_single_agent_tool_env(config.env_id, "GRPO needs a single-agent agentgym tool-use environment (task ids)")
    config, run_dir, checkpoint_path, state, device = common.start_run(config, resume, "GRPO")

    env_kwargs = training_env_kwargs(config)
    if config.reward_mode == "outcome":
        env_kwargs["reward_config"] = {**env_kwargs.get("reward_config", {}), "mode": "outcome"}
    elif config.reward_mode != "shaped":
        raise ValueError(f"reward_mode must be 'shaped' or 'outcome', got {config.reward_mode!r}")
    envs = [common.make_env(config.env_id, "train", config.context_len, config.entity_len, env_kwargs)
            for _ in range(config.group_size)]
    policy = common.new_policy(envs[0], config.context_len, config.entity_len, config.token_config()).to(device)
    if config.init_checkpoint:
        policy.load_state_dict(common.load_checkpoint(config.init_checkpoint)["policy"])
    reference = common.frozen_copy(policy, device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5)
    task_rng = np.random.default_rng(config.seed)
    tasks = envs[0].unwrapped.tasks

    global_step, update, curve, elapsed = 0, 0, [], 0.0
    if state is not None:
        policy.load_state_dict(state["policy"])
        reference.load_state_dict(state["reference"])
        optimizer.load_state_dict(state["optimizer"])
        task_rng.bit_generator.state = state["task_rng"]
        global_step, update, curve, elapsed = state["global_step"], state["update"], state["curve"], state["elapsed"]
        common.set_rng_state(state["rng"])
        print(f"resumed from {checkpoint_path} at step {global_step}")

    writer = common.make_writer(run_dir, config, global_step)
    stats = common.EpisodeStats(writer)
    bar = tqdm(total=config.total_steps, initial=global_step, unit="step", desc="grpo", disable=not config.progress, dynamic_ncols=True)
    start_time, start_step = time.time(), global_step
    next_eval = (global_step // config.eval_every_steps + 1) * config.eval_every_steps if config.eval_every_steps else None

    while global_step < config.total_steps:
        update += 1
        if config.anneal_lr:
            optimizer.param_groups[0]["lr"] = max(0.0, 1.0 - global_step / config.total_steps) * config.learning_rate

        # ---- groups of rollouts on shared tasks
        steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]] = []
        uniform = 0  # groups whose rollouts all returned the same
        for _ in range(config.groups_per_update):
            task = tasks.sample(task_rng)
            group = play_group(policy, envs, task.task_id, int(task_rng.integers(2**31)), device)
            advantages = group_advantages(np.array([r.ret for r in group]))
            for rollout in group:
                global_step += len(rollout.actions)
                stats.add("charts/episodic_return", rollout.ret, global_step)
                for name in common.EPISODE_METRICS:
                    stats.add(f"metrics/{name}", float(rollout.metrics[name]), global_step)
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
        sps = (global_step - start_step) / (time.time() - start_time)
        for tag, value in (("charts/learning_rate", optimizer.param_groups[0]["lr"]), ("charts/SPS", sps),
                           ("charts/uniform_groups", uniform / config.groups_per_update), *losses.items()):
            writer.add_scalar(tag, value, global_step)
        done = global_step >= config.total_steps
        if next_eval is not None and (global_step >= next_eval or done):
            metrics = common.evaluate_policy(policy, config.env_id, "test", config.eval_curve_episodes, device,
                                             seed=10_000, env_kwargs=config.env_kwargs)
            curve.append((global_step, metrics["success"]))
            writer.add_scalar("eval/test_success", metrics["success"], global_step)
            next_eval = (global_step // config.eval_every_steps + 1) * config.eval_every_steps
        bar.update(min(global_step, config.total_steps) - bar.n)
        bar.set_postfix(sps=f"{sps:.0f}", ret=f"{stats.mean('charts/episodic_return'):.1f}",
                        success=f"{stats.mean('metrics/success'):.2f}", refresh=False)
        if update % config.checkpoint_every == 0 or done:
            common.save_checkpoint(checkpoint_path, {
                "algo": algo, "config": asdict(config), "policy_spec": policy.spec, "policy": policy.state_dict(),
                "reference": reference.state_dict(), "optimizer": optimizer.state_dict(), "global_step": global_step,
                "update": update, "curve": curve, "elapsed": elapsed + time.time() - start_time,
                "rng": common.rng_state(), "task_rng": task_rng.bit_generator.state,
            })
    bar.close()
    return finish(policy, config, device, writer, algo, curve, global_step, elapsed + time.time() - start_time, run_dir)


def run(spec: RunSpec) -> TrainResult:
    """The registry's entry point (``grpo``)."""
    return train(config_for(spec, "grpo", Config), resume=spec.resume)


if __name__ == "__main__":
    common.command_line(run, __doc__, Config.total_steps)
