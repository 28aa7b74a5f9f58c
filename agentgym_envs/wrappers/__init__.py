"""Wrappers: token observations, a flat Discrete action space, a trajectory recorder, expert corrections, a curriculum."""

from .actions import FlatDiscreteAction
from .corrections import ExpertCorrections
from .curriculum import LEVEL_KEY, Curriculum
from .recorder import TrajectoryRecorder
from .tokens import PAD_ID, BagOfTokensObservation, TokenIdsObservation

__all__ = ["LEVEL_KEY", "PAD_ID", "BagOfTokensObservation", "Curriculum", "ExpertCorrections", "FlatDiscreteAction",
           "TokenIdsObservation", "TrajectoryRecorder"]
