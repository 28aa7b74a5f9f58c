"""Multi-turn GRPO on a Hugging Face causal LM in an env's text mode (``llm-grpo``).

Each update draws ``tasks_per_update`` tasks through the env contract (a seeded reset reports
``info["task_id"]``) and plays every task ``group_size`` times (``options={"task_id": ...}``),
all episodes generating together (:mod:`trainers.llm.rollout`, decoded by ``rollout_engine``). An episode's advantage is its
return minus its group's mean, divided by the group's std unless ``scale_advantages`` is off,
and applies to every token the model sampled in that episode; prompt, tool-result and template
tokens are masked out of the loss. Token-in/token-out: the loss reads the sampled ids and their
sampling log-probs straight from the rollout. The objective is PPO's clipped ratio per sampled
token (``clip_coef`` below 1, ``clip_coef_high`` above: DAPO's clip-higher), plus
(``kl_coef`` > 0) the k3 estimate of the KL to the starting model, aggregated by
``loss_aggregation``: ``token-mean`` (every sampled token of the batch weighs the same, DAPO),
``sequence-mean`` (each episode's tokens averaged first, the original GRPO) or ``constant``
(summed and divided by episodes x ``max_new_tokens``, Dr. GRPO). Groups whose episodes all
return the same carry no advantage and are left out of the update; with ``dynamic_sampling``
new tasks are drawn in their place (up to ``max_sampling_rounds`` rounds of play per update).
Their env steps count either way. ``docs/algorithms/llm_grpo.md`` gives the defaults and their sources.

Options: LoRA adapters (``lora_rank``), gradient accumulation (``micro_batch`` episodes per
forward pass), bf16 autocast on CUDA, a checkpoint every ``checkpoint_every`` updates and an
exact ``resume`` (each update's tasks and samples are seeded by ``(seed, update)``). The
training reward is the one the lifecycle gives (the scenario's declared training reward), or
``training_reward``; evaluation uses the env's own. ``total_steps`` counts env steps (tool calls).

    agentgym train math --algo llm-grpo --set model=models/agentgym-tiny --total-steps 2000
    agentgym train math --algo llm-grpo --set model=PATH --set train_tasks=store:RUN   # the tasks a run played
    python -m trainers.llm.grpo --model models/agentgym-tiny --env math --total-steps 2000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs import resolve_env_id
from agentgym_envs.inference.engine import ENGINES
from agentgym_envs.observe import store

from .. import checkpoints
from ..grpo import draw_task, group_advantages
from ..run import EVAL_SEED, Trained, canonical_env_id, hyperparameter_table, resolve_device, run_dir_for
from ..torch_policy import EPISODE_METRICS
from . import runtime
from .chat import ChatFormat
from .rollout import Sampling, Trajectory, evaluate_model, play, summarize

LOSS_AGGREGATIONS = ("token-mean", "sequence-mean", "constant")


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
    # True: a reply cut at max_new_tokens ends its episode, unfinished (return so far, success 0): a reply that does
    # not end is what sank greedy evaluation on unseen values, while a sampled episode goes on after one
    cut_reply_ends_episode: bool = False
    rollout_engine: str = "cached"  # "cached" (KV cache, continuous batching) | "generate" (transformers generate)
    learning_rate: float = 5e-5
    update_epochs: int = 1  # passes over each batch (one optimizer step each)
    micro_batch: int = 8  # episodes per forward pass (gradient accumulation in between)
    loss_aggregation: str = "token-mean"  # "token-mean" (DAPO) | "sequence-mean" (GRPO) | "constant" (Dr. GRPO)
    scale_advantages: bool = True  # divide by the group's return std (False: Dr. GRPO)
    clip_coef: float = 0.2  # the ratio is clipped at 1 - clip_coef (and 1 + clip_coef unless clip_coef_high)
    clip_coef_high: float | None = None  # upper clip 1 + clip_coef_high (DAPO's clip-higher: 0.28)
    dynamic_sampling: bool = False  # draw new tasks in place of groups whose returns are all equal
    max_sampling_rounds: int = 4  # rounds of play per update at most (dynamic_sampling)
    kl_coef: float = 0.0  # > 0: k3 KL penalty to the starting model
    max_grad_norm: float = 1.0
    lora_rank: int = 0  # > 0: train LoRA adapters only
    training_reward: dict[str, Any] | None = None  # reward_config of the training envs (None: the env's own)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    train_task_file: str | None = None  # the training envs play this task file instead of the train split
    train_tasks: str | None = None  # store:RUN[@PATH]: play the task ids of that run's episodes (the rollout store)
    eval_episodes: int = 100
    checkpoint_every: int = 5  # updates
    threads: int = 0

    def __post_init__(self) -> None:
        if self.loss_aggregation not in LOSS_AGGREGATIONS:
            raise ValueError(f"loss_aggregation must be one of {LOSS_AGGREGATIONS}, not {self.loss_aggregation!r}")
        if self.rollout_engine not in ENGINES:
            raise ValueError(f"rollout_engine must be one of {ENGINES}, not {self.rollout_engine!r}")
        if self.max_sampling_rounds < 1:
            raise ValueError("max_sampling_rounds must be at least 1")

    @property
    def clip_range(self) -> tuple[float, float]:
        """The ratio's clip interval ``(1 - low, 1 + high)``."""
        high = self.clip_coef if self.clip_coef_high is None else self.clip_coef_high
        return 1.0 - self.clip_coef, 1.0 + high

    @property
    def sampling(self) -> Sampling:
        return Sampling(self.temperature, self.max_new_tokens)


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


