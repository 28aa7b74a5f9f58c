"""One local Ray (2 CPUs, no dashboard) shared by the tests of this folder, started and shut
down by the session; with pytest-xdist, each module marks its tests ``xdist_group("ray")`` so that they run in one worker
(``--dist loadgroup``)."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024**2)
    yield
    ray.shutdown()
