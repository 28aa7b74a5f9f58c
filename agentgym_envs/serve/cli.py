"""The command line of ``agentgym serve`` (and ``python -m agentgym_envs.serve``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any


def parse_env_arg(item: str) -> tuple[str, Any]:
    """``key=value``: the value as JSON when it parses, else as a string (``data_dir=/data``)."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {item!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", help="an env name (math, coding, tau2_retail, ...) or id (AgentGym/Math-v0)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--max-sessions", type=int, default=8,
                        help="sessions at a time; the next is refused (default 8)")
    parser.add_argument("--idle-timeout", type=float, default=300.0,
                        help="seconds after which an idle session is closed (default 300; 0: never)")
    parser.add_argument("--step-timeout", type=float, default=30.0,
                        help="seconds a reset or step may run before it is abandoned (default 30; 0: no limit)")
    parser.add_argument("--inline", action="store_true",
                        help="run steps on the event loop, not a worker thread per session: faster for envs with "
                             "sub-millisecond steps (math, customer_support); no step timeout")
    parser.add_argument("--split", default="train", help="the split a reset without one uses (default train)")
    parser.add_argument("--env-arg", action="append", type=parse_env_arg, default=[], metavar="KEY=VALUE",
                        help="a gym.make argument (JSON value or string), e.g. --env-arg data_dir=/data/tau2")
    parser.add_argument("--log-level", default="warning")


def skip_web_interface() -> None:
    """Keep OpenEnv from importing gradio (seconds at start-up) for its web interface, which this
    server does not mount: OpenEnv runs without it (``openenv.core.env_server`` treats a missing
    gradio as no web interface). Only for a process that serves and has not imported gradio."""
    if "gradio" not in sys.modules and os.environ.get("ENABLE_WEB_INTERFACE", "").lower() not in ("1", "true", "yes"):
        sys.modules["gradio"] = None  # type: ignore[assignment]  # import gradio -> ModuleNotFoundError


def run_from_args(args: argparse.Namespace) -> int:
    skip_web_interface()
    from .app import serve

    serve(args.env, host=args.host, port=args.port, log_level=args.log_level, make_kwargs=dict(args.env_arg),
          split=args.split, max_sessions=args.max_sessions, idle_timeout_s=args.idle_timeout or None,
          step_timeout_s=args.step_timeout or None, inline=args.inline)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentgym_envs.serve",
                                     description="serve an agentgym env over OpenEnv")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))
