"""One local Ray (2 CPUs, no dashboard) shared by the tests of this folder, started and shut
down by the session. With pytest-xdist, each module marks its tests ``xdist_group("ray")``, so
that they run in one worker (``--dist loadgroup``)."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
START_ATTEMPTS = 3  # Ray gives its raylet 30 s to register, which a heavily loaded machine can miss


@pytest.fixture(scope="session", autouse=True)
def local_ray():
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024**2)
            break
        except Exception:
            ray.shutdown()
            if attempt == START_ATTEMPTS:
                raise
    yield
    ray.shutdown()
