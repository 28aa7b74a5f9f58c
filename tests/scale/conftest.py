"""One local Ray (2 CPUs, no dashboard, a small object store) shared by the tests of this
folder, started and shut down by the session. Its start is retried for up to two minutes on a
loaded machine (:func:`agentgym_envs.scale.init_ray`), and takes one try on an idle one. With
pytest-xdist (``--dist loadfile``), each worker that runs a module of this folder starts its own."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session", autouse=True)
def local_ray():
    from agentgym_envs.scale import init_ray

    init_ray(num_cpus=2, start_timeout_s=120, object_store_memory=100 * 1024**2)
    yield
    ray.shutdown()
