"""Wrappers: token observations, a flat Discrete action space, a trajectory recorder."""

from .actions import FlatDiscreteAction
from .recorder import TrajectoryRecorder
from .tokens import PAD_ID, BagOfTokensObservation, TokenIdsObservation

__all__ = ["PAD_ID", "BagOfTokensObservation", "FlatDiscreteAction", "TokenIdsObservation", "TrajectoryRecorder"]
