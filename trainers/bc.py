"""Behaviour cloning from the scripted expert (the SFT stage).

The expert (:class:`agentgym_envs.evaluation.ExpertPolicy`, or for a team as one env the expert
team's ticket holder) plays train-split episodes; every step's observation, masks and action
are recorded; the policy is trained to maximise the log-probability of the expert's action
under the same masks it will act with. ``total_steps``
is the number of expert environment steps recorded.

Every minibatch is augmented against paraphrase (:mod:`trainers.augment`): task-prompt tokens
are swapped for other prompts' tokens (``task_token_swap``), then hidden (``task_token_dropout``,
and the whole prompt with probability ``task_prompt_dropout``).

``bc-ppo`` / ``bc-grpo`` (the lifecycle's warm start) run this first, then PPO / GRPO from its
checkpoint.

    agentgym train customer_support --algo bc --total-steps 10000
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.multiagent.policies import ExpertTeam
from agentgym_envs.multiagent.wrappers import ActiveAgentEnv
from agentgym_envs.wrappers import FlatDiscreteAction

from . import augment, checkpoints
from .policy import Masks, TokenPolicyFields
from .run import Run, Trained
from .sparse_rows import SparseRows
from .torch_policy import env_factory, initial_policy, trained_policy


@dataclass
class Config(augment.TaskTokenAugmentation, TokenPolicyFields):
    """Every hyper-parameter of a behaviour-cloning run (the augmentation's from
    :class:`~trainers.augment.TaskTokenAugmentation`)."""

    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 1e-3
    max_grad_norm: float = 0.5
    eval_curve_episodes: int = 50
    eval_every_epochs: int = 10  # a learning-curve point every this many epochs, and after the last
    threads: int = 1

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.eval_every_epochs < 1:
            raise ValueError(f"epochs and eval_every_epochs must be at least 1, got {self.epochs} and {self.eval_every_epochs}")


def admitted(action: Any, info: dict[str, Any]) -> bool:
    """Whether the masks in ``info`` let a policy take ``action``: a flat action's joint mask, or a
    structured call's tool and each argument's row (an env without masks admits everything)."""
    if "action_mask" not in info:
        return True
    action = np.asarray(action)
    if action.ndim == 0:
        return bool(info["action_mask"][int(action)])
    tool = int(action[0])
    argument = info.get("argument_mask")
    return bool(info["action_mask"][tool]) and (
        argument is None or all(argument[tool, slot, int(row)] for slot, row in enumerate(action[1:])))


def expert_dataset(env: gym.Env, steps: int, seed: int) -> dict[str, np.ndarray | SparseRows]:
    """``steps`` expert steps on ``env`` (episodes seeded ``seed * 10**6 + n``): ``obs``,
    ``action_mask`` and, where the env gives them, ``argument_mask`` as :class:`SparseRows`
    (mostly zeros), ``action`` and, where the env gives it, ``task_len`` (how many leading context
    ids are the task prompt) as arrays. Through a
    ``FlatDiscreteAction`` the expert's calls are recorded as flat actions (a call the layout
    cannot express ends the recording of its episode). A call the masks rule out (a tau2 expert
    repeats reads that ``mask_repeats`` masks) is played but not recorded: a policy cannot take
    it, and under the mask its log-probability is all but -inf."""
    expert = scripted_expert(env)
    flat = find_wrapper(env, FlatDiscreteAction)
    keys = {"obs": None, "action_mask": "action_mask", "argument_mask": "argument_mask", "task_len": "task_tokens"}
    columns: dict[str, Any] = {"action": []}
    episode = 0
    while len(columns["action"]) < steps:
        observation, info = env.reset(seed=seed * 10**6 + episode)
        done = False
        while not done and len(columns["action"]) < steps:
            action = expert(observation, info)
            if flat is not None and (action := flat.index(action)) is None:
                break
            if admitted(action, info):
                columns["action"].append(np.asarray(action))
                for column, key in keys.items():
                    if key is None or key in info:
                        columns.setdefault(column, [] if column == "task_len" else SparseRows()).append(
                            np.asarray(observation if key is None else info[key]))
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        episode += 1
        if episode == 100 and not columns["action"]:
            raise ValueError("the env's masks rule out every call of the expert's first 100 episodes: nothing to clone")
    return {key: np.stack(values) if isinstance(values, list) else values for key, values in columns.items()}


def scripted_expert(env: gym.Env) -> Callable[[Any, dict[str, Any]], Any]:
    """The scripted expert acting through ``env``: a tool-use env's, or, for a team as one env
    (:class:`~agentgym_envs.multiagent.ActiveAgentEnv`), the expert team's ticket holder."""
    if isinstance(env.unwrapped, ActiveAgentEnv):
        team = ExpertTeam(env.unwrapped.base)
        return lambda observation, info: team(team.env.holder, observation, info)
    try:
        return ExpertPolicy(env)
    except TypeError as exc:
        raise ValueError(f"behaviour cloning needs an env with a scripted expert (an agentgym tool-use env or a team): {exc}") from exc


