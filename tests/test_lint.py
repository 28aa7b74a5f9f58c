"""The checks CI runs on the code itself: the import layers (import-linter's contracts in
pyproject.toml) and ruff's lint rules. Each fails with the tool's own report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tool(name: str) -> str:
    """The tool installed beside this Python (the project's environment), else on PATH."""
    here = Path(sys.executable).with_name(name)
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def run(command: list[str]) -> subprocess.CompletedProcess:
    # this checkout's packages, whatever is installed in editable mode
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_imports_keep_to_the_layers():
    result = run([tool("lint-imports"), "--no-cache"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_finds_nothing():
    result = run([tool("ruff"), "check", "--no-cache", "agentgym_envs", "trainers", "benchmarks", "tests"])
    assert result.returncode == 0, result.stdout + result.stderr
