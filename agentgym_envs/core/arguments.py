"""Checks of an env's constructor arguments: a value of the wrong type or range is a clear error
at ``gym.make``, naming the argument, not a crash at ``step`` or a string ``"False"`` read as true."""

from __future__ import annotations

import math
import numbers
import os

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


def check_number(name: str, value: object, minimum: float, above: bool = False) -> None:
    """``value`` is a finite real number (not a bool) >= ``minimum`` (> where ``above``)."""
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_) and math.isfinite(value)
            and (value > minimum if above else value >= minimum)):
        raise ValueError(f"{name} must be a finite number {'>' if above else '>='} {minimum}, got {value!r}")


def check_text(name: str, value: object, optional: bool = False) -> None:
    """``value`` is a str, or None where ``optional``."""
    if not (isinstance(value, str) or optional and value is None):
        raise ValueError(f"{name} must be {'None or ' if optional else ''}a string, got {value!r}")


def check_path(name: str, value: object) -> None:
    """``value`` is None or a path (a str or an ``os.PathLike``)."""
    if not (value is None or isinstance(value, str | os.PathLike)):
        raise ValueError(f"{name} must be None or a path (str or os.PathLike), got {value!r}")


def check_names(name: str, value: object) -> None:
    """``value`` is None or a list or tuple of strings (not one string)."""
    if not (value is None or isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)):
        raise ValueError(f"{name} must be None or a list of strings, got {value!r}")


def check_limits(mask_repeats: bool, history_turns: int, **limits: int | None) -> None:
    """Reject a limit that is not None or an int >= 1 (``max_turns=-1``, ``"10"``), a history
    length that is not an int >= 0, or a ``mask_repeats`` that is not a bool."""
    for name, value in limits.items():
        check_int(name, value, 1, optional=True)
    check_int("history_turns", history_turns, 0)
    check_bool("mask_repeats", mask_repeats)
