"""Checks of an env's constructor arguments: a value of the wrong type or range is a clear error
at ``gym.make``, naming the argument, not a crash at ``step`` or a string ``"False"`` read as true."""

from __future__ import annotations

import numbers

import numpy as np


def check_int(name: str, value: object, minimum: int, optional: bool = False) -> None:
    """``value`` is an int (not a bool) >= ``minimum``, or None where ``optional``."""
    if optional and value is None:
        return
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_) and value >= minimum):
        raise ValueError(f"{name} must be {'None or ' if optional else ''}an int >= {minimum}, got {value!r}")


def check_bool(name: str, value: object, optional: bool = False) -> None:
    """``value`` is True or False, or None where ``optional``."""
    if optional and value is None:
        return
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be {'None, ' if optional else ''}True or False, got {value!r}")


def check_limits(mask_repeats: bool, history_turns: int, **limits: int | None) -> None:
    """Reject a limit that is not None or an int >= 1 (``max_turns=-1``, ``"10"``), a history
    length that is not an int >= 0, or a ``mask_repeats`` that is not a bool."""
    for name, value in limits.items():
        check_int(name, value, 1, optional=True)
    check_int("history_turns", history_turns, 0)
    check_bool("mask_repeats", mask_repeats)
