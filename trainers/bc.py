"""Behaviour cloning from the scripted expert (the SFT stage), and BC followed by PPO.

The expert (:class:`agentgym_envs.policies.ExpertPolicy`) plays train-split episodes; every step's
token observation, masks and action are recorded; the token policy is trained to maximise the
log-probability of the expert's action under the same masks it will act with. ``total_steps``
is the number of expert environment steps recorded.

Every minibatch is augmented against paraphrase (:mod:`trainers.augment`): task-prompt tokens
are swapped for other prompts' tokens (``task_token_swap``), then hidden (``task_token_dropout``,
and the whole prompt with probability ``task_prompt_dropout``).

``run_then_ppo`` / ``run_then_grpo`` train BC, then PPO / GRPO from the BC checkpoint
(``init_checkpoint``) for the rest of the step budget.

    python -m trainers.bc --env customer_support --total-steps 10000
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from agentgym_envs.policies import ExpertPolicy

from . import augment, common, grpo, ppo
from .policy import Masks, TokenPolicyFields
from .protocol import TARGET_SUCCESS, first_step_at_target
from .registry import RunSpec, TrainResult


@dataclass
class Config(augment.TaskTokenAugmentation, TokenPolicyFields):
    """Every hyper-parameter of a behaviour-cloning run (the augmentation's from
    :class:`~trainers.augment.TaskTokenAugmentation`)."""

    env_id: str = "AgentGym/CustomerSupport-v0"
    seed: int = 0
    total_steps: int = 10_000  # expert environment steps recorded
    device: str = "auto"
    run_dir: str = "runs/CustomerSupport-v0__bc__seed0"
    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 1e-3
    max_grad_norm: float = 0.5
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    eval_curve_episodes: int = 50
    eval_episodes: int = 100
    progress: bool = True
    threads: int = 1


def expert_dataset(config: Config, env: Any) -> dict[str, np.ndarray]:
    """``total_steps`` expert steps on the train split (episodes seeded ``seed * 10**6 + n``),
    as arrays ``obs``, ``action_mask``, ``argument_mask``, ``action`` and ``task_len`` (how many
    leading context ids are the task prompt)."""
    expert = ExpertPolicy(env)
    columns: dict[str, list[np.ndarray]] = {"obs": [], "action_mask": [], "argument_mask": [], "action": [], "task_len": []}
    episode = 0
    while len(columns["action"]) < config.total_steps:
        observation, info = env.reset(seed=config.seed * 10**6 + episode)
        done = False
        while not done and len(columns["action"]) < config.total_steps:
            action = expert(observation, info)
            for key, value in (("obs", observation), ("action_mask", info["action_mask"]),
                               ("argument_mask", info["argument_mask"]), ("action", action),
                               ("task_len", info["task_tokens"])):
                columns[key].append(np.asarray(value))
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        episode += 1
    return {key: np.stack(values) for key, values in columns.items()}


def train(config: Config, resume: bool = False, algo: str = "bc") -> TrainResult:
    """Record the expert, then fit the policy; ``resume`` continues after the last finished epoch."""
    common.require_single_agent_tool_env(config.env_id, "behaviour cloning needs a single-agent agentgym tool-use environment (it has an expert)")
    config, run_dir, checkpoint_path, state, device = common.start_run(config, resume, "BC")

    env = common.make_env(config.env_id, "train", config.context_len, config.entity_len, config.env_kwargs)
    start_time = time.time()
    data = {key: torch.as_tensor(value, device=device) for key, value in expert_dataset(config, env).items()}
    collect_sps = config.total_steps / (time.time() - start_time)
    policy = common.new_policy(env, config.context_len, config.entity_len, config.token_config()).to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
    first_epoch, curve, elapsed = 1, [], 0.0
    if state is not None:
        policy.load_state_dict(state["policy"])
        optimizer.load_state_dict(state["optimizer"])
        first_epoch, curve, elapsed = state["epoch"] + 1, state["curve"], state["elapsed"]
        common.set_rng_state(state["rng"])
        print(f"resumed from {checkpoint_path} after epoch {state['epoch']}")
    writer = common.make_writer(run_dir, config, 0 if state is None else state["epoch"])
    writer.add_scalar("charts/SPS", collect_sps, 0)
    size = len(data["action"])
    bar = tqdm(range(first_epoch, config.epochs + 1), desc="bc", unit="epoch", disable=not config.progress, dynamic_ncols=True)
    for epoch in bar:
        order = torch.randperm(size, device=device)
        losses, hits = [], []
        for start in range(0, size, config.batch_size):
            mb = order[start : start + config.batch_size]
            masks = Masks(data["action_mask"][mb], data["argument_mask"][mb])
            obs = config.perturb(data["obs"][mb], data["task_len"][mb])
            _, logprob, _, _ = policy.get_action_and_value(obs, masks, data["action"][mb])
            loss = -logprob.mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
            if not hits:  # greedy accuracy on the epoch's first minibatch (cheap progress signal)
                with torch.no_grad():
                    greedy, *_ = policy.get_action_and_value(data["obs"][mb], masks, deterministic=True)
                hits.append((greedy == data["action"][mb]).all(-1).float().mean().item())
        test = common.evaluate_policy(policy, config.env_id, "test", config.eval_curve_episodes, device, seed=10_000,
                                      env_kwargs=config.env_kwargs)
        curve = [(config.total_steps, test["success"])]  # BC's env steps are the recorded expert steps
        for tag, value in (("losses/bc_loss", np.mean(losses)), ("losses/bc_accuracy", np.mean(hits)),
                           ("eval/test_success", test["success"]), ("metrics/tool_reliability", test["tool_reliability"]),
                           ("metrics/success", test["success"]), ("metrics/tokens_used", test["tokens_used"]),
                           ("metrics/cost_reduction", test["cost_reduction"])):
            writer.add_scalar(tag, value, epoch)
        bar.set_postfix(loss=f"{np.mean(losses):.3f}", acc=f"{np.mean(hits):.3f}", test_success=f"{test['success']:.2f}")
        common.save_checkpoint(checkpoint_path, {
            "algo": algo, "config": asdict(config), "policy_spec": policy.spec, "policy": policy.state_dict(),
            "optimizer": optimizer.state_dict(), "epoch": epoch, "global_step": config.total_steps, "curve": curve,
            "elapsed": elapsed + time.time() - start_time, "rng": common.rng_state(),
        })
    wall_time = elapsed + time.time() - start_time
    return ppo.finish(policy, config, device, writer, algo, curve, config.total_steps, wall_time, run_dir)


def run(spec: RunSpec) -> TrainResult:
    """The registry's entry point (``bc``): ``total_steps`` expert steps, then fit."""
    return train(ppo.config_for(spec, "bc", Config), resume=spec.resume)