def find_wrapper(env: gym.Env, kind: type) -> gym.Wrapper | None:
    """The outermost wrapper of type ``kind`` around ``env``, or None."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, kind):
            return env
        env = env.env
    return None


def train(run: Run) -> Trained:
    """Record ``run.total_steps`` expert steps, then fit; a resumed run continues after its last
    finished epoch."""
    config: Config = run.config(Config)
    state = run.resume_state()
    device = run.device
    checkpoints.seed_everything(run.seed, config.threads)
    env = env_factory(run, "train", True, config.context_len, config.entity_len, config.observation,
                      action_capacity=config.action_capacity)()
    started = time.time()
    dataset = expert_dataset(env, run.total_steps, run.seed)
    collect_seconds = time.time() - started

    def batch(key: str, rows: torch.Tensor) -> torch.Tensor:
        """The dataset's ``key`` at ``rows``, dense, on the device."""
        column = dataset[key]
        return torch.as_tensor(column[rows.cpu().numpy()], device=device)

    policy = initial_policy(run, env, config.token_config(), device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate)
    first_epoch, curve, train_seconds = 1, [], collect_seconds
    if state is not None:
        checkpoints.load_weights(policy, state["policy"], f"the checkpoint in {run.run_dir}")
        optimizer.load_state_dict(state["optimizer"])
        first_epoch, curve, train_seconds = state["epoch"] + 1, state["curve"], state["train_seconds"]
        checkpoints.set_rng_state(state["rng"])
        print(f"resumed from {run.checkpoint_path} after epoch {state['epoch']}")
    writer = run.writer
    writer.add_scalar("charts/SPS", run.total_steps / collect_seconds, 0)
    size = len(dataset["action"])
    bar = run.progress_bar(config.epochs, initial=first_epoch - 1, unit="epoch")
    for epoch in range(first_epoch, config.epochs + 1):
        epoch_started = time.time()
        order = torch.randperm(size, device=device)
        losses, hits = [], []
        for start in range(0, size, config.batch_size):
            mb = order[start : start + config.batch_size]
            masks = Masks(batch("action_mask", mb), batch("argument_mask", mb) if "argument_mask" in dataset else None)
            observed, actions = batch("obs", mb), batch("action", mb)
            obs = config.perturb(observed, batch("task_len", mb)) if "task_len" in dataset else observed
            loss = -policy.log_prob(obs, masks, actions).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
            if not hits:  # greedy accuracy on the epoch's first minibatch (cheap progress signal)
                with torch.no_grad():
                    greedy, *_ = policy.get_action_and_value(observed, masks, deterministic=True)
                same = greedy == actions
                hits.append((same.all(-1) if same.ndim > 1 else same).float().mean().item())
        train_seconds += time.time() - epoch_started
        # BC's env steps are the recorded expert steps: one curve point, the latest evaluated epoch's (greedy
        # episodes of both splits: at 100 epochs, evaluating every epoch took most of a tau2 run's cloning time)
        if epoch % config.eval_every_epochs == 0 or epoch == config.epochs:
            point = run.curve_point(trained_policy(run, policy, config), epoch, config.eval_curve_episodes)
            curve = [(run.total_steps, point)]
        writer.add_scalar("losses/bc_loss", np.mean(losses), epoch)
        writer.add_scalar("losses/bc_accuracy", np.mean(hits), epoch)
        bar.update(1)
        bar.set_postfix(loss=f"{np.mean(losses):.3f}", acc=f"{np.mean(hits):.3f}",
                        **({"validation_success": f"{curve[0][1]:.2f}"} if curve else {}))
        run.save_checkpoint({
            "config": asdict(config), "env_kwargs": run.env_kwargs, "policy_spec": policy.spec,
            "policy": policy.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
            "global_step": epoch, "curve": curve, "train_seconds": train_seconds, "rng": checkpoints.rng_state(),
        })
    bar.close()
    return Trained(trained_policy(run, policy, config), run.total_steps, curve, train_seconds)
