"""Coding-v1: generated problems with hidden tests, three splits disjoint in problems and their
families, at least 20 test problems per level, every wrong program caught by a visible example;
Coding-v2's re-cut ladder on v1's problems; and Coding-v0's tasks unchanged."""

from __future__ import annotations

import hashlib
import warnings
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family
from agentgym_envs.scenarios.coding import CodingEnv
from agentgym_envs.scenarios.coding.problems import builtin_problems, generated_problems
from agentgym_envs.scenarios.coding.problems.generated import TEMPLATES, instantiate
from agentgym_envs.scenarios.coding.runner import DEFAULT_LIMITS, run_tests
from agentgym_envs.wrappers import FlatDiscreteAction

V1_IDS = family("coding", 1).ids()
V0_IDS = family("coding", 0).ids()
LATER_IDS = [env_id for version in (1, 2) for env_id in family("coding", version).ids()]  # v2 keeps v1's problems
SPLITS = ("train", "validation", "test")
# sha256 of the task ids and observations of seeds 0-49 of both v0 splits at every v0 level,
# computed before v1 existed: v0 keeps its content.
V0_CONTENT = "ccc458a2285e4b8a827d32930476494703e0c0b62ad98026703cc0f3c0f77f6b"


def _problems(env_id: str, split: str):
    env = gym.make(env_id, split=split)
    problems = env.unwrapped.tasks.problems
    env.close()
    return problems


def test_v0_levels_keep_their_task_ids_and_observations():
    digest = hashlib.sha256()
    for env_id in V0_IDS:
        for split in ("train", "test"):
            env = gym.make(env_id, split=split)
            for seed in range(50):
                observation, info = env.reset(seed=seed)
                digest.update(f"{env_id}|{split}|{info['task_id']}|{observation}".encode())
            env.close()
    assert digest.hexdigest() == V0_CONTENT


@pytest.mark.parametrize("env_id", LATER_IDS)
def test_v1_splits_share_no_problem_family_statement_solution_or_test(env_id):
    seen: list[dict[str, set]] = []
    for split in SPLITS:
        problems = _problems(env_id, split)
        seen.append({
            "ids": {p.id for p in problems},
            "families": {p.family for p in problems if p.family},
            "statements": {p.statement for p in problems},
            "solutions": {p.solution for p in problems},
            "tests": {repr(t) for p in problems if p.family for t in p.tests},  # v0's share a trivial "0"
        })
    for i, first in enumerate(seen):
        for second in seen[i + 1:]:
            for key, values in first.items():
                assert not values & second[key], (env_id, key)


@pytest.mark.parametrize("env_id", LATER_IDS)
def test_every_v1_level_has_twenty_test_and_ten_validation_problems(env_id):
    assert len({p.id for p in _problems(env_id, "test")}) >= 20
    assert len({p.id for p in _problems(env_id, "validation")}) >= 10


def test_the_splits_table_of_the_docs_counts_each_v1_levels_problems():
    for env_id in LATER_IDS:
        counts = " | ".join(str(len(_problems(env_id, split))) for split in SPLITS)
        assert f"| `{env_id.split('/')[1]}` | coding problem | {counts} |" in CodingEnv.__doc__


def test_v0_has_no_validation_split_and_v1_keeps_v0s_test_problems():
    with pytest.raises(ValueError, match="split must be one of"):
        gym.make("AgentGym/Coding-v0", split="validation")
    v1_test = {p.id for p in _problems("AgentGym/Coding-v1", "test")}
    assert {p.id for p in _problems("AgentGym/Coding-v0", "test")} <= v1_test


@pytest.mark.parametrize("version", [3, "1", True, -1])
def test_a_bad_version_is_refused(version):
    with pytest.raises(ValueError, match="version must be one of"):
        gym.make("AgentGym/Coding-v1", version=version)


def test_v2_adds_the_medium_problems_with_l0s_programs_between_v1s_levels():
    made = {env_id: gym.make(f"AgentGym/Coding-{env_id}").unwrapped for env_id in ("L1-v2", "L2-v2", "L1-v1")}
    assert (made["L1-v2"].scenario.programs, made["L1-v2"].max_turns) == (12, 16)
    assert {p.id for p in made["L1-v2"].tasks.problems} == {p.id for p in made["L1-v1"].tasks.problems}
    assert (made["L2-v2"].scenario.programs, made["L2-v2"].max_turns) == (16, 20)
    assert (made["L1-v2"].version, made["L1-v2"].scenario.version) == (2, 1)
    assert CodingEnv().version == 2  # the latest, as a short name means


