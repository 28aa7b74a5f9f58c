"""Multi-turn episodes of a causal LM in an env's text mode, token-in/token-out.

Every episode keeps one token sequence: the opening prompt (the chat template on the env's
first messages and tool schemas), then per turn the tokens the model sampled, with their
log-probabilities as sampled, and the tokens of the env's reply (the template's rendering
of the new messages). The model's tokens are never decoded and tokenised again: the decoded
text goes to ``env.step`` as written (text mode reads Hermes ``<tool_call>`` blocks, JSON and
the other forms it documents). Episodes of one batch generate together (left-padded).

Context window: before a turn, an episode whose context plus ``max_new_tokens`` would pass
the model's window stops there, unfinished: it counts as unsuccessful, keeps the return it
has, and ``context_overflow`` says so (a warning names how many).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
import torch

from .chat import ChatFormat


@dataclass
class Trajectory:
    """One episode as the model saw and wrote it."""

    task_id: str = ""
    token_ids: list[int] = field(default_factory=list)
    sampled: list[bool] = field(default_factory=list)  # True: the model wrote this token
    logprobs: list[float] = field(default_factory=list)  # the sampling log-prob (0.0 on env tokens)
    episode_return: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    parse_errors: int = 0
    generated: int = 0
    context_overflow: bool = False
    done: bool = False

    def extend(self, ids: Sequence[int], sampled: bool, logprobs: Sequence[float] | None = None) -> None:
        self.token_ids += ids
        self.sampled += [sampled] * len(ids)
        self.logprobs += list(logprobs) if logprobs is not None else [0.0] * len(ids)


@dataclass(frozen=True)
class Sampling:
    """How replies are drawn: ``temperature`` 0 is greedy."""

    temperature: float = 1.0
    max_new_tokens: int = 96


def left_padded(contexts: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)`` of token lists left-padded to one width, as ``generate`` wants them."""
    width = max(map(len, contexts))
    input_ids = torch.full((len(contexts), width), pad, dtype=torch.long)
    attention = torch.zeros((len(contexts), width), dtype=torch.long)
    for row, ids in enumerate(contexts):
        input_ids[row, width - len(ids):] = torch.tensor(ids)
        attention[row, width - len(ids):] = 1
    return input_ids, attention


def generate(network: Any, fmt: ChatFormat, contexts: list[list[int]], sampling: Sampling,
             device: torch.device) -> list[tuple[list[int], list[float]]]:
    """Sample one reply per context (left-padded batch); each reply ends at the end-of-turn
    token (kept) or at ``max_new_tokens``; with the log-prob of every sampled token under the
    sampling distribution (softmax of logits / temperature)."""
    from transformers import GenerationConfig

    pad = fmt.tokenizer.pad_token_id
    input_ids, attention = left_padded(contexts, pad)
    width = input_ids.shape[1]
    greedy = sampling.temperature <= 0
    config = GenerationConfig(
        max_new_tokens=sampling.max_new_tokens, do_sample=not greedy, temperature=None if greedy else sampling.temperature,
        top_k=0, top_p=1.0,  # explicit: unset values would take the model's defaults (Qwen: top_k 20, top_p 0.8)
        eos_token_id=fmt.end_of_turn_id, pad_token_id=pad,
        output_logits=True, return_dict_in_generate=True,
    )
    with torch.no_grad():
        out = network.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device), generation_config=config)
    new = out.sequences[:, width:].cpu()
    logits = torch.stack(out.logits, dim=1).float().cpu()  # [batch, new tokens, vocab]
    scale = 1.0 if greedy else sampling.temperature
    logprobs = torch.log_softmax(logits / scale, dim=-1).gather(-1, new[:, : logits.shape[1], None]).squeeze(-1)
    replies = []
    for row in range(len(contexts)):
        ids = new[row].tolist()
        end = ids.index(fmt.end_of_turn_id) + 1 if fmt.end_of_turn_id in ids else len(ids)
        replies.append((ids[:end], logprobs[row, :end].tolist()))
    return replies


