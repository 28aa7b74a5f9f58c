"""`agentgym serve`'s command line: the subcommand, its options and `--env-arg` values."""

from __future__ import annotations

import argparse

import pytest

from agentgym_envs.cli import build_parser
from agentgym_envs.serve.cli import parse_env_arg


def test_the_serve_subcommand_takes_the_server_options():
    args = build_parser().parse_args(["serve", "math", "--port", "9000", "--max-sessions", "3", "--idle-timeout",
                                      "5", "--step-timeout", "0", "--inline", "--env-arg", "max_turns=4"])
    assert (args.env, args.port, args.max_sessions, args.idle_timeout, args.step_timeout, args.inline) == \
        ("math", 9000, 3, 5.0, 0.0, True)
    assert dict(args.env_arg) == {"max_turns": 4}
    assert args.func.__name__ == "cmd_serve"


def test_env_args_are_json_when_they_parse_and_strings_otherwise():
    assert parse_env_arg("data_dir=/data/tau2") == ("data_dir", "/data/tau2")
    assert parse_env_arg('reward_config={"mode": "outcome"}') == ("reward_config", {"mode": "outcome"})
    with pytest.raises(argparse.ArgumentTypeError):
        parse_env_arg("no-equals-sign")
