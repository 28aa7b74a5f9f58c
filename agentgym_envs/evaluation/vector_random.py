"""A random policy for vector envs that sees only the masks in ``info`` (``RandomPolicy`` reads
the env itself, which a vector env's sub-environments in other processes or machines hide)."""

from __future__ import annotations

import numpy as np


def masked_random_actions(masks: np.ndarray, nvec: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``masks`` (a vector env's ``info["action_mask"]``: each sub-env's
    per-dimension masks concatenated), each dimension drawn uniformly among the values its mask
    allows, for a ``MultiDiscrete(nvec)`` action space."""
    bounds = np.cumsum(nvec)[:-1]
    return np.array([[rng.choice(np.flatnonzero(part)) for part in np.split(mask, bounds)] for mask in masks],
                    dtype=np.int64)