def finished(checkpoint: str | Path) -> bool:
    """Whether a BC run's checkpoint exists and was written after its last epoch."""
    if not Path(checkpoint).exists():
        return False
    state = common.load_checkpoint(checkpoint)
    return state["epoch"] >= state["config"]["epochs"]


SHARED_WITH_BC = {f.name for f in fields(TokenPolicyFields)} | {"env_kwargs", "progress", "threads"}
"""Overrides of a BC-then-RL run that both stages take: the network and observation layout
(the RL stage loads the BC weights), the env's arguments and the console settings."""


def split_overrides(overrides: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(BC overrides, RL overrides) of a BC-then-RL run: ``bc_<field>`` sets the BC config's
    field (``bc_steps``: its ``total_steps``), :data:`SHARED_WITH_BC` fields go to both stages,
    every other override to the RL stage."""
    bc_overrides = {key: value for key, value in overrides.items() if key in SHARED_WITH_BC}
    rl_overrides = {key: value for key, value in overrides.items() if not key.startswith("bc_")}
    for key, value in overrides.items():
        if key.startswith("bc_"):
            name = key.removeprefix("bc_")
            bc_overrides["total_steps" if name == "steps" else name] = value
    return bc_overrides, rl_overrides


def run_then_rl(spec: RunSpec, algo: str, rl: ModuleType, rl_config: type) -> TrainResult:
    """BC (``bc_steps`` expert steps, default ``Config.total_steps``), then the RL trainer ``rl``
    (:mod:`trainers.ppo` or :mod:`trainers.grpo`, config class ``rl_config``) from the BC
    checkpoint for the rest of ``total_steps``; overrides as :func:`split_overrides` says.
    Run directories: ``<run_dir>/bc`` and ``<run_dir>/<ppo|grpo>``."""
    bc_overrides, rl_overrides = split_overrides(spec.overrides)
    bc_config = ppo.config_for(replace(spec, total_steps=Config.total_steps, overrides=bc_overrides), algo, Config)
    bc_config = replace(bc_config, run_dir=bc_config.run_dir + "/bc")
    bc_steps = bc_config.total_steps
    bc_checkpoint = f"{bc_config.run_dir}/{common.CHECKPOINT_NAME}"
    bc_result = None if spec.resume and finished(bc_checkpoint) else train(bc_config, resume=spec.resume, algo="bc")
    rl_spec = replace(spec, total_steps=max(spec.total_steps - bc_steps, 0), overrides={**rl_overrides, "init_checkpoint": bc_checkpoint})
    config = ppo.config_for(rl_spec, algo, rl_config)
    stage = algo.removeprefix("bc-")
    result = rl.train(replace(config, run_dir=f"{config.run_dir}/{stage}"), resume=spec.resume, algo=algo)
    result.total_steps += bc_steps
    if bc_result is not None:
        result.wall_time_s += bc_result.wall_time_s
    result.curve = [(step + bc_steps, value) for step, value in result.curve]
    result.steps_to_target = first_step_at_target(result.curve, TARGET_SUCCESS)
    return result


def run_then_ppo(spec: RunSpec) -> TrainResult:
    """The registry's ``bc-ppo``: BC, then PPO from the BC checkpoint (see :func:`run_then_rl`)."""
    return run_then_rl(spec, "bc-ppo", ppo, ppo.Config)


def run_then_grpo(spec: RunSpec) -> TrainResult:
    """The registry's ``bc-grpo``: BC, then GRPO from the BC checkpoint (see :func:`run_then_rl`)."""
    return run_then_rl(spec, "bc-grpo", grpo, grpo.Config)


if __name__ == "__main__":
    common.command_line(run, __doc__, Config.total_steps)
