"""Fixtures of the coding tests."""

from __future__ import annotations

import contextlib
import os

import pytest

from agentgym_envs.scenarios.coding import sandbox


def _files_of(uids: set[int]) -> list[str]:
    found = []
    for directory in sandbox.WORLD_WRITABLE_DIRS:
        with contextlib.suppress(OSError):
            found += [e.path for e in os.scandir(directory) if e.stat(follow_symlinks=False).st_uid in uids]
    return found


@pytest.fixture
def machine_unchanged(monkeypatch):
    """Record the uids this test's sandboxes use; check they left nothing behind."""
    used: set[int] = set()
    pick = sandbox._pick_uid

    def recording_pick() -> int:
        uid = pick()
        used.add(uid)
        return uid

    monkeypatch.setattr(sandbox, "_pick_uid", recording_pick)
    fds_before = len(os.listdir("/proc/self/fd"))
    yield
    assert sandbox.sandbox_processes(used) == []
    assert _files_of(used) == []
    assert len(os.listdir("/proc/self/fd")) == fds_before
