"""Connecting to Ray: a local Ray started on demand, or a running cluster."""

from __future__ import annotations

import logging
import time
from typing import Any

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("scaling out needs Ray: pip install 'agentgym-envs[ray]'") from exc

logger = logging.getLogger(__name__)
START_TIMEOUT_S = 120.0  # Ray gives a local node's raylet a fixed 30 s to register, short on a loaded machine


def init_ray(address: str | None = None, num_cpus: int | None = None, *, start_timeout_s: float = START_TIMEOUT_S,
             **options: Any) -> None:
    """Connect this process to Ray unless it already is.

    ``address=None`` starts a local Ray (with ``num_cpus`` CPUs, default all); ``"auto"`` joins
    the cluster this machine belongs to (``ray start`` ran here); ``"ray://host:10001"`` joins a
    remote one through Ray Client. ``num_cpus`` and ``options`` (``ray.init`` keywords, e.g.
    ``object_store_memory``) only apply to a local Ray. A local start that misses Ray's own
    30 s limit (a loaded machine) is tried again until ``start_timeout_s`` have passed; on an
    idle machine the first try succeeds and nothing waits.
    """
    if ray.is_initialized():
        return
    if address is not None and (num_cpus is not None or options):
        raise ValueError("num_cpus and start options apply to a local Ray only; a cluster has its own resources")
    deadline = time.monotonic() + start_timeout_s
    while True:
        try:
            ray.init(address=address, num_cpus=num_cpus, include_dashboard=False, log_to_driver=True, **options)
            return
        except Exception as error:  # Ray raises a bare Exception when its node misses the limit
            ray.shutdown()  # stop what the failed start left running
            if address is not None or time.monotonic() > deadline:
                raise
            logger.warning("the local Ray did not start (%s); starting it again", error)
