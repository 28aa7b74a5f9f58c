"""Subword features of cl100k tokens, fastText style: each token's lower-cased, space-stripped
text as ``<word>`` plus its character 3- to 5-grams, hashed into a fixed number of buckets.

A token never seen in training then still shares features with the tokens it resembles
(" passphrase" with " password", " forgotten" with " forgot", "Locked" with " locked").
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import numpy as np

from agentgym_envs.core.tokens import VOCAB_SIZE, encoding

NGRAM_SIZES = (3, 4, 5)
MAX_FEATURES = 24  # per token: the whole word, then n-grams in order (long tokens are cut)


def token_features(text: str, buckets: int) -> list[int]:
    """The feature buckets of one token's text: ``<word>`` first, then its distinct n-grams
    (none for a whitespace-only token)."""
    word = text.strip().lower()
    if not word:
        return []
    marked = f"<{word}>"
    grams = [marked] + [marked[i : i + n] for n in NGRAM_SIZES for i in range(len(marked) - n + 1) if n < len(marked)]
    unique = list(dict.fromkeys(grams))[:MAX_FEATURES]
    return [zlib.crc32(g.encode()) % buckets for g in unique]


@lru_cache(maxsize=4)
def feature_table(buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """``(features [VOCAB_SIZE + 1, MAX_FEATURES] int64, weights [same] float32)`` for every cl100k
    id (the last row is PAD): a token's features are padded with bucket ``buckets`` (weight 0);
    its real features weigh ``1 / count``, so a token's subword vector is the mean of its features."""
    features = np.full((VOCAB_SIZE + 1, MAX_FEATURES), buckets, dtype=np.int64)
    weights = np.zeros((VOCAB_SIZE + 1, MAX_FEATURES), dtype=np.float32)
    enc = encoding()
    for token in range(VOCAB_SIZE):
        try:
            text = enc.decode_single_token_bytes(token).decode("utf-8", errors="ignore")
        except KeyError:  # an unassigned id between the ranks and the special tokens
            continue
        row = token_features(text, buckets)
        features[token, : len(row)] = row
        weights[token, : len(row)] = 1.0 / max(len(row), 1)
    return features, weights