def token_logprobs(network: Any, batch: dict[str, torch.Tensor], temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs of each sampled token under ``network`` at the sampling temperature, and the
    entropy of that distribution there; both [rows, positions], 0 where nothing was sampled.
    Logits are computed only at the positions that predict a sampled token (``logits_to_keep``
    as a boolean mask): the vocabulary projection elsewhere would be thrown away."""
    sampled = batch["sampled"]
    keep = torch.zeros_like(batch["ids"], dtype=torch.bool)
    keep[:, :-1] = sampled
    logits = network(input_ids=batch["ids"], attention_mask=batch["attention"], logits_to_keep=keep).logits
    scale = temperature if temperature > 0 else 1.0
    logp = torch.log_softmax(logits.reshape(-1, logits.shape[-1]).float() / scale, dim=-1)
    chosen = logp.gather(-1, batch["ids"][:, 1:][sampled][:, None]).squeeze(-1)
    logprobs = torch.zeros(sampled.shape, dtype=chosen.dtype, device=chosen.device)
    entropy = torch.zeros_like(logprobs)
    logprobs = logprobs.masked_scatter(sampled, chosen)
    entropy = entropy.masked_scatter(sampled, -(logp.exp() * logp).sum(-1))
    return logprobs, entropy


def clipped_token_loss(new: torch.Tensor, old: torch.Tensor, advantages: torch.Tensor,
                       clip_range: tuple[float, float]) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's pessimistic clipped term per token, ``-min(r A, clip(r, low, high) A)`` with
    ``r = exp(new - old)`` (to minimise), and where the clip bounds the ratio."""
    ratio = torch.exp(new - old)
    low, high = clip_range
    loss = -torch.min(ratio * advantages, torch.clamp(ratio, low, high) * advantages)
    return loss, (ratio < low) | (ratio > high)


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, how: str, episodes: int, tokens: int,
              constant: int) -> torch.Tensor:
    """This micro-batch's share of the batch loss: ``per_token`` [rows, positions] over the
    ``mask``ed (sampled) tokens, for a batch of ``episodes`` episodes holding ``tokens`` sampled
    tokens. ``token-mean``: sum / tokens; ``sequence-mean``: per row sum / row tokens, summed,
    / episodes; ``constant``: sum / (episodes * constant)."""
    masked = per_token * mask
    if how == "token-mean":
        return masked.sum() / tokens
    if how == "sequence-mean":
        return (masked.sum(1) / mask.sum(1).clamp(min=1)).sum() / episodes
    return masked.sum() / (episodes * constant)


