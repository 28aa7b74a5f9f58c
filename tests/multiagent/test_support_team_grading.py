"""support_team_v0 grading must fail when the team's resolution is incomplete or wrong.

The tickets, who makes each step and the effect each step must leave are written by hand in
``tests/data/support_resolutions.json``; the team passes the ticket with ``handoff`` whenever
the next step belongs to another agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_envs.multiagent import support_team_v0
from agentgym_envs.multiagent.policies import ExpertTeam, run_team_episode

RESOLUTIONS = json.loads((Path(__file__).parents[1] / "data" / "support_resolutions.json").read_text())
STEPS = {case: [(agent, name, arguments, effect and tuple(effect)) for agent, name, arguments, effect in c["steps"]]
         for case, c in RESOLUTIONS["cases"].items()}
EFFECT_STEPS = [(case, n) for case, steps in STEPS.items() for n, step in enumerate(steps) if step[3]]
DUPLICATE = RESOLUTIONS["duplicate"]["invoice_id"]


def _act(env, agent: str, name: str, arguments: dict) -> dict:
    _, _, _, _, infos = env.step({agent: json.dumps({"name": name, "arguments": arguments})})
    assert infos[agent]["error"] is None, (name, infos[agent]["error"])
    return infos


def _team_play(task_file: str, case: str, steps: list[tuple]):
    """Play ``steps`` as the team in text mode, handing the ticket on whenever the next step is
    another agent's; return (the outcome, the base world, the last infos). An episode the
    steps leave open is graded as it stands."""
    env = support_team_v0.parallel_env(action_mode="text", task_file=task_file)
    env.reset(options={"task_id": case})
    for agent, name, arguments, _ in steps:
        if env.holder != agent:
            _act(env, env.holder, "handoff", {"to": agent})
        infos = _act(env, agent, name, arguments)
        if not env.agents:
            break
    return env.scenario.grade(env.episode.task, env.episode.world), env.episode.world.inner, infos


def _expected(case: str) -> list[tuple]:
    return sorted(step[3] for step in STEPS[case] if step[3])


@pytest.mark.parametrize("case", STEPS)
def test_the_written_team_resolution_succeeds_with_exactly_its_effects(support_task_file, case):
    outcome, world, _ = _team_play(support_task_file, case, STEPS[case])
    assert (outcome.success, outcome.score) == (True, 1.0)
    assert sorted(world.effects) == _expected(case)


@pytest.mark.parametrize("case", STEPS)
def test_the_expert_teams_episode_leaves_exactly_the_expected_effects(support_task_file, case):
    env = support_team_v0.parallel_env(task_file=support_task_file)
    _, infos = run_team_episode(env, ExpertTeam(env), options={"task_id": case})
    assert infos["triage"]["team_metrics"]["success"] == 1.0
    assert sorted(env.episode.world.inner.effects) == _expected(case)


@pytest.mark.parametrize("case, skipped", EFFECT_STEPS, ids=[f"{c}-{STEPS[c][n][1]}" for c, n in EFFECT_STEPS])
def test_a_team_skipping_any_step_with_an_effect_fails(support_task_file, case, skipped):
    steps = [step for n, step in enumerate(STEPS[case]) if n != skipped]
    outcome, _, _ = _team_play(support_task_file, case, steps)
    assert (outcome.success, outcome.score) == (False, 0.0)


@pytest.mark.parametrize("wrong", [{"invoice_id": "INV-1002", "amount": 49.0}, {"invoice_id": DUPLICATE, "amount": 20.0}])
def test_a_team_refunding_the_wrong_invoice_or_amount_fails(support_task_file, wrong):
    steps = [(agent, name, wrong if name == "refund" else arguments, effect)
             for agent, name, arguments, effect in STEPS["refund_request"]]
    outcome, world, _ = _team_play(support_task_file, "refund_request", steps)
    assert (outcome.success, outcome.score) == (False, 0.0)
    assert world.invoices[DUPLICATE].refunded == (20.0 if wrong["invoice_id"] == DUPLICATE else 0.0)


def test_the_team_outcome_reaches_every_agent_as_a_failure(support_task_file):
    steps = [step for step in STEPS["refund_request"] if step[1] != "refund"]
    _, _, infos = _team_play(support_task_file, "refund_request", steps)
    assert {agent: info["metrics"]["success"] for agent, info in infos.items()} == dict.fromkeys(infos, 0.0)
    assert set(infos) == set(support_team_v0.ROSTER)
