"""The difficulty ladders of the built-in families: ids, arguments, the env checker, the expert
on both splits, train/test disjointness, and the Levels table of each doc page."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_envs import resolve_env_id
from agentgym_envs.docs import DOCUMENTED, page
from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family, level_ids, levels_table, with_level
from agentgym_envs.scenarios.coding.runner import TestStatus
from agentgym_envs.scenarios.coding.tasks import display_program

# What a task's split must not share with the other split's tasks, per family.
SPLIT_VALUES: dict[str, Callable[[Any], set[Any]]] = {
    "customer_support": lambda task: {task.customer["email"], task.customer["user_id"], task.text},
    "math": lambda task: {*task.numbers, task.question},
    "coding": lambda task: {task.problem.id, task.problem.statement},
}
LEVEL_IDS = [env_id for name in SPLIT_VALUES for env_id in level_ids(name)[:-1]]


def test_level_ids_run_from_l0_up_to_v0_and_resolve():
    ids = [f"AgentGym/CustomerSupport-L{k}-v0" for k in range(4)] + ["AgentGym/CustomerSupport-v0"]
    assert family("customer_support", 0).ids() == level_ids("CustomerSupport-L2-v0") == level_ids(ids[-1]) == ids
    assert level_ids("customer_support") == family("customer_support", 1).ids()  # a short name: the latest
    assert resolve_env_id("CustomerSupport-L1-v0") == ids[1] and resolve_env_id(ids[0]) == ids[0]
    assert level_ids("SupportTeam-v0")[0] == "AgentGym/SupportTeam-L0-v0"
    with pytest.raises(ValueError, match="level must be None"):
        with_level("customer_support", 4, {})


@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_level_passes_the_env_checker(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("split", ["train", "test"])
@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_expert_solves_the_level(env_id, split):
    assert evaluate(env_id, "expert", episodes=5, split=split)["success"] == 1.0


@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_test_split_shares_no_value_with_train(env_id):
    values = SPLIT_VALUES[family(env_id).name]
    seen = []
    for split in ("train", "test"):
        tasks = gym.make(env_id, split=split).unwrapped.tasks
        rng = np.random.default_rng(0)
        seen.append(set().union(*(values(tasks.sample(rng)) for _ in range(40))))
    assert not seen[0] & seen[1]


def test_customer_support_levels_restrict_kinds_and_add_the_category_line():
    env = gym.make("AgentGym/CustomerSupport-L0-v0")
    for seed in range(5):
        observation, _ = env.reset(seed=seed)
        assert env.unwrapped.episode.task.kind == "password_reset" and "\nCategory: password reset\n" in observation
    kinds = {gym.make("AgentGym/CustomerSupport-L2-v0").unwrapped.tasks.sample(np.random.default_rng(s)).kind
             for s in range(60)}
    assert kinds == {"password_reset", "billing_inquiry", "api_integration", "refund_request"}
    assert "Category:" not in gym.make("AgentGym/CustomerSupport-v0").reset(seed=0)[0]
    spaces = {str(gym.make(env_id).action_space) for env_id in level_ids("customer_support")}
    assert spaces == {"MultiDiscrete([11 32 32])"}


def test_explicit_arguments_override_the_level():
    env = gym.make("AgentGym/CustomerSupport-L0-v0", kinds=("billing_inquiry",), max_turns=4)
    env.reset(seed=0)
    assert env.unwrapped.episode.task.kind == "billing_inquiry" and env.unwrapped.max_turns == 4


@pytest.mark.parametrize("doc", [d for d in DOCUMENTED if d.name in SPLIT_VALUES or d.name == "support_team"],
                         ids=lambda d: d.name)
def test_doc_page_holds_the_family_levels_table(doc):
    assert levels_table(doc.name) in page(doc)


def test_math_level_zero_is_one_addition():
    tasks = gym.make("AgentGym/Math-L0-v0", split="test").unwrapped.tasks
    rng = np.random.default_rng(0)
    for _ in range(10):
        task = tasks.sample(rng)
        assert task.solution.count("+") == 1 and task.expression == task.solution and len(task.numbers) == 2


def test_coding_levels_draw_their_tiers_only():
    for env_id, tiers in (("AgentGym/Coding-L0-v0", {"easy"}), ("AgentGym/Coding-L1-v0", {"easy", "medium"})):
        for split in ("train", "test"):
            assert {p.difficulty for p in gym.make(env_id, split=split).unwrapped.tasks.problems} == tiers


@pytest.mark.parametrize("split", ["train", "test"])
def test_coding_level_zero_offers_thirteen_programs_of_which_only_the_solution_passes_the_examples(split):
    """Every program a task of the split can draw as a distractor (the split's other
    solutions) fails each easy problem's visible examples; the solution passes them."""
    env = gym.make("AgentGym/Coding-L0-v0", split=split)
    scenario, tasks = env.unwrapped.scenario, env.unwrapped.tasks
    for problem in tasks.problems:
        task = tasks.get(f"{problem.id}#0")
        caught = {display_program(c.source) for c in problem.candidates if not c.passes_examples}
        pool = {display_program(p.solution) for p in tasks.pool if p.id != problem.id}
        assert len(task.programs) >= 13 and set(task.programs) - {task.solution} <= pool | caught
        for program in (task.solution, *caught, *pool):
            outcomes = scenario.judge.run(program, problem.examples, task.examples_digest)
            assert all(o.status is TestStatus.PASSED for o in outcomes) == (program == task.solution), problem.id
    env.close()


def test_a_version_a_family_lacks_is_refused_with_the_versions_it_has():
    with pytest.raises(ValueError, match=r"version must be one of \[0"):
        with_level("customer_support", 0, {}, version=99)
    with pytest.raises(ValueError, match="has no version 99"):
        family("customer_support", 99)


def test_every_step_names_the_unit_the_task_is_drawn_from():
    env = gym.make("AgentGym/CustomerSupport-L1-v0")
    _, info = env.reset(seed=0)
    scenario = env.unwrapped.scenario
    assert info["unit_id"] == scenario.unit_id(env.unwrapped.episode.task)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert info["unit_id"] == scenario.unit_id(env.unwrapped.episode.task)