def policy_update(network: Any, reference: Any, optimizer: torch.optim.Optimizer, trajectories: list[Trajectory],
                  advantages: list[float], config: Config, pad_id: int, device: torch.device) -> dict[str, float]:
    """``update_epochs`` optimizer steps of the clipped objective (plus k3 KL) on the sampled
    tokens of ``trajectories``, accumulating gradients over ``micro_batch`` episodes at a
    time; returns the means of ``loss``, ``clipfrac`` (share of sampled tokens whose ratio
    was clipped), ``entropy`` (of the policy at the sampled positions), ``kl`` (with a
    reference) and the ``tokens`` processed."""
    episodes, sampled_tokens = len(trajectories), sum(sum(t.sampled) for t in trajectories)
    sums = {"loss": 0.0, "clipfrac": 0.0, "entropy": 0.0, "kl": 0.0}
    tokens = 0
    network.train()
    for _ in range(config.update_epochs):
        optimizer.zero_grad(set_to_none=True)
        for first in range(0, len(trajectories), config.micro_batch):
            part = slice(first, first + config.micro_batch)
            batch = token_batch(trajectories[part], advantages[part], pad_id, device)
            mask = batch["sampled"].float()
            with runtime.autocast(device):
                new, entropy = token_logprobs(network, batch, config.temperature)
                per_token, clipped = clipped_token_loss(new, batch["old"], batch["adv"], config.clip_range)
                if reference is not None:
                    with torch.no_grad():
                        ref, _ = token_logprobs(reference, batch, config.temperature)
                    kl = torch.exp(ref - new) - (ref - new) - 1  # k3
                    per_token = per_token + config.kl_coef * kl
                    sums["kl"] += float((kl.detach() * mask).sum())
                loss = aggregate(per_token, mask, config.loss_aggregation, episodes, sampled_tokens,
                                 config.max_new_tokens)
            loss.backward()
            sums["loss"] += float(loss.detach())
            sums["clipfrac"] += float((clipped.float() * mask).sum())
            sums["entropy"] += float((entropy.detach() * mask).sum())
            tokens += int(batch["attention"].sum())
        torch.nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
        optimizer.step()
    per_token_means = {name: sums[name] / (sampled_tokens * config.update_epochs)
                       for name in ("clipfrac", "entropy", "kl")}
    out = {"loss": sums["loss"] / config.update_epochs, **per_token_means, "tokens": tokens}
    if reference is None:
        del out["kl"]
    return out


def play_groups(network: Any, fmt: ChatFormat, envs: list[gym.Env], config: Config, rng: np.random.Generator,
                device: torch.device, window: int, pool: Sequence[str] = ()
                ) -> tuple[list[Trajectory], list[Trajectory], np.ndarray, dict[str, float]]:
    """One update's episodes: ``tasks_per_update`` tasks drawn with ``rng`` (from the task ids of
    ``pool`` when given, else by a seeded reset), each played
    ``group_size`` times; with ``dynamic_sampling``, tasks whose group returned all the same are
    replaced by new ones for up to ``max_sampling_rounds`` rounds. Returns every episode played,
    the episodes of the groups that learn, their advantages, and counts (``generated_tokens``,
    ``seconds``, ``skipped_groups``, ``sampling_rounds``)."""
    size = config.group_size
    played: list[Trajectory] = []
    learning: list[Trajectory] = []
    advantages: list[np.ndarray] = []
    counts = {"generated_tokens": 0.0, "seconds": 0.0, "skipped_groups": 0.0, "sampling_rounds": 0.0}
    rounds = config.max_sampling_rounds if config.dynamic_sampling else 1
    for _ in range(rounds):
        wanted = config.tasks_per_update - len(learning) // size
        if wanted == 0:
            break
        seeds = [int(s) for s in rng.integers(0, 2**31, wanted)]
        resets = [{"seed": s, "options": {"task_id": pool[s % len(pool)] if pool else draw_task(envs[0], s)}}
                  for s in seeds for _ in range(size)]
        trajectories, speed = play(network, fmt, envs[: len(resets)], resets, config.sampling, device, window,
                                   config.rollout_engine, config.cut_reply_ends_episode)
        played += trajectories
        counts["generated_tokens"] += speed["generated_tokens"]
        counts["seconds"] += speed["seconds"]
        counts["sampling_rounds"] += 1
        returns = np.array([t.episode_return for t in trajectories]).reshape(wanted, size)
        for group, group_returns in enumerate(returns):
            if np.ptp(group_returns) == 0:
                counts["skipped_groups"] += 1
                continue
            learning += trajectories[group * size:(group + 1) * size]
            advantages.append(group_advantages(group_returns, config.scale_advantages))
    flat = np.concatenate(advantages) if advantages else np.zeros(0)
    return played, learning, flat, counts


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
    envs = training_envs(config, env_id)
    pool = store.task_ids(config.train_tasks) if config.train_tasks else []
    if state is None:
        writer.add_text("hyperparameters", hyperparameter_table(asdict(config)))
    started = time.time()
    while progress["env_steps"] < config.total_steps:
        update = progress["update"]
        torch.manual_seed(config.seed * 1_000_003 + update)
        network.eval()
        played, learning, advantages, counts = play_groups(network, fmt, envs, config,
                                                           np.random.default_rng([config.seed, update]), device, window,
                                                           pool)
        update_start = time.perf_counter()
        stats = policy_update(network, reference, optimizer, learning, advantages.tolist(), config,
                              tokenizer.pad_token_id, device) if learning else {"tokens": 0}
        update_seconds = time.perf_counter() - update_start
        progress["update"] += 1
        progress["env_steps"] += sum(t.turns for t in played)
        log_update(writer, progress["env_steps"], summarize(played), counts, update_seconds, stats,
                   len(learning) / len(played))
        if progress["update"] % config.checkpoint_every == 0 or progress["env_steps"] >= config.total_steps:
            runtime.save_state(run_dir, network, optimizer, progress, asdict(config))
    for env in envs:
        env.close()
    network.eval()
    runtime.save_model(network, tokenizer, run_dir / runtime.MODEL_DIR)
    return network, progress["env_steps"], time.time() - started


