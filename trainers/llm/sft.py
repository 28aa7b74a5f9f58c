"""Supervised fine-tuning of a Hugging Face causal LM on chat trajectories (``llm-sft``).

Data: JSONL files of ``{"messages": [...], "tools": [...]}`` in the OpenAI chat format, as
the env's :class:`~agentgym_envs.wrappers.recorder.TrajectoryRecorder` writes them (expert
trajectories make the warm start). Each conversation is rendered by the model's own chat
template and cut into pieces (:class:`~trainers.llm.chat.ChatFormat`); the loss is the
next-token cross-entropy on the assistant tokens only (the model's tool calls and their
end-of-turn token), averaged over those tokens.

A conversation longer than ``max_length`` (default: the model's window) is cut to its first
``max_length`` tokens; how many were cut is printed and logged (``llm/truncated_sequences``).

Through the lifecycle (``agentgym train ENV --algo llm-sft --set model=PATH``), ``total_steps``
counts the env steps of the demonstrations learnt from, as for ``bc``: without ``data`` the
env's scripted expert plays whole train-split episodes in text mode until it has taken
``total_steps`` env steps, recorded to ``<run_dir>/expert_train.jsonl``; with ``data``, SFT
learns from the first conversations of the files that hold ``total_steps`` env steps (assistant
turns; all of them when the files hold fewer). Each conversation is seen ``epochs`` times.

    agentgym train math --algo llm-sft --set model=models/agentgym-tiny/base --total-steps 2000
    agentgym train math --algo llm-sft --set model=PATH --set 'data=["trajectories.jsonl"]'
    agentgym train math --algo llm-sft --set model=PATH --set data=store:RUN   # a run's episodes, from the rollout store
    python -m trainers.llm.sft --model models/agentgym-tiny --data expert.jsonl --run-dir runs/sft
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from .. import checkpoints
from ..run import Run, Trained, resolve_device
from . import runtime
from .chat import ChatFormat
from .model import env_steps, read_trajectories, record_expert_trajectories

EXPERT_DATA = "expert_train.jsonl"  # the expert trajectories a lifecycle run without data records

IGNORE = -100


@dataclass
class Config:
    """Every hyper-parameter of an SFT run."""

    model: str = "models/agentgym-tiny"  # a local path or a Hugging Face hub id
    data: list[str] = field(default_factory=list)  # chat JSONL files or store:RUN (lifecycle: none records the expert)
    env_steps: int = 0  # learn from the first conversations holding this many env steps; 0: all
    run_dir: str = "runs/llm-sft"
    seed: int = 0
    device: str = "auto"
    epochs: int = 3
    batch_size: int = 16  # conversations per optimizer step
    micro_batch: int = 8  # conversations per forward pass (gradient accumulation in between)
    learning_rate: float = 3e-3
    warmup_steps: int = 10
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    context_weight: float = 0.0  # > 0: also learn to predict the user and tool turns, at this weight
    max_length: int = 0  # tokens per conversation; 0: the model's window
    lora_rank: int = 0  # > 0: train LoRA adapters only
    checkpoint_every: int = 50  # optimizer steps
    threads: int = 0
    cpu_bf16: bool = False  # bf16 autocast on a CPU with bf16 arithmetic (CUDA always autocasts): runtime.autocast


def encode(fmt: ChatFormat, record: dict[str, Any], max_length: int) -> tuple[list[int], list[int], bool]:
    """``(input_ids, labels, truncated)`` of one conversation: labels are the ids on
    assistant tokens and ``IGNORE`` elsewhere."""
    ids: list[int] = []
    labels: list[int] = []
    for piece in fmt.pieces(record["messages"], record.get("tools")):
        tokens = fmt.encode(piece.text)
        ids += tokens
        labels += tokens if piece.assistant else [IGNORE] * len(tokens)
    truncated = len(ids) > max_length
    return ids[:max_length], labels[:max_length], truncated


def context_labels(fmt: ChatFormat, record: dict[str, Any], ids: list[int], labels: list[int]) -> list[int]:
    """Labels of the conversation's other tokens: the user and tool turns (everything that is
    neither the assistant's nor the system turn with its tool lines), ``IGNORE`` elsewhere.
    Learning to predict them (``Config.context_weight``) teaches a model trained from scratch
    to copy: a tool result repeats the values of the call it answers and of the ticket."""
    messages = record["messages"]
    system = fmt.encode(fmt.render(messages[:1], record.get("tools"))) if messages[0]["role"] == "system" else []
    start = len(system) if ids[: len(system)] == system else len(ids)
    return [IGNORE if i < start or label != IGNORE else token for i, (token, label) in enumerate(zip(ids, labels))]


Row = tuple[list[int], ...]  # (input ids, labels) or (input ids, labels, context labels)


def collate(rows: Sequence[Row], pad_id: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` (already aligned: the
    model shifts them), and ``context_labels`` when the rows hold them."""
    width = max(len(row[0]) for row in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    context = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (ids, labs, *more) in enumerate(rows):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(labs)] = torch.tensor(labs)
        if more:
            context[i, : len(more[0])] = torch.tensor(more[0])
        mask[i, : len(ids)] = 1
    batch = {"input_ids": input_ids.to(device), "attention_mask": mask.to(device), "labels": labels.to(device)}
    if len(rows[0]) > 2:
        batch["context_labels"] = context.to(device)
    return batch


