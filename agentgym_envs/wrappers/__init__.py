"""Wrappers: token observations, a flat Discrete action space, a trajectory recorder, expert corrections."""

from .actions import FlatDiscreteAction
from .corrections import ExpertCorrections
from .recorder import TrajectoryRecorder
from .tokens import PAD_ID, BagOfTokensObservation, TokenIdsObservation

__all__ = ["PAD_ID", "BagOfTokensObservation", "ExpertCorrections", "FlatDiscreteAction", "TokenIdsObservation", "TrajectoryRecorder"]
