"""Wrappers: token observations (and task-token dropout for training), a flat Discrete action space, a trajectory recorder."""

from .actions import FlatDiscreteAction
from .recorder import TrajectoryRecorder
from .tokens import PAD_ID, BagOfTokensObservation, TaskTokenDropout, TokenIdsObservation

__all__ = ["PAD_ID", "BagOfTokensObservation", "FlatDiscreteAction", "TaskTokenDropout", "TokenIdsObservation", "TrajectoryRecorder"]
