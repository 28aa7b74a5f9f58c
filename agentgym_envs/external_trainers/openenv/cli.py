"""The command line of ``agentgym serve`` (and ``python -m agentgym_envs.external_trainers.openenv``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from .auth import TOKEN_ENV, InsecureBind, resolve_token


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
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--inline", dest="inline", action="store_const", const=True, default=None,
                      help="run steps on the event loop (no thread hop, no step timeout); the default for math, "
                           "customer_support and tau2 with the rule-based user")
    mode.add_argument("--worker", dest="inline", action="store_const", const=False,
                      help="run steps on a worker thread per session (with the step timeout); the default for "
                           "coding and tau2 with an LLM user or judge")
    parser.add_argument("--token", default=None,
                        help=f"the bearer token every request must carry (default: ${TOKEN_ENV}; none: open). "
                             f"The variable keeps it out of the process list")
    parser.add_argument("--insecure", action="store_true",
                        help="serve on a non-loopback --host without a token (refused otherwise)")
    parser.add_argument("--split", default="train", help="the split a reset without one uses (default train)")
    parser.add_argument("--env-arg", action="append", type=parse_env_arg, default=[], metavar="KEY=VALUE",
                        help="a gym.make argument (JSON value or string), e.g. --env-arg data_dir=/data/tau2")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                        help="uvicorn's event loop (default auto: uvloop where installed, as the serve extra does)")
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

    try:
        serve(args.env, host=args.host, port=args.port, log_level=args.log_level, loop=args.loop,
              token=resolve_token(args.token),
              insecure=args.insecure, make_kwargs=dict(args.env_arg), split=args.split,
              max_sessions=args.max_sessions, idle_timeout_s=args.idle_timeout or None,
              step_timeout_s=args.step_timeout or None, inline=args.inline)
    except InsecureBind as exc:
        print(f"agentgym serve: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentgym_envs.external_trainers.openenv",
                                     description="serve an agentgym env over OpenEnv")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))
