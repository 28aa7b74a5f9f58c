"""Multi-turn episodes of a causal LM in an env's text mode, token-in/token-out.

Every episode keeps one token sequence: the opening prompt (the chat template on the env's
first messages and tool schemas), then per turn the tokens the model sampled, with their
log-probabilities as sampled, and the tokens of the env's reply (the template's rendering
of the new messages). The model's tokens are never decoded and tokenised again: the decoded
text goes to ``env.step`` as written (text mode reads Hermes ``<tool_call>`` blocks, JSON and
the other forms it documents). A rollout engine (:mod:`agentgym_envs.inference.engine`; ``cached`` by
default) decodes the episodes together, as many at once as there are envs: an env whose
episode ends takes the next one.

Context window: before a turn, an episode whose context plus ``max_new_tokens`` would pass
the model's window stops there, unfinished: it counts as unsuccessful, keeps the return it
has, and ``context_overflow`` says so (a warning names how many).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs.inference.engine import Sampling, make_engine

from .chat import ChatFormat

__all__ = ["Episode", "Sampling", "Trajectory", "evaluate_model", "play", "summarize"]


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
    cut_replies: int = 0  # replies cut at max_new_tokens (no end of turn)
    generated: int = 0
    context_overflow: bool = False
    done: bool = False

    def extend(self, ids: Sequence[int], sampled: bool, logprobs: Sequence[float] | None = None) -> None:
        self.token_ids += ids
        self.sampled += [sampled] * len(ids)
        self.logprobs += list(logprobs) if logprobs is not None else [0.0] * len(ids)


class Episode:
    """An episode of ``env`` as an engine decodes it (:class:`~agentgym_envs.inference.engine.Sequence`):
    reset with ``reset_kwargs``; each reply goes to ``env.step`` and the env's answer joins the
    context. ``release(env)`` is called once the episode is over. With ``cut_ends_episode``, a
    reply cut at ``max_new_tokens`` that leaves the episode running ends it there, unfinished."""

    def __init__(self, env: gym.Env, reset_kwargs: dict[str, Any], fmt: ChatFormat, sampling: Sampling, window: int,
                 release: Callable[[gym.Env], None], cut_ends_episode: bool = False) -> None:
        self.env, self.fmt, self.sampling, self.window, self.release = env, fmt, sampling, window, release
        self.cut_ends_episode = cut_ends_episode
        _, info = env.reset(**reset_kwargs)
        self.trajectory = Trajectory(task_id=info["task_id"])
        self.trajectory.extend(fmt.encode(fmt.prompt(info["messages"], env.unwrapped.tool_schemas)), False)
        self.seen = len(info["messages"])  # messages already in the context

    @property
    def tokens(self) -> list[int]:
        return self.trajectory.token_ids

    def next_turn_fits(self) -> bool:
        """Whether a reply still fits the window; if not, the episode ends unfinished here."""
        trajectory = self.trajectory
        if len(trajectory.token_ids) + self.sampling.max_new_tokens <= self.window:
            return True
        trajectory.context_overflow = True
        self._end_unfinished()
        return False

    def turn_done(self, ids: list[int], logprobs: list[float]) -> bool:
        fmt, trajectory = self.fmt, self.trajectory
        trajectory.extend(ids, True, logprobs)
        trajectory.generated += len(ids)
        cut = not ids or ids[-1] != fmt.end_of_turn_id
        if cut:  # cut at max_new_tokens: close the turn for the context
            trajectory.extend([fmt.end_of_turn_id], False)
            trajectory.cut_replies += 1
        text = fmt.tokenizer.decode(ids, skip_special_tokens=False).removesuffix(fmt.end_of_turn)
        _, reward, terminated, truncated, info = self.env.step(text)
        trajectory.episode_return += float(reward)
        trajectory.turns += 1
        trajectory.parse_errors += info["tool_call"] is None
        if terminated or truncated:
            self._end(dict(info["metrics"]))
            return False
        if cut and self.cut_ends_episode:
            self._end_unfinished()
            return False
        messages = info["messages"]
        continuation = fmt.continuation(messages, self.env.unwrapped.tool_schemas, self.seen + 1)
        trajectory.extend(fmt.encode(continuation), False)
        self.seen = len(messages)
        return self.next_turn_fits()

    def _end_unfinished(self) -> None:
        """End the episode before the env did: unsuccessful, with the return so far."""
        self._end({"success": 0.0, "tool_reliability": 0.0, "turns": float(self.trajectory.turns)})

    def _end(self, metrics: dict[str, float]) -> None:
        self.trajectory.done = True
        self.trajectory.metrics = metrics
        self.release(self.env)


def play(network: Any, fmt: ChatFormat, envs: Sequence[gym.Env], resets: Sequence[dict[str, Any]],
         sampling: Sampling, device: torch.device, window: int,
         engine: str = "cached", cut_ends_episode: bool = False) -> tuple[list[Trajectory], dict[str, float]]:
    """Play one episode per entry of ``resets`` (the keyword arguments of its ``reset``), at
    most ``len(envs)`` at once (an env whose episode ends plays the next), decoded by the
    ``engine`` named (:data:`~agentgym_envs.inference.engine.ENGINES`); return the trajectories in the
    order of ``resets`` and the speed (``generated_tokens``, ``seconds`` spent decoding).
    ``cut_ends_episode``: see :class:`Episode`."""
    if resets and not envs:
        raise ValueError("play needs at least one env")
    free = list(reversed(envs))
    trajectories: list[Trajectory] = []

    def episodes() -> Iterator[Episode]:
        for kwargs in resets:
            episode = Episode(free.pop(), kwargs, fmt, sampling, window, free.append, cut_ends_episode)
            trajectories.append(episode.trajectory)
            if episode.next_turn_fits():
                yield episode

    decoder = make_engine(engine, network, device, fmt.tokenizer.pad_token_id, max_batch=len(envs))
    speed = decoder.run(episodes(), sampling, {fmt.end_of_turn_id})
    overflow = sum(t.context_overflow for t in trajectories)
    if overflow:
        warnings.warn(f"{overflow} of {len(trajectories)} episodes stopped unfinished: their context reached the "
                      f"model's window ({window} tokens)", stacklevel=2)
    return trajectories, speed


def summarize(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """Mean episode metrics plus the LLM's own: ``return``, ``parse_error_rate`` (replies
    the env could not read as a tool call, per turn), ``cut_reply_rate`` (replies cut at
    ``max_new_tokens``, per turn), ``response_length`` (tokens per reply), ``context_overflow``
    (share of episodes stopped at the window)."""
    keys = sorted({key for t in trajectories for key in t.metrics})
    summary = {key: float(np.mean([t.metrics.get(key, 0.0) for t in trajectories])) for key in keys}
    turns = sum(t.turns for t in trajectories)
    summary["return"] = float(np.mean([t.episode_return for t in trajectories]))
    summary["parse_error_rate"] = sum(t.parse_errors for t in trajectories) / max(1, turns)
    summary["cut_reply_rate"] = sum(t.cut_replies for t in trajectories) / max(1, turns)
    summary["response_length"] = sum(t.generated for t in trajectories) / max(1, turns)
    summary["context_overflow"] = float(np.mean([t.context_overflow for t in trajectories]))
    summary["episodes"] = float(len(trajectories))
    return summary


def evaluate_model(network: Any, fmt: ChatFormat, env_id: str, split: str, episodes: int, device: torch.device,
                   window: int, seed: int = 0, batch: int = 16, max_new_tokens: int = 96,
                   env_kwargs: dict[str, Any] | None = None, engine: str = "cached") -> dict[str, float]:
    """Greedy-decoding metrics (:func:`summarize`) of the model on ``episodes`` episodes of
    ``split`` seeded ``seed, seed + 1, ...`` (``batch`` at once), plus ``generated_tokens_per_s``."""
    envs = [gym.make(env_id, action_mode="text", split=split, **(env_kwargs or {})) for _ in range(min(batch, episodes))]
    network.eval()
    trajectories, speed = play(network, fmt, envs, [{"seed": seed + k} for k in range(episodes)],
                               Sampling(temperature=0.0, max_new_tokens=max_new_tokens), device, window, engine)
    for env in envs:
        env.close()
    summary = summarize(trajectories)
    summary["generated_tokens_per_s"] = speed["generated_tokens"] / max(speed["seconds"], 1e-9)
    return summary