def assistant_loss(network: Any, batch: dict[str, torch.Tensor], prefix: int = 0) -> tuple[torch.Tensor, int]:
    """Summed next-token cross-entropy on the labelled tokens, and how many there are."""
    loss, _, count = sft_loss(network, batch, prefix)
    return loss, count


def sft_loss(network: Any, batch: dict[str, torch.Tensor], prefix: int = 0) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(assistant, context, count)``: the summed next-token cross-entropy on the labelled
    (assistant) tokens, the same on the ``context_labels`` tokens (0 without them), and how
    many labelled tokens there are.

    Logits are computed only where they predict a token with a loss (``logits_to_keep`` as a
    boolean mask): the vocabulary projection of every other position would be thrown away.
    ``prefix`` > 0: the first ``prefix`` tokens are the same in every row and without a loss
    (see :func:`shared_prefix`); they run once and their keys and values serve the whole
    batch, which gives the same loss and gradients for less work."""
    targets = batch["labels"][:, 1:]
    context = batch.get("context_labels")
    context = context[:, 1:] if context is not None else torch.full_like(targets, IGNORE)
    wanted = torch.where(targets != IGNORE, targets, context)
    keep = torch.zeros_like(batch["labels"], dtype=torch.bool)
    keep[:, :-1] = wanted != IGNORE
    ids, mask = batch["input_ids"], batch["attention_mask"]
    if prefix > 0:
        head = network(input_ids=ids[:1, :prefix], use_cache=True, logits_to_keep=1)
        cache = head.cache
        cache.batch_repeat_interleave(ids.shape[0])
        logits = network(input_ids=ids[:, prefix:], attention_mask=mask, cache=cache,
                         logits_to_keep=keep[:, prefix:]).logits
    else:
        logits = network(input_ids=ids, attention_mask=mask, logits_to_keep=keep).logits
    logits = logits.reshape(-1, logits.shape[-1])
    kept = keep[:, :-1]
    losses = torch.nn.functional.cross_entropy(logits.float(), wanted[kept], reduction="none")
    assistant = (targets != IGNORE)[kept]
    return losses[assistant].sum(), losses[~assistant].sum(), int(assistant.sum())


def shared_prefix(rows: Sequence[Row]) -> int:
    """How many leading tokens every row shares and leaves unlabelled, ending before the
    token that predicts the first label (the system turn and tool lines of one env's
    conversations); 0 when that is too short to be worth a separate pass."""
    first = rows[0][0]
    length = min(len(row[0]) for row in rows)
    for ids, *labellings in rows:
        labelled = min(next((i for i, label in enumerate(labels) if label != IGNORE), len(labels))
                       for labels in labellings)
        length = min(length, labelled - 1)
        length = next((i for i in range(length) if ids[i] != first[i]), length)
    return length if length >= MIN_SHARED_PREFIX and len(rows) > 1 else 0


MIN_SHARED_PREFIX = 32


def micro_batches(rows: Sequence[Row], chosen: list[int], size: int) -> list[list[int]]:
    """``chosen`` cut into micro-batches of at most ``size`` rows: rows with the same opening
    (the same env's system turn) together, each group by length (less padding); rows that
    share their opening with no other row go together."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in chosen:
        groups.setdefault(tuple(rows[i][0][:MIN_SHARED_PREFIX]), []).append(i)
    rest = [i for group in groups.values() if len(group) == 1 for i in group]  # no row alike: pooled
    out = []
    for group in [g for g in groups.values() if len(g) > 1] + [rest]:
        group.sort(key=lambda i: len(rows[i][0]))
        out += [group[k: k + size] for k in range(0, len(group), size)]
    return out


def fine_tune(config: Config, resume: bool = False) -> Path:
    """Run SFT on its own (no lifecycle); return the directory of the saved model (``<run_dir>/model``)."""
    run_dir = runtime.prepare_run_dir(config.run_dir, resume)
    state = runtime.load_state(run_dir) if resume else None
    writer = runtime.writer_for(run_dir, state["progress"]["step"] if state is not None else None)
    model_dir, _, _ = learn(config, state, run_dir, writer)
    writer.close()
    return model_dir


def train(run: Run) -> Trained:
    """The lifecycle's entry point (``agentgym train ENV --algo llm-sft --set model=PATH``): SFT on
    ``data``, or on ``run.total_steps`` env steps of expert trajectories recorded first."""
    state = runtime.load_state(run.run_dir) if run.resume else None
    config = replace(run.config(Config), seed=run.seed, device=run.device, run_dir=str(run.run_dir),
                     env_steps=run.total_steps)
    if state is None and not config.data:
        data = record_expert_trajectories(run.run_dir / EXPERT_DATA, [run.env_id], split="train", seed=run.seed * 10**6,
                                          steps=run.total_steps, env_kwargs=run.env_kwargs)
        config = replace(config, data=[str(data)])
    model_dir, steps, seconds = learn(config, state, run.run_dir, run.writer)
    return Trained(runtime.LLMPolicy(run.env_id, model_dir, run.env_kwargs, run.device), steps, [], seconds)


def learn(config: Config, state: dict[str, Any] | None, run_dir: Path, writer: Any) -> tuple[Path, int, float]:
    """The SFT loop (``state``: a checkpoint of ``run_dir`` to continue, whose config it keeps);
    saves the model to ``<run_dir>/model``; returns its directory, the env steps of the
    conversations learnt from and the seconds spent."""
    if state is not None:
        config = Config(**state["config"])
    device = torch.device(resolve_device(config.device))
    checkpoints.seed_everything(config.seed, config.threads)
    network, tokenizer = runtime.load_for_training(config.model, device, config.lora_rank)
    fmt = ChatFormat(tokenizer)
    max_length = config.max_length or runtime.window(network, tokenizer)
    records = first_env_steps(read_trajectories(config.data), config.env_steps)
    encoded = [encode(fmt, record, max_length) for record in records]
    truncated = sum(cut for _, _, cut in encoded)
    if truncated:
        print(f"llm-sft: {truncated} of {len(encoded)} conversations exceed {max_length} tokens; "
              f"each keeps its first {max_length}")
    rows: list[Row] = [(ids, labels) for ids, labels, _ in encoded]
    if config.context_weight > 0:
        rows = [(ids, labels, context_labels(fmt, record, ids, labels)) for (ids, labels), record in zip(rows, records)]
    steps_per_epoch = max(1, len(rows) // config.batch_size)
    total_steps = steps_per_epoch * config.epochs
    optimizer = torch.optim.AdamW([p for p in network.parameters() if p.requires_grad],
                                  lr=config.learning_rate, weight_decay=config.weight_decay)
    def schedule(step):
        return min(1.0, (step + 1) / max(1, config.warmup_steps)) * max(0.0, 1 - step / total_steps)
    step = runtime.restore(state, network, optimizer)["step"] if state is not None else 0
    writer.add_scalar("llm/truncated_sequences", truncated, step)
    network.train()
    start, tokens_seen, losses = time.time(), 0, []
    while step < total_steps:
        epoch, index = divmod(step, steps_per_epoch)
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(config.seed * 1000 + epoch))
        chosen = order[index * config.batch_size: (index + 1) * config.batch_size].tolist()
        for group in optimizer.param_groups:
            group["lr"] = config.learning_rate * schedule(step)
        batches = micro_batches(rows, chosen, config.micro_batch)
        labelled = sum(sum(t != IGNORE for t in rows[i][1][1:]) for i in chosen)
        total_loss = 0.0
        optimizer.zero_grad(set_to_none=True)
        for part in batches:
            batch = collate([rows[i] for i in part], tokenizer.pad_token_id, device)
            with runtime.autocast(device, config.cpu_bf16):
                loss, context, _ = sft_loss(network, batch, shared_prefix([rows[i] for i in part]))
            ((loss + config.context_weight * context) / max(1, labelled)).backward()
            total_loss += float(loss.detach())
            tokens_seen += int(batch["attention_mask"].sum())
        grad_norm = torch.nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
        optimizer.step()
        step += 1
        elapsed = time.time() - start
        losses.append(total_loss / max(1, labelled))
        writer.add_scalar("losses/sft_loss", losses[-1], step)
        writer.add_scalar("losses/grad_norm", float(grad_norm), step)
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
        writer.add_scalar("llm/update_tokens_per_s", tokens_seen / max(elapsed, 1e-9), step)
        if step % config.checkpoint_every == 0 or step == total_steps:
            runtime.save_state(run_dir, network, optimizer, {"step": step}, asdict(config))
    if losses:
        print(f"llm-sft: {step} optimizer steps, loss on assistant tokens {losses[0]:.3f} -> "
              f"{sum(losses[-20:]) / len(losses[-20:]):.3f} (mean of the last 20 steps), "
              f"{tokens_seen / max(time.time() - start, 1e-9):.0f} tokens/s")
    network.eval()
    model_dir = runtime.save_model(network, tokenizer, run_dir / runtime.MODEL_DIR)
    return model_dir, sum(env_steps(record) for record in records), time.time() - start


def first_env_steps(records: list[dict[str, Any]], steps: int) -> list[dict[str, Any]]:
    """The first conversations of ``records`` that hold ``steps`` env steps (all: 0 or fewer held)."""
    if steps <= 0:
        return records
    taken, held = [], 0
    for record in records:
        if held >= steps:
            break
        taken.append(record)
        held += env_steps(record)
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a local model directory or a Hugging Face hub id")
    parser.add_argument("--data", nargs="+", required=True, help="chat JSONL trajectory files")
    parser.add_argument("--run-dir", default=Config.run_dir)
    parser.add_argument("--epochs", type=int, default=Config.epochs)
    parser.add_argument("--learning-rate", type=float, default=Config.learning_rate)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    out = fine_tune(Config(model=args.model, data=args.data, run_dir=args.run_dir, epochs=args.epochs,
                           learning_rate=args.learning_rate, seed=args.seed, device=args.device), resume=args.resume)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
