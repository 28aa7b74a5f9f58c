"""Torch checkpoints: written atomically with ordinary file permissions, read with a clear error,
and the random-number state an exact resume restores."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .run import CheckpointError, current_umask


def save(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` with ``torch.save`` atomically: a temporary file in the same directory,
    flushed to disk, given the permissions a new file gets (the umask's), then renamed over
    ``path`` (a crash leaves the old checkpoint)."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path) -> dict[str, Any]:
    """A checkpoint written by :func:`save`; :class:`CheckpointError` if it is missing, corrupt,
    or not a trainer checkpoint."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): {type(exc).__name__}: {exc}") from exc
    if not isinstance(payload, dict) or "policy_spec" not in payload or "policy" not in payload:
        raise CheckpointError(f"{path} is not an agentgym trainer checkpoint (no policy_spec/policy entries)")
    return payload


def load_weights(module: torch.nn.Module, weights: dict[str, Any], what: str = "the checkpoint") -> None:
    """Load ``weights`` into ``module``; a :class:`CheckpointError` where they do not fit it (a
    checkpoint of another network: other settings, or an env whose spaces have changed since)."""
    try:
        module.load_state_dict(weights)
    except RuntimeError as exc:
        detail = str(exc).strip().splitlines()
        raise CheckpointError(f"{what} does not fit this run's network (trained with other settings, or before the env's "
                              f"spaces changed); train in a new run directory. {' '.join(line.strip() for line in detail[:2])}") from None


def seed_everything(seed: int, threads: int = 0) -> None:
    """Seed python, numpy and torch; ``threads`` > 0 also fixes torch's CPU thread count."""
    if threads > 0:
        torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
