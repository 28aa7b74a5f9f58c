"""`agentgym serve`'s command line: the subcommand, its options and `--env-arg` values; the
default step mode per env."""

from __future__ import annotations

import argparse

import pytest

from agentgym_envs.cli import build_parser
from agentgym_envs.external_trainers.openenv.cli import parse_env_arg
from agentgym_envs.external_trainers.openenv.sessions import default_inline


def serve_args(*options: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", "math", *options])


def test_the_serve_subcommand_takes_the_server_options():
    args = serve_args("--port", "9000", "--max-sessions", "3", "--idle-timeout", "5", "--step-timeout", "0",
                      "--inline", "--env-arg", "max_turns=4", "--token", "t0k", "--insecure")
    assert (args.env, args.port, args.max_sessions, args.idle_timeout, args.step_timeout, args.inline) == \
        ("math", 9000, 3, 5.0, 0.0, True)
    assert (args.token, args.insecure) == ("t0k", True)
    assert dict(args.env_arg) == {"max_turns": 4}
    assert args.func.__name__ == "cmd_serve"


def test_the_step_mode_is_chosen_per_env_unless_forced():
    assert serve_args().inline is None
    assert serve_args("--inline").inline is True
    assert serve_args("--worker").inline is False
    with pytest.raises(SystemExit):
        serve_args("--inline", "--worker")
    assert (serve_args().token, serve_args().insecure) == (None, False)


@pytest.mark.parametrize("env_id,make_kwargs,inline", [
    ("AgentGym/Math-v0", {}, True),
    ("AgentGym/CustomerSupport-v0", {}, True),
    ("AgentGym/CustomerSupport-L2-v0", {}, True),
    ("AgentGym/Tau2Retail-v0", {"data_dir": "/data"}, True),
    ("AgentGym/Tau2Airline-v0", {"user": "rule"}, True),
    ("AgentGym/Tau2Retail-v0", {"user": "llm", "user_model": "m"}, False),
    ("AgentGym/Tau2Telecom-v0", {"nl_judge_model": "m"}, False),
    ("AgentGym/Coding-v0", {}, False),
    ("AgentGym/Math-v1", {}, True),  # every version and level of a family
    ("AgentGym/CustomerSupport-L2-v1", {}, True),
    ("AgentGym/Tau2Telecom-L1-v1", {}, True),
    ("AgentGym/Coding-L0-v1", {}, False),
    ("CartPole-v1", {}, False),
])
def test_steps_that_may_block_get_a_worker_thread_by_default(env_id, make_kwargs, inline):
    assert default_inline(env_id, make_kwargs) is inline


def test_env_args_are_json_when_they_parse_and_strings_otherwise():
    assert parse_env_arg("data_dir=/data/tau2") == ("data_dir", "/data/tau2")
    assert parse_env_arg('reward_config={"mode": "outcome"}') == ("reward_config", {"mode": "outcome"})
    with pytest.raises(argparse.ArgumentTypeError):
        parse_env_arg("no-equals-sign")
