import subprocess
import sys

from agentgym_envs import __version__
from agentgym_envs.cli import main


def test_version_flag_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "agentgym_envs.cli", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"agentgym {__version__}"


def test_list_detailed_shows_difficulty_and_criteria(capsys):
    assert main(["list", "--detailed"]) == 0
    out = capsys.readouterr().out
    assert "AgentGym/CustomerSupport-v1" in out and "easy/medium/hard" in out and "tool_reliability>=0.95" in out


def test_list_shows_the_levels(capsys):
    assert main(["list"]) == 0 and "L0..L4, v1" in capsys.readouterr().out  # customer_support's latest ladder
    assert main(["list", "--levels"]) == 0
    out = capsys.readouterr().out
    assert "AgentGym/Math-L0-v0" in out and "AgentGym/SupportTeam-L3-v0" in out and "AgentGym/Tau2Telecom-v0" in out


def test_eval_prints_a_metrics_table(capsys):
    assert main(["eval", "customer_support", "--policy", "expert", "--episodes", "5"]) == 0
    out = capsys.readouterr().out
    assert "| expert | 1.000" in out and "tool_reliability: 1.000 (target >= 0.95) met" in out


def test_info_describes_spaces_and_tools(capsys):
    assert main(["info", "customer_support"]) == 0
    assert "lookup_user(email)" in capsys.readouterr().out


def test_unknown_environment_is_a_clear_error(capsys):
    assert main(["eval", "nope"]) == 2
    assert "unknown environment 'nope'" in capsys.readouterr().err


def test_eval_of_a_directory_without_a_run_is_a_clear_error(tmp_path, capsys):
    assert main(["eval", str(tmp_path)]) == 2
    assert f"{tmp_path} is no environment, and as a directory it holds no run.json" in capsys.readouterr().err
