"""Multi-turn GRPO on a Hugging Face causal LM in an env's text mode (``llm-grpo``).

Each update draws ``tasks_per_update`` tasks and plays every task ``group_size`` times (same
``task_id``), all episodes generating together (:mod:`trainers.llm.rollout`). An episode's
advantage is its return normalised within its group, ``(R - mean) / (std + eps)``, and applies
to every token the model sampled in that episode; prompt, tool-result and template tokens are
masked out of the loss. Token-in/token-out: the loss reads the sampled ids and their sampling
log-probs straight from the rollout. The objective is PPO's clipped ratio, summed over sampled
tokens and divided by their count, plus (``kl_coef`` > 0) the k3 estimate of the KL to the
starting model. Groups whose episodes all return the same carry no advantage and are left out
of the update (their env steps still count).

Options: LoRA adapters (``lora_rank``), gradient accumulation (``micro_batch`` episodes per
forward pass), bf16 autocast on CUDA, a checkpoint every ``checkpoint_every`` updates and an
exact ``resume`` (each update's tasks and samples are seeded by ``(seed, update)``). The
training reward is the one the lifecycle gives (the scenario's declared training reward), or
``training_reward``; evaluation uses the env's own. ``total_steps`` counts env steps (tool calls).

    agentgym train math --algo llm-grpo --set model=models/agentgym-tiny --total-steps 2000
    python -m trainers.llm.grpo --model models/agentgym-tiny --env math --total-steps 2000
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs import resolve_env_id

from .. import checkpoints
from ..lifecycle import EVAL_SEED, Trained, canonical_env_id, resolve_device, run_dir_for
from ..torch_policy import EPISODE_METRICS
from . import runtime
from .chat import ChatFormat
from .rollout import Sampling, Trajectory, evaluate_model, play, summarize


@dataclass
class Config:
    """Every hyper-parameter of an LLM GRPO run."""

    model: str = "models/agentgym-tiny"  # a local path or a Hugging Face hub id
    env_id: str = "AgentGym/Math-v0"
    seed: int = 0
    total_steps: int = 2_000  # env steps (tool calls)
    device: str = "auto"
    run_dir: str = "runs/Math-v0__llm-grpo__seed0"
    group_size: int = 8  # episodes per task
    tasks_per_update: int = 4
    temperature: float = 1.0
    max_new_tokens: int = 96  # per reply
    learning_rate: float = 5e-5
    update_epochs: int = 1  # passes over each batch (one optimizer step each)
    micro_batch: int = 8  # episodes per forward pass (gradient accumulation in between)
    clip_coef: float = 0.2
    kl_coef: float = 0.0  # > 0: k3 KL penalty to the starting model
    max_grad_norm: float = 1.0
    lora_rank: int = 0  # > 0: train LoRA adapters only
    training_reward: dict[str, Any] | None = None  # reward_config of the training envs (None: the env's own)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    eval_episodes: int = 100
    checkpoint_every: int = 5  # updates
    threads: int = 0


def group_advantages(returns: np.ndarray, group_size: int, eps: float = 1e-6) -> np.ndarray:
    """``(R - mean(group)) / (std(group) + eps)`` for returns laid out group after group."""
    groups = returns.reshape(-1, group_size)
    return ((groups - groups.mean(1, keepdims=True)) / (groups.std(1, keepdims=True) + eps)).reshape(-1)


def token_batch(trajectories: list[Trajectory], advantages: list[float], pad_id: int,
                device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded ids, attention mask, the sampled-token mask, sampling log-probs and the
    per-token advantage, all aligned with the next-token predictions (position t predicts t+1)."""
    width = max(len(t.token_ids) for t in trajectories)
    n = len(trajectories)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    attention = torch.zeros((n, width), dtype=torch.long)
    sampled = torch.zeros((n, width - 1), dtype=torch.bool)
    old = torch.zeros((n, width - 1))
    adv = torch.zeros((n, width - 1))
    for row, (t, a) in enumerate(zip(trajectories, advantages)):
        length = len(t.token_ids)
        ids[row, :length] = torch.tensor(t.token_ids)
        attention[row, :length] = 1
        sampled[row, : length - 1] = torch.tensor(t.sampled[1:])
        old[row, : length - 1] = torch.tensor(t.logprobs[1:])
        adv[row, : length - 1] = a
    tensors = {"ids": ids, "attention": attention, "sampled": sampled, "old": old, "adv": adv}
    return {k: v.to(device) for k, v in tensors.items()}


def token_logprobs(network: Any, batch: dict[str, torch.Tensor], temperature: float) -> torch.Tensor:
    """Log-probs of each next token under ``network`` at the sampling temperature."""
    logits = network(input_ids=batch["ids"], attention_mask=batch["attention"]).logits[:, :-1].float()
    scale = temperature if temperature > 0 else 1.0
    return torch.log_softmax(logits / scale, dim=-1).gather(-1, batch["ids"][:, 1:, None]).squeeze(-1)


