"""Coding-v0 follows the environment contract: registration, spaces, checkers, determinism,
candidate programs in the entity table, tool results, metrics and the result cache."""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy, run_episode
from agentgym_envs.scenarios.coding import OutcomeCache, SandboxLimits
from agentgym_envs.scenarios.coding.judge import Judge, digest_tests
from agentgym_envs.scenarios.coding.problems import builtin_problems, get_problem
from agentgym_envs.scenarios.coding.scenario import MAX_PROGRAMS, CodingScenario
from agentgym_envs.scenarios.coding.tasks import builtin_task
from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction, TokenIdsObservation

ENV_ID = "AgentGym/Coding-v0"
SUM_OF_EVENS = get_problem("sum-of-evens")  # stdin; examples "5\n1 2 3 4 5\n" -> 6 and "3\n10 20 7\n" -> 30


def test_make_without_import_prefix_works():
    env = gym.make("agentgym_envs:AgentGym/Coding-v0")
    observation, info = env.reset(seed=0)
    assert observation.startswith("PROBLEM\n")
    assert "#" in info["task_id"]


@pytest.mark.parametrize("action_mode", ["structured", "text"])
def test_gymnasium_env_checker_passes(action_mode):
    check_env(gym.make(ENV_ID, action_mode=action_mode).unwrapped, skip_render_check=True)


def test_sb3_env_checker_passes_through_bag_of_tokens():
    sb3_check_env(BagOfTokensObservation(gym.make(ENV_ID)), warn=True)


def test_token_ids_and_flat_discrete_wrappers_wrap_coding():
    env = FlatDiscreteAction(TokenIdsObservation(gym.make(ENV_ID)))
    observation, _ = env.reset(seed=3)
    assert env.observation_space.contains(observation)
    assert env.action_space.n == 2 * MAX_PROGRAMS
    assert env.action_masks().sum() == 2 * len(env.unwrapped.episode.task.programs)


def test_structured_action_space_is_tool_then_one_program_slot():
    env = gym.make(ENV_ID)
    base = env.unwrapped
    assert base.tool_names == ["run_tests", "submit"]
    assert list(env.action_space.nvec) == [2, MAX_PROGRAMS]
    env.reset(seed=0)
    rows = len(base.episode.task.programs)
    assert base.action_masks().tolist() == [True, True] + [True] * rows + [False] * (MAX_PROGRAMS - rows)


def test_every_problem_offers_its_solution_and_candidates_as_whole_distinct_rows():
    scenario = CodingScenario()
    for problem in builtin_problems():
        task = builtin_task(problem, 0)
        assert len(task.programs) == 1 + len(problem.candidates) <= MAX_PROGRAMS
        assert len(set(task.programs)) == len(task.programs), problem.id
        assert task.solution in task.programs
        env = gym.make(ENV_ID)
        env.reset(options={"task_id": task.task_id})
        episode = env.unwrapped.episode
        assert len(episode.entities) == len(task.programs)
        for row, program in zip(episode.entities.row_texts, task.programs, strict=True):
            assert len(row) <= scenario.max_entity_chars, f"{problem.id}: a candidate row is cut"
            assert row.endswith(program) and row in episode.entity_block()


def test_seeds_pick_problems_and_shuffle_the_candidates():
    env = gym.make(ENV_ID)
    problems, solution_rows = set(), set()
    for seed in range(40):
        env.reset(seed=seed)
        task = env.unwrapped.episode.task
        problems.add(task.problem.id)
        solution_rows.add(task.programs.index(task.solution))
    assert len(problems) >= 15
    assert len(solution_rows) >= 3  # the correct program is not always in the same row
    first, _ = env.reset(seed=5)
    again, _ = env.reset(seed=5)
    assert first == again


def test_task_id_option_picks_that_problem_and_order():
    env = gym.make(ENV_ID)
    _, info = env.reset(options={"task_id": "two-sum#17"})
    assert info["task_id"] == "two-sum#17"
    programs = env.unwrapped.episode.task.programs
    env.reset(options={"task_id": "two-sum#17"})
    assert env.unwrapped.episode.task.programs == programs
    _, info = env.reset(options={"task_id": "two-sum"})
    assert info["task_id"] == "two-sum#0"
    for bad in ("no-such-problem", "two-sum#x", "two-sum#99999999"):
        with pytest.raises(ValueError, match="task_id"):
            env.reset(options={"task_id": bad})


def _rollout(action_mode: str, seed: int, actions: list | None = None) -> tuple[list, list, list, dict]:
    """Play one episode (random actions unless ``actions`` is given); return what happened."""
    env = gym.make(ENV_ID, action_mode=action_mode)
    agent = RandomPolicy(env, seed=seed)
    observation, info = env.reset(seed=seed)
    observations, rewards, taken = [observation], [], []
    done = False
    while not done:
        action = actions[len(taken)] if actions is not None else agent(observation, info)
        taken.append(action)
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        rewards.append(reward)
        done = terminated or truncated
    return taken, observations, rewards, info["metrics"]


