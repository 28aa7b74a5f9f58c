"""verl runs in an environment of its own (``.venv-verl``, made by ``make setup``): this test runs
tests/verl_env there, with the micro chat model the test session builds, and fails with their output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERL_PYTHON = ROOT / ".venv-verl" / "bin" / "python"


@pytest.mark.skipif(not VERL_PYTHON.exists(), reason=".venv-verl is absent: `make setup` creates it")
def test_verl_agent_loop_suite_in_verl_environment(micro_model: Path) -> None:
    env = {**os.environ, "AGENTGYM_MICRO_MODEL": str(micro_model), "PYTHONPATH": str(ROOT)}
    command = [str(VERL_PYTHON), "-m", "pytest", "-o", "addopts=", "--import-mode=importlib", "-p", "no:cacheprovider",
               "-q", "-rs", "tests/verl_env"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    tail = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, tail
    assert " passed" in tail and "skipped" not in tail, tail
