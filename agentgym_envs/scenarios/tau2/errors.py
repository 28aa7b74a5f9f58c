"""Exceptions of the tau2 data layer (all are :class:`Tau2DataError`)."""

from __future__ import annotations


class Tau2DataError(ValueError):
    """Base class: the tau2 data (database, tasks, splits) cannot be used as given. A
    ``ValueError``, so that callers that report bad input (the CLI) report it in one line."""


class Tau2MissingDataError(Tau2DataError):
    """No data was found, or a file the data folder should hold does not exist."""


class Tau2FormatError(Tau2DataError):
    """A data file is corrupt or does not follow upstream's schema; the message names the
    file and the problem."""


class Tau2TaskError(Tau2FormatError):
    """A task's reference actions name a tool or argument the domain does not have."""


class Tau2SplitError(Tau2DataError):
    """An unknown split, or a split naming task ids the task file lacks."""
