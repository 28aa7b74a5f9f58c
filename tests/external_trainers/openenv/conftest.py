"""Servers for the serving tests (agentgym_envs.external_trainers.openenv.local): the real app under uvicorn on
127.0.0.1 and a free port, in a thread of the test process or as a child process (for the tests
that kill it). Every server is stopped by the test or module that started it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentgym_envs.external_trainers.openenv.cli import skip_web_interface  # noqa: E402

skip_web_interface()  # OpenEnv's gradio web interface is not served: seconds of import saved
pytest.importorskip("openenv", reason="the serve extra (openenv) is not installed")

from agentgym_envs.external_trainers.openenv.local import ServerProcess, free_port, thread_server  # noqa: E402


@pytest.fixture
def server_process() -> Iterator[Any]:
    """A factory of :class:`ServerProcess`es, every one killed at the end of the test."""
    started: list[ServerProcess] = []

    def start(env: str, port: int | None = None, *args: str) -> ServerProcess:
        process = ServerProcess(env, port or free_port(), *args)
        started.append(process)
        return process.start()

    yield start
    for process in started:
        process.kill()


@pytest.fixture(scope="module")
def math_server() -> Iterator[str]:
    """One Math-v1 server (the latest) for a module: 3 sessions, a 2 s idle timeout."""
    with thread_server("math", max_sessions=3, idle_timeout_s=2.0, step_timeout_s=10.0) as base:
        yield base