def policy_update(network: Any, reference: Any, optimizer: torch.optim.Optimizer, trajectories: list[Trajectory],
                  advantages: list[float], config: Config, pad_id: int, device: torch.device) -> dict[str, float]:
    """``update_epochs`` optimizer steps of the clipped objective (plus k3 KL) on the sampled
    tokens of ``trajectories``, accumulating gradients over ``micro_batch`` episodes at a
    time; returns the mean ``loss``, ``clipfrac``, ``kl`` and the ``tokens`` processed."""
    count = sum(sum(t.sampled) for t in trajectories)
    stats: dict[str, list[float]] = {"loss": [], "clipfrac": [], "kl": []}
    tokens = 0
    network.train()
    for _ in range(config.update_epochs):
        optimizer.zero_grad(set_to_none=True)
        for first in range(0, len(trajectories), config.micro_batch):
            part = slice(first, first + config.micro_batch)
            batch = token_batch(trajectories[part], advantages[part], pad_id, device)
            mask = batch["sampled"].float()
            with runtime.autocast(device):
                new = token_logprobs(network, batch, config.temperature)
                ratio = torch.exp(new - batch["old"])
                clipped = torch.clamp(ratio, 1 - config.clip_coef, 1 + config.clip_coef)
                loss = -(torch.min(ratio * batch["adv"], clipped * batch["adv"]) * mask).sum()
                if reference is not None:
                    with torch.no_grad():
                        ref = token_logprobs(reference, batch, config.temperature)
                    kl = torch.exp(ref - new) - (ref - new) - 1  # k3
                    loss = loss + config.kl_coef * (kl * mask).sum()
                    stats["kl"].append(float((kl.detach() * mask).sum() / mask.sum()))
            (loss / count).backward()
            stats["loss"].append(float(loss.detach()) / count)
            stats["clipfrac"].append(float((((ratio.detach() - 1).abs() > config.clip_coef).float() * mask).sum() / mask.sum()))
            tokens += int(batch["attention"].sum())
        torch.nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
        optimizer.step()
    out = {name: float(np.mean(values)) for name, values in stats.items() if values}
    out["tokens"] = tokens
    return out


def learn(config: Config, resume: bool, run_dir: Path, writer: Any) -> tuple[Any, int, float]:
    """The GRPO loop (``resume``: continue the checkpoint in ``run_dir`` up to
    ``config.total_steps``); saves the model to ``<run_dir>/model``; returns it, the env steps
    taken and the seconds spent."""
    state = runtime.load_state(run_dir) if resume else None
    if state is not None:  # the checkpoint's config; the caller's total_steps may extend the run
        config = Config(**{**state["config"], "total_steps": config.total_steps})
    env_id = canonical_env_id(config.env_id)
    device = torch.device(resolve_device(config.device))
    checkpoints.seed_everything(config.seed, config.threads)
    network, tokenizer = runtime.load_for_training(config.model, device, config.lora_rank)
    fmt = ChatFormat(tokenizer)
    window = runtime.window(network, tokenizer)
    reference = runtime.load(config.model, device)[0].eval() if config.kl_coef > 0 else None
    if reference is not None:
        reference.requires_grad_(False)
    optimizer = torch.optim.AdamW([p for p in network.parameters() if p.requires_grad], lr=config.learning_rate,
                                  weight_decay=0.0)
    progress = runtime.restore(state, network, optimizer) if state is not None else {"update": 0, "env_steps": 0}
    reward = {"reward_config": config.training_reward} if config.training_reward else {}
    episodes_per_update = config.group_size * config.tasks_per_update
    envs = [gym.make(env_id, action_mode="text", split="train", **config.env_kwargs, **reward)
            for _ in range(episodes_per_update)]
    sampling = Sampling(config.temperature, config.max_new_tokens)
    started = time.time()
    while progress["env_steps"] < config.total_steps:
        update = progress["update"]
        torch.manual_seed(config.seed * 1_000_003 + update)
        task_seeds = np.random.default_rng([config.seed, update]).integers(0, 2**31, config.tasks_per_update)
        task_ids = [envs[0].unwrapped.tasks.sample(np.random.default_rng(int(s))).task_id for s in task_seeds]
        resets = [{"seed": int(s), "options": {"task_id": task}} for s, task in zip(task_seeds, task_ids)
                  for _ in range(config.group_size)]
        network.eval()
        trajectories, speed = play(network, fmt, envs, resets, sampling, device, window)
        returns = np.array([t.episode_return for t in trajectories])
        advantages = group_advantages(returns, config.group_size)
        mixed = np.repeat(np.ptp(returns.reshape(-1, config.group_size), axis=1) > 0, config.group_size)
        learning = np.flatnonzero(mixed).tolist()  # groups with equal returns carry no advantage
        update_start = time.perf_counter()
        chosen = [trajectories[i] for i in learning]
        stats = policy_update(network, reference, optimizer, chosen, [advantages[i] for i in learning], config,
                              tokenizer.pad_token_id, device) if chosen else {"tokens": 0}
        update_seconds = time.perf_counter() - update_start
        progress["update"] += 1
        progress["env_steps"] += sum(t.turns for t in trajectories)
        log_update(writer, progress["env_steps"], summarize(trajectories), speed, update_seconds, stats,
                   len(learning) / len(trajectories))
        if progress["update"] % config.checkpoint_every == 0 or progress["env_steps"] >= config.total_steps:
            runtime.save_state(run_dir, network, optimizer, progress, asdict(config))
    for env in envs:
        env.close()
    network.eval()
    runtime.save_model(network, tokenizer, run_dir / runtime.MODEL_DIR)
    return network, progress["env_steps"], time.time() - started


