"""Shared fixtures: environments made the way users make them; the micro chat model and a
real OpenAI-compatible server serving it; a real OTLP receiver (Arize Phoenix)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.scenarios.tau2.upstream.errors import Tau2MissingDataError

CS = "AgentGym/CustomerSupport-v0"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """A test that finds a tau2 domain's data missing (a data directory without telecom, say) is
    skipped with the reason, as ``tests/tau2``'s ``require_data`` skips one (failed under CI)."""
    try:
        return (yield)
    except Tau2MissingDataError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"tau2 data missing: {exc}")


@pytest.fixture
def structured_env():
    env = gym.make(CS)
    yield env
    env.close()


@pytest.fixture
def text_env():
    env = gym.make(CS, action_mode="text")
    yield env
    env.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on."""
    return _free_port()


@pytest.fixture(scope="session")
def micro_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the micro chat model, warm-started on a few expert episodes
    (built once per test session, seconds)."""
    pytest.importorskip("transformers")
    from trainers.llm.recipe.build import build_model

    return build_model(tmp_path_factory.mktemp("llm") / "micro", size="micro", device="cpu")


@contextlib.contextmanager
def process_server(argv: list[str], env: dict[str, str], health_url: str, name: str,
                   start_timeout_s: float = 180) -> Iterator[subprocess.Popen]:
    """Run ``argv`` as a server in its own process group until ``health_url`` answers; yield the
    process, then stop the whole group (and check nothing of it is left)."""
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if process.poll() is not None:
                pytest.fail(f"{name} exited: {process.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(health_url, timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} did not answer {health_url} within {start_timeout_s:.0f} s")
                time.sleep(0.5)
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stderr.close()
        if not group_gone(process.pid, within_s=15):  # a helper process the server started may outlive it a moment
            os.killpg(process.pid, signal.SIGKILL)
        assert group_gone(process.pid, within_s=5), f"{name} left processes of its group behind"


def group_gone(pgid: int, within_s: float) -> bool:
    """Whether process group ``pgid`` has no process left, waiting up to ``within_s`` seconds for it."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


@pytest.fixture(scope="session")
def server_process():
    """:func:`process_server`, for fixtures that start servers of their own."""
    return process_server


@contextlib.contextmanager
def serve(model_dir: Path) -> Iterator[str]:
    """``transformers serve`` pinned to ``model_dir`` on 127.0.0.1, offline; yields its ``/v1``
    URL, then stops it with its whole process group."""
    beside = Path(sys.executable).parent / "transformers"  # the venv's, when pytest runs as .venv/bin/python -m pytest
    executable = str(beside) if beside.exists() else shutil.which("transformers")
    if executable is None:
        pytest.skip("transformers serve is not installed (pip install 'transformers[serving]')")
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    url = f"http://127.0.0.1:{port}"
    argv = [executable, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with process_server(argv, env, f"{url}/health", "transformers serve"):
        yield f"{url}/v1"


@pytest.fixture(scope="session")
def serve_model():
    """:func:`serve`, for a fixture that serves a model of its own."""
    return serve


@pytest.fixture(scope="session")
def server(micro_model):
    """``transformers serve`` pinned to the micro model (:func:`serve`), one per test process; its ``/v1`` URL."""
    with serve(micro_model) as url:
        yield url


SUPPORT_RESOLUTIONS = Path(__file__).parent / "data" / "support_resolutions.json"


@pytest.fixture(scope="session")
def support_task_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A task file of the hand-written tickets of ``data/support_resolutions.json``, one per
    case, each with the case's name as its task id."""
    data = json.loads(SUPPORT_RESOLUTIONS.read_text())
    lines = []
    for name, case in data["cases"].items():
        invoices = data["invoices"] + ([data["duplicate"]] if case["kind"] == "refund_request" else [])
        ticket = {"task_id": name, "kind": case["kind"], "issue": case["issue"], "customer": data["customer"],
                  "text": f"Please help with my account. {data['customer']['email']}", "invoices": invoices,
                  "logs": data["logs"]}
        lines.append(json.dumps(ticket) + "\n")
    path = tmp_path_factory.mktemp("support") / "tickets.jsonl"
    path.write_text("".join(lines))
    return str(path)