def training_envs(config: Config, env_id: str) -> list[gym.Env]:
    """One text-mode env per episode of an update, on the train split (or the tasks of
    ``train_task_file``) with the training reward; evaluation always plays the env's splits."""
    options: dict[str, Any] = {"reward_config": config.training_reward} if config.training_reward else {}
    if config.train_task_file:
        options["task_file"] = config.train_task_file
    return [gym.make(env_id, action_mode="text", split="train", **config.env_kwargs, **options)
            for _ in range(config.group_size * config.tasks_per_update)]


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
                                        EVAL_SEED, max_new_tokens=config.max_new_tokens, env_kwargs=config.env_kwargs,
                                        engine=config.rollout_engine)
                  for split in ("train", "test")}
    return {"run_dir": str(run_dir), "env_steps": steps, "wall_time_s": seconds,
            "train_metrics": evaluation["train"], "test_metrics": evaluation["test"]}


def log_update(writer: Any, step: int, summary: dict[str, float], counts: dict[str, float], update_seconds: float,
               stats: dict[str, float], learning_share: float) -> None:
    """The same tags as the other trainers (``charts/``, ``metrics/``, ``losses/``) plus ``llm/*``."""
    writer.add_scalar("charts/episodic_return", summary["return"], step)
    for name in EPISODE_METRICS:
        if name in summary:
            writer.add_scalar(f"metrics/{name}", summary[name], step)
    writer.add_scalar("charts/learning_groups", learning_share, step)
    writer.add_scalar("charts/skipped_groups", counts["skipped_groups"], step)
    writer.add_scalar("charts/sampling_rounds", counts["sampling_rounds"], step)
    for name in ("loss", "clipfrac", "entropy"):
        if name in stats:
            writer.add_scalar(f"losses/{'policy_loss' if name == 'loss' else name}", stats[name], step)
    if "kl" in stats:
        writer.add_scalar("llm/kl", stats["kl"], step)
    writer.add_scalar("llm/rollout_tokens_per_s", counts["generated_tokens"] / max(counts["seconds"], 1e-9), step)
    if stats["tokens"]:
        writer.add_scalar("llm/update_tokens_per_s", stats["tokens"] / max(update_seconds, 1e-9), step)
    writer.add_scalar("llm/response_length", summary["response_length"], step)
    writer.add_scalar("llm/parse_error_rate", summary["parse_error_rate"], step)
    writer.add_scalar("llm/cut_reply_rate", summary["cut_reply_rate"], step)
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