def train(run: Any) -> Trained:
    """The lifecycle's entry point (``agentgym train ENV --algo llm-grpo --set model=PATH``)."""
    config = replace(run.config(Config), env_id=run.env_id, seed=run.seed, total_steps=run.total_steps,
                     device=run.device, run_dir=str(run.run_dir), env_kwargs=dict(run.env_kwargs),
                     training_reward=run.training_reward)
    _, steps, seconds = learn(config, run.resume, run.run_dir, run.writer)
    policy = runtime.LLMPolicy(run.env_id, run.run_dir / runtime.MODEL_DIR, run.env_kwargs, run.device)
    return Trained(policy, steps, [], seconds)


def train_and_evaluate(config: Config, resume: bool = False) -> dict[str, Any]:
    """GRPO on its own (no lifecycle), then greedy evaluation on both splits: ``{"run_dir",
    "env_steps", "wall_time_s", "train_metrics", "test_metrics"}``."""
    run_dir = runtime.prepare_run_dir(config.run_dir, resume)
    state = runtime.load_state(run_dir) if resume else None
    writer = runtime.writer_for(run_dir, state["progress"]["env_steps"] if state else None)
    network, steps, seconds = learn(config, resume, run_dir, writer)
    writer.close()
    tokenizer = runtime.load(run_dir / runtime.MODEL_DIR)[1]
    fmt, window = ChatFormat(tokenizer), runtime.window(network, tokenizer)
    env_id = canonical_env_id(config.env_id)
    evaluation = {split: evaluate_model(network, fmt, env_id, split, config.eval_episodes, network.device, window,
                                        EVAL_SEED, max_new_tokens=config.max_new_tokens, env_kwargs=config.env_kwargs)
                  for split in ("train", "test")}
    return {"run_dir": str(run_dir), "env_steps": steps, "wall_time_s": seconds,
            "train_metrics": evaluation["train"], "test_metrics": evaluation["test"]}


def log_update(writer: Any, step: int, summary: dict[str, float], speed: dict[str, float], update_seconds: float,
               stats: dict[str, float], learning_share: float) -> None:
    """The same tags as the other trainers (``charts/``, ``metrics/``, ``losses/``) plus ``llm/*``."""
    writer.add_scalar("charts/episodic_return", summary["return"], step)
    for name in EPISODE_METRICS:
        if name in summary:
            writer.add_scalar(f"metrics/{name}", summary[name], step)
    writer.add_scalar("charts/learning_groups", learning_share, step)
    if "loss" in stats:
        writer.add_scalar("losses/policy_loss", stats["loss"], step)
        writer.add_scalar("losses/clipfrac", stats["clipfrac"], step)
    if "kl" in stats:
        writer.add_scalar("llm/kl", stats["kl"], step)
    writer.add_scalar("llm/rollout_tokens_per_s", speed["generated_tokens"] / max(speed["seconds"], 1e-9), step)
    if stats["tokens"]:
        writer.add_scalar("llm/update_tokens_per_s", stats["tokens"] / max(update_seconds, 1e-9), step)
    writer.add_scalar("llm/response_length", summary["response_length"], step)
    writer.add_scalar("llm/parse_error_rate", summary["parse_error_rate"], step)
    writer.add_scalar("llm/context_overflow", summary["context_overflow"], step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a local model directory or a Hugging Face hub id")
    parser.add_argument("--env", default="math")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--total-steps", type=int, default=Config.total_steps)
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    env_id = resolve_env_id(args.env)
    run_dir = args.run_dir or str(run_dir_for("runs", env_id, "llm-grpo", args.seed))
    result = train_and_evaluate(Config(model=args.model, env_id=env_id, seed=args.seed, total_steps=args.total_steps,
                          run_dir=run_dir, device=args.device), resume=args.resume)
    print({k: result[k] for k in ("run_dir", "env_steps", "test_metrics")})


if __name__ == "__main__":
    main()
