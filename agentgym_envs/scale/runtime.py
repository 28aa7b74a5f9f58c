"""Connecting to Ray: a local Ray started on demand, or a running cluster."""

from __future__ import annotations

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("scaling out needs Ray: pip install 'agentgym[ray]'") from exc


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect this process to Ray unless it already is.

    ``address=None`` starts a local Ray (with ``num_cpus`` CPUs, default all); ``"auto"`` joins
    the cluster this machine belongs to (``ray start`` ran here); ``"ray://host:10001"`` joins a
    remote one through Ray Client. ``num_cpus`` only applies to a local Ray.
    """
    if ray.is_initialized():
        return
    if address is not None and num_cpus is not None:
        raise ValueError("num_cpus applies to a local Ray only; a cluster has its own resources")
    ray.init(address=address, num_cpus=num_cpus, include_dashboard=False, log_to_driver=True)