def play(network: Any, fmt: ChatFormat, envs: Sequence[gym.Env], resets: Sequence[dict[str, Any]],
         sampling: Sampling, device: torch.device, window: int) -> tuple[list[Trajectory], dict[str, float]]:
    """Play one episode in each env (``resets[i]``: the keyword arguments of its ``reset``)
    and return the trajectories and the batch's speed (``generated_tokens``, ``seconds``)."""
    trajectories: list[Trajectory] = []
    seen: list[int] = []  # messages already in each context
    for env, kwargs in zip(envs, resets):
        _, info = env.reset(**kwargs)
        trajectory = Trajectory(task_id=info["task_id"])
        trajectory.extend(fmt.encode(fmt.prompt(info["messages"], env.unwrapped.tool_schemas)), False)
        trajectories.append(trajectory)
        seen.append(len(info["messages"]))
    generated, seconds = 0, 0.0
    while True:
        for trajectory in trajectories:
            if not trajectory.done and len(trajectory.token_ids) + sampling.max_new_tokens > window:
                trajectory.done = trajectory.context_overflow = True
                trajectory.metrics = {"success": 0.0, "tool_reliability": 0.0, "turns": float(trajectory.turns)}
        active = [i for i, t in enumerate(trajectories) if not t.done]
        if not active:
            break
        start = time.perf_counter()
        replies = generate(network, fmt, [trajectories[i].token_ids for i in active], sampling, device)
        seconds += time.perf_counter() - start
        for i, (ids, logprobs) in zip(active, replies):
            trajectory, env = trajectories[i], envs[i]
            trajectory.extend(ids, True, logprobs)
            generated += len(ids)
            trajectory.generated += len(ids)
            if not ids or ids[-1] != fmt.end_of_turn_id:  # cut at max_new_tokens: close the turn for the context
                trajectory.extend([fmt.end_of_turn_id], False)
            text = fmt.tokenizer.decode(ids, skip_special_tokens=False).removesuffix(fmt.end_of_turn)
            _, reward, terminated, truncated, info = env.step(text)
            trajectory.episode_return += float(reward)
            trajectory.turns += 1
            trajectory.parse_errors += info["tool_call"] is None
            if terminated or truncated:
                trajectory.done = True
                trajectory.metrics = dict(info["metrics"])
                continue
            messages = info["messages"]
            continuation = fmt.continuation(messages, env.unwrapped.tool_schemas, seen[i] + 1)
            trajectory.extend(fmt.encode(continuation), False)
            seen[i] = len(messages)
    overflow = sum(t.context_overflow for t in trajectories)
    if overflow:
        warnings.warn(f"{overflow} of {len(trajectories)} episodes stopped unfinished: their context reached the "
                      f"model's window ({window} tokens)", stacklevel=2)
    return trajectories, {"generated_tokens": float(generated), "seconds": seconds}


def summarize(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Mean episode metrics plus the LLM's own: ``return``, ``parse_error_rate`` (replies
    the env could not read as a tool call, per turn), ``response_length`` (tokens per reply),
    ``context_overflow`` (share of episodes stopped at the window)."""
    keys = sorted({key for t in trajectories for key in t.metrics})
    summary = {key: float(np.mean([t.metrics.get(key, 0.0) for t in trajectories])) for key in keys}
    turns = sum(t.turns for t in trajectories)
    summary["return"] = float(np.mean([t.episode_return for t in trajectories]))
    summary["parse_error_rate"] = sum(t.parse_errors for t in trajectories) / max(1, turns)
    summary["response_length"] = sum(t.generated for t in trajectories) / max(1, turns)
    summary["context_overflow"] = float(np.mean([t.context_overflow for t in trajectories]))
    summary["episodes"] = float(len(trajectories))
    return summary


def evaluate_model(network: Any, fmt: ChatFormat, env_id: str, split: str, episodes: int, device: torch.device,
                   window: int, seed: int = 0, batch: int = 16, max_new_tokens: int = 96,
                   env_kwargs: dict[str, Any] | None = None) -> dict[str, float]:
    """Greedy-decoding metrics (:func:`summarize`) of the model on ``episodes`` episodes of
    ``split`` seeded ``seed, seed + 1, ...``, plus ``generated_tokens_per_s``."""
    envs = [gym.make(env_id, action_mode="text", split=split, **(env_kwargs or {})) for _ in range(min(batch, episodes))]
    trajectories, generated, seconds = [], 0.0, 0.0
    network.eval()
    for first in range(0, episodes, len(envs)):
        count = min(len(envs), episodes - first)
        played, speed = play(network, fmt, envs[:count], [{"seed": seed + first + k} for k in range(count)],
                             Sampling(temperature=0.0, max_new_tokens=max_new_tokens), device, window)
        trajectories += played
        generated += speed["generated_tokens"]
        seconds += speed["seconds"]
    for env in envs:
        env.close()
    summary = summarize(trajectories)
    summary["generated_tokens_per_s"] = generated / max(seconds, 1e-9)
    return summary