@pytest.mark.parametrize("action_mode", ["structured", "text"])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_seed_and_actions_give_same_observations_rewards_and_metrics(action_mode, seed):
    actions, observations, rewards, metrics = _rollout(action_mode, seed)
    _, observations_again, rewards_again, metrics_again = _rollout(action_mode, seed, actions)
    assert observations_again == observations
    assert rewards_again == rewards
    assert metrics_again == metrics


def test_both_action_modes_reach_the_same_outcome_for_the_expert():
    keys = ("success", "score", "turns", "correct_calls", "run_tests_passed", "submitted_after_testing")
    for seed in range(4):
        results = []
        for action_mode in ("structured", "text"):
            env = gym.make(ENV_ID, action_mode=action_mode, split="test")
            _, metrics = run_episode(env, ExpertPolicy(env), seed=seed)
            results.append({k: metrics[k] for k in keys})
        assert results[0] == results[1]


def _text_env(**kwargs) -> gym.Env:
    env = gym.make(ENV_ID, action_mode="text", **kwargs)
    env.reset(options={"task_id": "sum-of-evens"})
    return env


def _call(env: gym.Env, name: str, program: str) -> tuple[str, float, bool, dict]:
    observation, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": {"program": program}}))
    return observation, reward, terminated, info


def test_run_tests_reports_each_verdict_with_what_helps_fix_it():
    env = _text_env(limits=SandboxLimits(cpu_time_s=0.5, wall_time_s=3))
    _, _, _, info = _call(env, "run_tests", "print(6)")
    result = info["messages"][-1]["content"]
    assert result.startswith("Passed 1/2 tests.")
    assert "Test 2: wrong output" in result and "expected: 30" in result and "got: 6" in result
    _, _, _, info = _call(env, "run_tests", "import sys\nsys.stdin.read()\nraise ValueError('boom')")
    assert "runtime error" in info["messages"][-1]["content"]
    assert "ValueError: boom" in info["messages"][-1]["content"]
    _, _, terminated, info = _call(env, "run_tests", "while True:\n    pass")
    assert "Test 1: timeout (exceeded 0.5 s of CPU time" in info["messages"][-1]["content"]
    assert not terminated and info["error"] is None
    _, _, terminated, info = _call(env, "submit", SUM_OF_EVENS.solution)
    metrics = info["metrics"]
    assert terminated and metrics["success"] == 1.0
    assert (metrics["run_tests_passed"], metrics["run_tests_wrong_output"]) == (1.0, 1.0)
    assert (metrics["run_tests_runtime_error"], metrics["run_tests_timeout"]) == (2.0, 2.0)
    assert metrics["run_tests_calls"] == 3.0
    assert metrics["submitted_after_testing"] == 1.0 and metrics["submitted_without_testing"] == 0.0


def test_submit_shows_only_hidden_verdicts_and_ends_the_episode():
    env = _text_env()
    observation, reward, terminated, info = _call(env, "submit", "print(0)")
    result = info["messages"][-1]["content"]
    assert terminated and result.startswith(f"Submitted. Passed 2/{len(SUM_OF_EVENS.hidden)} hidden tests.")
    assert "expected" not in result and "input" not in result
    assert info["metrics"]["success"] == 0.0 and info["metrics"]["submitted_without_testing"] == 1.0
    assert reward == pytest.approx(-0.05)


def test_partial_credit_scores_the_fraction_of_hidden_tests_passed():
    env = _text_env(partial_credit=True, reward_config={"mode": "outcome"})
    _, reward, _, info = _call(env, "submit", "print(0)")  # right when the sum is 0: 2 of 6
    assert reward == pytest.approx(2 / len(SUM_OF_EVENS.hidden))
    assert info["metrics"]["score"] == pytest.approx(reward)
    assert info["metrics"]["success"] == 0.0
    assert info["metrics"]["hidden_pass_fraction"] == pytest.approx(reward)


def test_a_fenced_code_block_inside_the_argument_is_run():
    env = _text_env()
    _, _, _, info = _call(env, "run_tests", f"Here it is:\n```python\n{SUM_OF_EVENS.solution}\n```\nThanks.")
    assert info["messages"][-1]["content"].endswith(": Passed 2/2 tests.\nTest 1: passed\nTest 2: passed")
    assert info["correct"]  # the candidate's label names the program it ran


@pytest.mark.parametrize(
    "program, message",
    [("", "the program is empty"), ("```python\n```", "the program is empty"), ("x" * 20_001, "at most 20000"),
     ("print('\ud800')", "lone surrogate")],
)
def test_unusable_programs_are_error_results_that_do_not_end_the_episode(program, message):
    env = _text_env()
    for tool in ("run_tests", "submit"):
        _, reward, terminated, info = _call(env, tool, program)
        assert message in info["error"] and not terminated and reward == pytest.approx(-0.05)


def test_a_program_killing_its_process_group_leaves_the_environment_working():
    env = _text_env()
    _, _, terminated, info = _call(env, "run_tests", "import os, signal\nos.killpg(os.getpgrp(), signal.SIGKILL)")
    assert "killed by signal SIGKILL" in info["messages"][-1]["content"] and not terminated
    _, _, terminated, info = _call(env, "submit", SUM_OF_EVENS.solution)
    assert terminated and info["metrics"]["success"] == 1.0


