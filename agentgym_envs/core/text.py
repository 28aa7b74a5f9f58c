"""The character set of text observations and actions, and sanitising to it."""

from __future__ import annotations

import re

from gymnasium import spaces

# Printable ASCII, newline and tab, Latin-1 letters and common typographic punctuation:
# wide enough for real tickets, names and code, and every observation is kept inside it.
CHARSET: frozenset[str] = frozenset(
    [chr(c) for c in range(32, 127)]
    + ["\n", "\t"]
    + [chr(c) for c in range(0xA0, 0x180)]
    + list("–—‘’“”…•€→←✓")
)
REPLACEMENT = "?"
_OUTSIDE = re.compile("[^" + re.escape("".join(sorted(CHARSET))) + "]")


def sanitize(text: str) -> str:
    """Replace every character outside :data:`CHARSET` with ``?``."""
    if text.isascii() and text.isprintable():  # printable ASCII lies inside the charset: nothing to replace
        return text
    return _OUTSIDE.sub(REPLACEMENT, text)


def text_space(max_length: int) -> spaces.Text:
    """A gymnasium Text space over :data:`CHARSET`."""
    return spaces.Text(max_length=max_length, min_length=0, charset=CHARSET)
