"""Served envs on this machine: the app under uvicorn on 127.0.0.1 and a free port, in a thread
(:func:`thread_server`) or as a child process (:class:`ServerProcess`), and a small HTTP helper.
The tests and ``benchmarks/serve_load.py`` start their servers with these."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn

from .app import MAX_BODY_BYTES, build_app

ROOT = Path(__file__).resolve().parents[2]  # the folder holding agentgym_envs, for the child's PYTHONPATH


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(base: str, path: str, body: Any = None, method: str | None = None, raw: bytes | None = None,
         timeout: float = 30.0, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """``(status, JSON answer)`` of one request; error statuses are returned, not raised."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base + path, data=data, method=method or ("GET" if data is None else "POST"),
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def active_sessions(base: str) -> int:
    return http(base, "/sessions")[1]["active_sessions"]


def wait_until(condition: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return bool(condition())


@contextlib.contextmanager
def thread_server(env: str, **app_kwargs: Any) -> Iterator[str]:
    """The app for ``env`` under uvicorn in a thread; yields its base URL."""
    with serve_in_thread(build_app(env, **app_kwargs)) as base:
        yield base


@contextlib.contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 and a free port, in a thread, until the block ends."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning",
                                           ws_max_size=MAX_BODY_BYTES))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: server.started, 30), "the server did not start"
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(30)


class ServerProcess:
    """``python -m agentgym_envs.external_trainers.openenv`` as a child process on a fixed port."""

    def __init__(self, env: str, port: int, *args: str) -> None:
        self.command = [sys.executable, "-m", "agentgym_envs.external_trainers.openenv", env, "--port", str(port), *args]
        self.base = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> ServerProcess:
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)

        def healthy() -> bool:
            assert self.process is not None and self.process.poll() is None, self.process.stderr.read().decode()
            with contextlib.suppress(OSError):
                return http(self.base, "/health", timeout=1)[0] == 200
            return False

        assert wait_until(healthy, timeout, 0.1), "the server process did not answer /health"
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