@pytest.mark.parametrize(("v2", "v1"), [("L0-v2", "L0-v1"), ("L2-v2", "L1-v1"), ("v2", "v1")])
def test_v2_levels_hold_the_tasks_of_their_v1_counterparts(v2, v1):
    observed = []
    for env_id in (v2, v1):
        env = gym.make(f"AgentGym/Coding-{env_id}", split="test")
        observed.append([(info["task_id"], observation) for observation, info in (env.reset(seed=s) for s in range(10))])
        env.close()
    assert observed[0] == observed[1]


def test_v0_arguments_are_refused_at_v1_and_programs_at_v0():
    with pytest.raises(ValueError, match="subtle_candidates=True and distractors are version 0's"):
        gym.make("AgentGym/Coding-v1", distractors=3)
    with pytest.raises(ValueError, match="programs is an argument of version 1"):
        gym.make("AgentGym/Coding-v0", programs=12)
    with pytest.raises(ValueError, match="programs must be >= "):
        gym.make("AgentGym/Coding-v1", programs=3)


@pytest.mark.parametrize("env_id", V1_IDS)
def test_v1_tasks_offer_their_programs_and_name_the_problem_as_unit(env_id):
    env = gym.make(env_id)
    programs = env.unwrapped.scenario.programs
    for seed in range(5):
        _, info = env.reset(seed=seed)
        task = env.unwrapped.episode.task
        assert len(set(task.programs)) == programs and task.solution in task.programs
        assert info["unit_id"] == task.problem.id == info["task_id"].partition("#")[0]
    assert env.unwrapped.max_turns == programs + 4
    env.close()


@pytest.mark.parametrize("split", SPLITS)
def test_only_the_solution_of_a_v1_task_passes_its_visible_examples(split):
    env = gym.make("AgentGym/Coding-v1", split=split)
    scenario = env.unwrapped.scenario
    for seed in range(3):
        env.reset(seed=seed)
        task = env.unwrapped.episode.task
        for program in task.programs:
            outcomes = scenario.judge.run(program, task.problem.examples, task.examples_digest)
            assert all(o.passed for o in outcomes) == (program == task.solution), task.task_id
    env.close()


def test_distractors_define_another_function_than_any_other_familys_problem():
    written = {p.function for p in builtin_problems()}
    names = {t.name: t.function for t in TEMPLATES}
    assert len(set(names.values())) == len(names) and not written & set(names.values())


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_generated_solution_passes_and_every_wrong_variant_fails_an_example_and_a_hidden_test(template):
    problem = next(p for p in generated_problems() if p.family == template.name)
    programs = [problem.solution, *(c.source for c in problem.candidates)]
    with ThreadPoolExecutor(2) as pool:
        solution, *wrong = pool.map(lambda program: run_tests(program, problem.tests, DEFAULT_LIMITS), programs)
    assert all(o.passed for o in solution)
    visible = len(problem.examples)
    for candidate, outcomes in zip(problem.candidates, wrong, strict=True):
        assert not all(o.passed for o in outcomes[:visible]), candidate.kind
        assert not all(o.passed for o in outcomes[visible:]), candidate.kind


def test_generated_problems_are_distinct_and_deterministic():
    problems = generated_problems()
    assert len({p.id for p in problems}) == len({p.statement for p in problems}) == len(problems) == 112
    assert len({p.solution for p in problems}) == len(problems)
    assert [instantiate(TEMPLATES[0], p) for p in TEMPLATES[0].params] == list(problems[:8])


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("env_id", V1_IDS)
def test_expert_solves_every_v1_level(env_id, split):
    assert evaluate(env_id, "expert", episodes=4, split=split)["success"] == 1.0


@pytest.mark.parametrize("env_id", V1_IDS)
def test_v1_passes_the_env_checkers_with_features_and_flat_actions(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym.make(env_id).unwrapped, skip_render_check=True)
        sb3_check_env(FlatDiscreteAction(gym.make(env_id, observation="features")), warn=False)
