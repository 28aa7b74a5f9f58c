"""The command line of tracing and the rollout store: ``--otlp-endpoint`` and ``--store`` for
``agentgym eval`` / ``agentgym train``, and ``agentgym runs`` (list, show, export)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..tables import format_table
from . import tracing
from .store import RunRecorder, RunStore, chat_records, default_store_path, recording

RUN_COLUMNS = ("run", "kind", "name", "status", "started", "episodes", "success", "return")
EPISODE_COLUMNS = ("episode", "split", "task_id", "trial", "return", "success", "turns", "outcome", "error", "span")


def add_tracing_arguments(parser: argparse.ArgumentParser) -> None:
    """``--otlp-endpoint`` and ``--otlp-protocol``."""
    parser.add_argument("--otlp-endpoint", metavar="URL",
                        help="export OpenTelemetry spans to this OTLP collector, e.g. http://127.0.0.1:6006/v1/traces "
                             "(Phoenix); default: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, else no tracing (needs agentgym-envs[tracing])")
    parser.add_argument("--otlp-protocol", choices=tracing.PROTOCOLS,
                        help="default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf")


def add_store_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """``--store`` and ``--no-store``."""
    parser.add_argument("--store", metavar="PATH", help=f"the rollout store that records the run (default: {default})")
    parser.add_argument("--no-store", action="store_true", help="record nothing in the rollout store")


def tracing_session(args: argparse.Namespace) -> contextlib.AbstractContextManager[bool]:
    """Tracing for a command that takes ``--otlp-endpoint`` (on when it or the variables say so)."""
    if not hasattr(args, "otlp_endpoint"):
        return contextlib.nullcontext(False)
    return tracing.session(args.otlp_endpoint, args.otlp_protocol)


@contextlib.contextmanager
def eval_recording(args: argparse.Namespace, name: str, config: Mapping[str, Any], env_id: str | None,
                   version: Mapping[str, Any]) -> Iterator[RunRecorder | None]:
    """An ``agentgym eval`` run in the store of ``--store`` (None with ``--no-store``)."""
    if args.no_store:
        yield None
        return
    path = Path(args.store) if args.store else default_store_path()
    with recording(path, "eval", name, config, env_id, ("policy", dict(version))) as recorder:
        print(f"run {recorder.run_id} in {path}")
        yield recorder


def add_runs_parser(sub: argparse._SubParsersAction) -> None:
    """``agentgym runs`` and its ``show`` and ``export`` commands."""
    parser = sub.add_parser("runs", help="list the runs in the rollout store; show one; export its episodes",
                            description="The runs that `agentgym eval` and `agentgym train` recorded in the rollout store.")
    parser.add_argument("--store", help=f"the store (default: {default_store_path()})")
    parser.add_argument("--limit", type=int, default=50, help="newest runs shown (default: %(default)s)")
    parser.set_defaults(func=cmd_runs)
    commands = parser.add_subparsers(dest="runs_command")
    show = commands.add_parser("show", help="one run: its settings, figures and episodes")
    show.add_argument("run", help="a run id, the start of one, or a run name (its newest run)")
    show.add_argument("--episodes", type=int, default=20, help="episodes listed (default: %(default)s)")
    show.add_argument("--store", dest="show_store", help="the store (default: that of agentgym runs)")
    show.set_defaults(func=cmd_runs_show)
    export = commands.add_parser("export", help="a run's episodes as OpenAI chat JSONL (what llm-sft reads)")
    export.add_argument("run", help="a run id, the start of one, or a run name (its newest run)")
    export.add_argument("--format", choices=["jsonl"], default="jsonl")
    export.add_argument("--output", "-o", help="the file to write (default: standard output)")
    export.add_argument("--successful", action="store_true", help="only the episodes that succeeded")
    export.add_argument("--store", dest="export_store", help="the store (default: that of agentgym runs)")
    export.set_defaults(func=cmd_runs_export)


def _open(args: argparse.Namespace, override: str | None = None) -> RunStore:
    path = Path(override or args.store or default_store_path())
    if not path.is_file():
        raise ValueError(f"no rollout store at {path}: agentgym eval and agentgym train create it (--store names another)")
    return RunStore(path)


def _figure(summary: Mapping[str, Any], name: str) -> Any:
    """A run's figure: an evaluation's own, a training run's on the test split."""
    value = summary.get(name, summary.get(f"test_{name}"))
    return "" if value is None else value


def _when(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp)) if timestamp else ""


def cmd_runs(args: argparse.Namespace) -> int:
    with _open(args) as store:
        runs = store.runs(args.limit)
        if not runs:
            print(f"no runs in {store.path}")
            return 0
        rows = [{"run": run["id"], "kind": run["kind"], "name": run["name"], "status": run["status"],
                 "started": _when(run["started_at"]), "episodes": run["episode_count"],
                 "success": _figure(run["summary"], "success"), "return": _figure(run["summary"], "return")} for run in runs]
        print(format_table(rows, RUN_COLUMNS))
    return 0


def cmd_runs_show(args: argparse.Namespace) -> int:
    with _open(args, args.show_store) as store:
        run = store.run(args.run)
        episodes = store.episodes(run["id"])
    print(f"run {run['id']}: {run['kind']} {run['name']} ({run['status']})")
    print(f"  env: {run['env_id']}\n  started: {_when(run['started_at'])}  ended: {_when(run['ended_at'])}")
    if run.get("version"):
        print(f"  version ({run['version_id']}): {json.dumps(run['version'])}")
    if run["trace_id"]:
        print(f"  trace: {run['trace_id']} (span {run['span_id']})")
    print(f"  config: {json.dumps(run['config'])}")
    if run["summary"]:
        figures = {k: v for k, v in run["summary"].items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        print("\n" + format_table([{"figure": k, "value": float(v)} for k, v in figures.items()], ["figure", "value"]))
    shown = episodes[: args.episodes]
    print(f"\n{len(episodes)} episodes" + (f", the first {len(shown)}:" if len(shown) < len(episodes) else ":"))
    if shown:
        rows = [{"episode": e["id"], "split": e["split"] or "", "task_id": e["task_id"] or e["task"], "trial": e["trial"],
                 "return": e["return"] if e["return"] is not None else "", "success": e["success"] if e["success"] is not None else "",
                 "turns": len(e["rewards"]), "outcome": e["outcome_reason"] or "", "error": (e["error"] or "")[:40],
                 "span": e["span_id"] or ""} for e in shown]
        print(format_table(rows, EPISODE_COLUMNS))
    return 0


def cmd_runs_export(args: argparse.Namespace) -> int:
    with _open(args, args.export_store) as store:
        run = store.run(args.run)
        records = chat_records(store.episodes(run["id"], successful=args.successful))
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(lines, encoding="utf-8")
        print(f"{len(records)} episodes of run {run['id']} -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(lines)
    return 0