def test_never_submitting_is_counted_and_scores_zero():
    env = gym.make(ENV_ID, max_turns=2)
    env.reset(options={"task_id": "sum-of-evens#3"})
    for row in (0, 0):
        _, _, terminated, truncated, info = env.step(np.array([0, row]))
    assert truncated and not terminated
    assert not info["correct"]  # the repeated test is not a right call
    metrics = info["metrics"]
    assert metrics["never_submitted"] == 1.0 and metrics["run_tests_calls"] == 2.0
    assert metrics["success"] == 0.0 and metrics["tool_reliability"] == 0.5


def test_results_name_the_candidate_row_they_ran():
    env = gym.make(ENV_ID)
    env.reset(options={"task_id": "two-sum#4"})
    _, _, _, _, info = env.step(np.array([0, 2]))
    assert info["messages"][-1]["content"].startswith("program [2]: Passed")


def test_cache_is_bounded_by_outcomes_held_and_evicts_the_least_recently_used():
    cache = OutcomeCache(max_outcomes=4)
    limits = SandboxLimits()
    one, two = (None,), (None, None)  # the cache never looks inside the outcomes
    cache.put((b"a", "d", limits), one)
    cache.put((b"b", "d", limits), two)
    assert cache.get((b"a", "d", limits)) == one  # now the most recently used
    cache.put((b"c", "d", limits), two)
    assert cache.outcomes_held == 3 and len(cache) == 2
    assert cache.get((b"b", "d", limits)) is None
    assert cache.get((b"a", "d", limits)) == one and cache.get((b"c", "d", limits)) == two
    cache.put((b"huge", "d", limits), (None,) * 5)  # alone over the bound: not stored, nothing evicted
    assert cache.get((b"huge", "d", limits)) is None and cache.outcomes_held == 3
    cache.put((b"e", "d", limits), ())  # a run without tests counts as one
    cache.put((b"f", "d", limits), one)  # 5 > 4: evicts "a", the least recently used
    assert cache.outcomes_held == 4 and cache.get((b"a", "d", limits)) is None
    cache.reset_counters()
    assert (cache.hits, cache.misses, len(cache)) == (0, 0, 3)
    cache.clear()
    assert len(cache) == 0 and cache.outcomes_held == 0
    with pytest.raises(ValueError):
        OutcomeCache(max_outcomes=0)


def test_a_pickled_cache_comes_back_empty_and_the_shared_one_as_this_process_s():
    from agentgym_envs.scenarios.coding.judge import SHARED_CACHE

    cache = OutcomeCache(max_outcomes=4)
    cache.put((b"a", "d", SandboxLimits()), (None,))
    back = pickle.loads(pickle.dumps(cache))
    assert len(back) == 0 and back.max_outcomes == 4
    assert pickle.loads(pickle.dumps(SHARED_CACHE)) is SHARED_CACHE


def test_a_pickled_sandbox_starts_a_server_of_its_own_and_runs_programs():
    from agentgym_envs.scenarios.coding.sandbox import Job, Sandbox

    with Sandbox(warn=False) as sandbox:
        assert sandbox.run("print(input())", [Job(stdin="before")])[0].stdout == "before\n"
        with pickle.loads(pickle.dumps(sandbox)) as copy:
            assert (copy.mode, copy.python) == (sandbox.mode, sandbox.python)
            assert copy.run("print(input())", [Job(stdin="after")])[0].stdout == "after\n"
        assert sandbox.run("print(input())", [Job(stdin="still")])[0].stdout == "still\n"


def test_judge_runs_a_program_once_per_tests_and_limits():
    judge = Judge(SandboxLimits(), OutcomeCache(max_outcomes=8))
    digest = digest_tests(SUM_OF_EVENS.examples)
    first = judge.run("print(6)", SUM_OF_EVENS.examples, digest)
    again = judge.run("print(6)", SUM_OF_EVENS.examples, digest)
    assert again == first and (judge.cache.misses, judge.cache.hits) == (1, 1)
    assert [o.status.value for o in first] == ["passed", "wrong_output"]
    Judge(SandboxLimits(cpu_time_s=0.5), judge.cache).run("print(6)", SUM_OF_EVENS.examples, digest)
    assert (judge.cache.misses, judge.cache.hits) == (2, 1)
    uncached = Judge(SandboxLimits(), None).run("print(6)", SUM_OF_EVENS.examples, digest)
    assert [o.status for o in uncached] == [o.status for o in first]


def test_structured_mode_refuses_problems_without_candidates():
    with pytest.raises(ValueError, match="action_mode='text'"):
        gym.make(ENV_ID, candidates=False)
    env = gym.make(ENV_ID, action_mode="text", candidates=False)
    observation, _ = env.reset(seed=0)
    assert "CANDIDATE" not in observation and len(env.unwrapped.episode.entities) == 0
    _, metrics = run_episode(env, ExpertPolicy(env), seed=0)
    assert metrics["success"] == 1.0
