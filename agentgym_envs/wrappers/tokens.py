"""Observation wrappers that turn the text observation into numbers for neural policies.

Both read the episode's segments (task, turns, entity rows) rather than re-tokenizing the
whole text: each segment is tokenized once (cached), so a step costs the new turn only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentgym_envs.core.agent import tool_env
from agentgym_envs.core.arguments import check_int
from agentgym_envs.core.episode import Episode
from agentgym_envs.core.tokens import VOCAB_SIZE, encode, token_array

PAD_ID = VOCAB_SIZE  # one past the last cl100k id


def check_token_layout(context_len: int, entity_len: int) -> None:
    """A clear error for a token layout of no room (a length that is not an int >= 1)."""
    check_int("context_len", context_len, 1)
    check_int("entity_len", entity_len, 1)


def episode_token_ids(episode: Episode, context_len: int, entity_len: int) -> np.ndarray:
    """An episode's view in the :class:`TokenIdsObservation` layout (``context_len +
    max_entities * entity_len`` cl100k ids, padded with :data:`PAD_ID`)."""
    out = np.full(context_len + episode.entities.capacity * entity_len, PAD_ID, dtype=np.int64)
    task = _task_ids(episode, context_len)
    budget = context_len - len(task)
    recent: list[np.ndarray] = []
    for text in reversed(episode.turn_texts):
        ids = _ids(text)
        if len(ids) > budget:
            if not recent:  # the latest turn alone is too long: keep its head
                recent.append(ids[:budget])
            break
        recent.append(ids)
        budget -= len(ids)
    context = np.concatenate([task, *reversed(recent)])
    out[: len(context)] = context
    rows = episode.entities.rows
    if rows:
        out[context_len : context_len + len(rows) * entity_len] = np.concatenate(
            [_row_ids(row.kind, row.text, entity_len) for row in rows]
        )
    return out


def _task_ids(episode: Episode, context_len: int) -> np.ndarray:
    """The context's leading ids: the task prompt, cut to half the context."""
    return _ids(episode.prompt)[: context_len // 2]


@lru_cache(maxsize=65_536)
def _ids(text: str) -> np.ndarray:
    return np.frombuffer(token_array(text), dtype=np.uint32).astype(np.int64)


@lru_cache(maxsize=65_536)
def _row_ids(kind: str, text: str, entity_len: int) -> np.ndarray:
    """An entity row's ids, cut or padded to ``entity_len``."""
    ids = np.full(entity_len, PAD_ID, dtype=np.int64)
    head = encode(f"{kind}: {text}")[:entity_len]
    ids[: len(head)] = head
    return ids


class TokenIdsObservation(gym.ObservationWrapper):
    """Observation -> fixed-length ``Box`` of cl100k token ids, padded with :data:`PAD_ID`.

    Layout, ``context_len + max_entities * entity_len`` ids:

    - ``[0, context_len)``: the task's tokens (at most ``context_len // 2``), then as many of
      the most recent turns as fit, oldest first (history trimmed from the middle; a latest
      turn longer than the room left is cut to its head);
    - then ``entity_len`` ids per entity-table row ``i`` (row ``i`` at
      ``context_len + i * entity_len``), all ``PAD_ID`` for an empty row.

    Policies can therefore point at entity rows by position (see ``trainers/``).

    Adds ``info["task_tokens"]``: how many leading ids are the task prompt's (constant within
    an episode), for augmentations that perturb the prompt only (see ``trainers/augment.py``).
    """

    def __init__(self, env: gym.Env, context_len: int = 256, entity_len: int = 12) -> None:
        check_token_layout(context_len, entity_len)
        super().__init__(env)
        self.base = tool_env(env)
        self.context_len, self.entity_len = context_len, entity_len
        self.max_entities = self.base.scenario.max_entities
        size = context_len + self.max_entities * entity_len
        self.observation_space = spaces.Box(0, PAD_ID, shape=(size,), dtype=np.int64)
        self.task_tokens = 0  # the current episode's task-prompt id count, set by reset

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = super().reset(**kwargs)
        assert self.base.episode is not None
        self.task_tokens = len(_task_ids(self.base.episode, self.context_len))  # fixed for the episode
        return observation, {**info, "task_tokens": self.task_tokens}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        return observation, reward, terminated, truncated, {**info, "task_tokens": self.task_tokens}

    def observation(self, observation: str) -> np.ndarray:
        episode = self.base.episode
        assert episode is not None
        return episode_token_ids(episode, self.context_len, self.entity_len)


def bag_counts(episode: Episode, dim: int) -> np.ndarray:
    """Hashed cl100k token counts (``dim`` buckets) over what the episode's observation shows:
    the task, the last ``history_turns`` turns and the entity rows, counted from scratch."""
    segments = [episode.prompt, *episode.turn_texts[-episode.history_turns :], *episode.entities.row_texts]
    return np.bincount(np.concatenate([_buckets(segment, dim) for segment in segments]), minlength=dim)


@lru_cache(maxsize=65_536)
def _buckets(text: str, dim: int) -> np.ndarray:
    """The hash bucket of each of ``text``'s token ids (each segment hashed once, cached)."""
    return (_ids(text) * 2_654_435_761) % dim


def clear_caches() -> None:
    """Forget every segment tokenized so far (its ids, entity rows and hash buckets; the
    tokenizer's own caches are apart: :func:`agentgym_envs.core.tokens.clear_caches`), so that what runs next
    pays for tokenizing its own texts."""
    for cached in (_ids, _row_ids, _buckets):
        cached.cache_clear()


class BagOfTokensObservation(gym.ObservationWrapper):
    """Observation -> ``Box(float32, (dim,))``: ``log1p`` of hashed cl100k token counts over the
    task, the shown turns and the entity table (:func:`bag_counts`), plus one feature per entity
    row (filled or not). A plain vector, so SB3's ``MlpPolicy`` works unchanged.

    The counts are kept up to date step by step: a step adds the new turn and entity rows and
    removes the turn that leaves the shown history, so its cost does not grow with the episode.
    """

    def __init__(self, env: gym.Env, dim: int = 1024) -> None:
        super().__init__(env)
        self.base = tool_env(env)
        self.dim = dim
        self.max_entities = self.base.scenario.max_entities
        self.observation_space = spaces.Box(0.0, np.inf, shape=(dim + self.max_entities,), dtype=np.float32)
        self._episode: Episode | None = None  # the episode the counts below describe
        self._counts = np.zeros(dim, dtype=np.int64)
        self._turns = self._rows = 0  # how many of its turns and entity rows they have seen

    def observation(self, observation: str) -> np.ndarray:
        episode = self.base.episode
        assert episode is not None
        if episode is not self._episode:  # a new episode: count from scratch
            self._episode, self._counts = episode, bag_counts(episode, self.dim)
        else:
            self._count_new_segments(episode)
        self._turns, self._rows = len(episode.turn_texts), len(episode.entities)
        out = np.zeros(self.observation_space.shape, dtype=np.float32)
        out[: self.dim] = np.log1p(self._counts)
        out[self.dim : self.dim + self._rows] = 1.0
        return out

    def _count_new_segments(self, episode: Episode) -> None:
        """Add the turns that entered the shown history and the new entity rows; remove the turns
        that left the history (the same window as ``turn_texts[-history_turns:]``)."""
        turns, rows = episode.turn_texts, episode.entities.row_texts
        shown_before, shown_now = range(self._turns)[-episode.history_turns :], range(len(turns))[-episode.history_turns :]
        for i in range(shown_before.start, min(shown_now.start, shown_before.stop)):
            np.subtract.at(self._counts, _buckets(turns[i], self.dim), 1)
        for text in [*turns[max(shown_before.stop, shown_now.start) : shown_now.stop], *rows[self._rows :]]:
            np.add.at(self._counts, _buckets(text, self.dim), 1)