@pytest.fixture(autouse=True, scope="session")
def run_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rollout store ``agentgym eval`` and ``agentgym train`` record into during the tests
    (AGENTGYM_RUN_STORE), so that no test writes into the checkout's runs/."""
    path = tmp_path_factory.mktemp("store") / "agentgym.db"
    previous = os.environ.get("AGENTGYM_RUN_STORE")
    os.environ["AGENTGYM_RUN_STORE"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("AGENTGYM_RUN_STORE", None)
    else:
        os.environ["AGENTGYM_RUN_STORE"] = previous


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def benchmark_script(monkeypatch: pytest.MonkeyPatch):
    """Import a script of ``benchmarks/`` by name (``benchmark_script("llm_analysis")``), listed
    in ``sys.modules`` while the test runs (a dataclass looks its module up there)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def reference_run(tmp_path: Path):
    """``reference_run(env_id, policy, **env_kwargs)``: the run directory of ``agentgym train --algo
    random|expert`` on ``env_id`` (no training; one final evaluation episode), under ``tmp_path``."""
    from trainers.lifecycle import train
    from trainers.run import TrainRequest

    def run(env_id: str, policy: str, **env_kwargs: object) -> str:
        train(TrainRequest(env_id, algo=policy, total_steps=0, device="cpu", run_root=str(tmp_path), eval_episodes=1,
                           progress=False, record=False, overrides={"env_kwargs": env_kwargs} if env_kwargs else {}))
        return str(tmp_path / f"{env_id.split('/')[-1]}__{policy}__seed0")

    return run


def phoenix_executable() -> str | None:
    """``phoenix`` of the Phoenix environment ``make test`` builds (its dependencies kept apart
    from the project's), or PHOENIX_BIN, or one on PATH."""
    for candidate in (os.environ.get("PHOENIX_BIN"), ROOT / ".venv-phoenix" / "bin" / "phoenix", shutil.which("phoenix")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    return None


class Phoenix(NamedTuple):
    """A running Phoenix: its base URL (OTLP/HTTP at ``/v1/traces``) and OTLP/gRPC port."""

    url: str
    grpc_port: int

    def spans(self, trace_id: str, count: int) -> list[dict]:
        """The spans of ``trace_id`` Phoenix stored, once it holds at least ``count`` of them
        and two reads a second apart agree (Phoenix inserts what it receives in batches)."""
        deadline = time.monotonic() + 60
        previous: list[dict] = []
        while True:
            spans, cursor = [], None
            while True:
                query = f"{self.url}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
                with urllib.request.urlopen(query, timeout=10) as response:
                    page = json.load(response)
                spans += [span for span in page["data"] if span["context"]["trace_id"] == trace_id]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
            if (len(spans) >= count and len(spans) == len(previous)) or time.monotonic() > deadline:
                return spans
            previous = spans
            time.sleep(1.0)


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory) -> Iterator[Phoenix]:
    """``phoenix serve`` on 127.0.0.1 with a fresh working directory, one per test process (the tests
    read back only their own traces). Stopped with its whole process group."""
    executable = phoenix_executable()
    if executable is None:
        pytest.skip("Arize Phoenix is not installed (make test builds .venv-phoenix)")
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_WORKING_DIR": str(tmp_path_factory.mktemp("phoenix")), "PHOENIX_TELEMETRY_ENABLED": "false"}
    url = f"http://127.0.0.1:{port}"
    with process_server([executable, "serve"], env, f"{url}/healthz", "phoenix serve", start_timeout_s=300):
        yield Phoenix(url, grpc_port)
