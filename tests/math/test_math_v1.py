"""Math-v1: three splits disjoint in units (phrasing frames, templates) and values, at least 20
test units per level, the expert on every level and split (also through the trainers' flat
actions), the version argument, and -v0's content pinned."""

from __future__ import annotations

import hashlib
import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import family
from agentgym_envs.scenarios.math import MathEnv, generate_problem
from agentgym_envs.scenarios.math.catalogue import KINDS, SPLITS, splits_table, unit_ids, units
from agentgym_envs.scenarios.math.frames import CLOSERS, OPENERS
from agentgym_envs.scenarios.math.templates import NAMES, VALUE_RANGES
from agentgym_envs.wrappers import FlatDiscreteAction

V1 = family("math", 1)
LEVELS = [(env_id, kwargs.get("problems", ("easy", "medium", "hard")))
          for env_id, kwargs in [*((lv.env_id, lv.kwargs) for lv in V1.levels), (V1.env_id, {})]]
LEVEL_IDS = [env_id for env_id, _ in LEVELS]

# sha256 of the JSON of tasks train-0..49 and test-0..49, per -v0 id, computed before -v1 existed.
V0_DIGESTS = {
    "AgentGym/Math-L0-v0": "98a56ce3e32dbb2a21bfb572e053e31ed387e64dbcaa5a10b6016abf4c8b4f8e",
    "AgentGym/Math-L1-v0": "f18079712d8228f3461f92bc1d88b4a3be06546ce32b82fae8055838453ca85b",
    "AgentGym/Math-L2-v0": "8993576ec5ca243ebd175ba5cd55f1303c9129f4fd6ab1fea9583f68bfba2596",
    "AgentGym/Math-v0": "0341a987d6821bc7eb8904550bbb229c75fa6784ce7c9366197177b991515749",
}


def _make(env_id: str, **kwargs) -> gym.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the -v0 ids are out of date
        return gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", sorted(V0_DIGESTS))
def test_v0_keeps_its_content(env_id):
    env = _make(env_id)
    assert env.unwrapped.version == 0 and env.unwrapped.scenario.splits == ("train", "test")
    digest = hashlib.sha256()
    for split in ("train", "test"):
        for index in range(50):
            task = env.unwrapped.tasks.get(f"{split}-{index}")
            digest.update(json.dumps(task.to_dict(), sort_keys=True).encode())
    assert digest.hexdigest() == V0_DIGESTS[env_id]


@pytest.mark.parametrize(("env_id", "kinds"), LEVELS, ids=LEVEL_IDS)
def test_every_level_has_20_test_and_10_validation_units_disjoint_between_splits(env_id, kinds):
    by_split = {split: unit_ids(split, kinds) for split in SPLITS}
    assert len(by_split["test"]) >= 20 and len(by_split["validation"]) >= 10
    for i, split in enumerate(SPLITS):
        assert all(unit.startswith(f"{split}-") for unit in by_split[split])
        for other in SPLITS[i + 1:]:
            assert not by_split[split] & by_split[other]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("split", SPLITS)
def test_the_generator_draws_every_unit_it_enumerates_and_no_other(split, kind):
    drawn = {generate_problem(split, index, (kind,), version=1).template for index in range(400)}
    assert drawn == unit_ids(split, (kind,))


def test_frames_split_by_fragment_and_templates_by_phrasing():
    for fragments in (OPENERS, CLOSERS):
        texts = [{f.text for f in fragments[split]} for split in SPLITS]
        assert not (texts[0] & texts[1] or texts[0] & texts[2] or texts[1] & texts[2])
    phrasings = {split: {t.text for kind in KINDS for _, templates in units(split, kind) for t in templates}
                 for split in SPLITS}
    assert not (phrasings["train"] & phrasings["validation"] or phrasings["train"] & phrasings["test"]
                or phrasings["validation"] & phrasings["test"])


@pytest.mark.parametrize(("env_id", "kinds"), LEVELS, ids=LEVEL_IDS)
def test_splits_share_no_number_or_name(env_id, kinds):
    seen = {}
    for split in SPLITS:
        tasks = _make(env_id, split=split).unwrapped.tasks
        problems = [tasks.get(f"{split}-{index}") for index in range(150)]
        numbers = {n for p in problems for n in p.numbers}
        low, high = VALUE_RANGES[split]
        assert all(low <= n <= high for n in numbers)
        names = {name for p in problems for name in NAMES[split] if name in p.question}
        seen[split] = numbers | names | {p.question for p in problems}
    assert not (seen["train"] & seen["validation"] or seen["train"] & seen["test"]
                or seen["validation"] & seen["test"])
    assert not (set(NAMES["train"]) & set(NAMES["validation"]) or set(NAMES["validation"]) & set(NAMES["test"]))


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("env_id", LEVEL_IDS)
def test_expert_solves_every_level_on_every_split(env_id, split):
    assert evaluate(env_id, "expert", episodes=8, split=split)["success"] == 1.0


@pytest.mark.parametrize("split", SPLITS)
def test_expert_solves_every_template_through_the_trainers_flat_actions(split):
    for kind in ("first_n", "guided", "medium", "hard"):
        env = FlatDiscreteAction(gym.make(V1.env_id, problems=(kind,), observation="features", mask_repeats=True),
                                 layout="admissible")
        first = {}
        for index in range(300):
            first.setdefault(generate_problem(split, index, (kind,), version=1).template, f"{split}-{index}")
        assert set(first) == unit_ids(split, (kind,))
        for template, task_id in first.items():
            env.reset(options={"task_id": task_id})
            episode, ended = env.unwrapped.episode, False
            while not ended:
                env.action_masks()  # numbers the calls admissible now
                action = env.unwrapped.scenario.expert_call(episode.task, episode.world, episode.history)
                flat = env.index(tuple(int(x) for x in episode.encode(action)))
                assert flat is not None, f"{template}: {action} has no flat action at capacity {env.capacity}"
                _, _, terminated, truncated, info = env.step(flat)
                ended = terminated or truncated
            assert info["metrics"]["success"], template


@pytest.mark.parametrize("env_id", [LEVEL_IDS[0], LEVEL_IDS[3], V1.env_id])
def test_v1_passes_the_env_checkers(env_id):
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)
    sb3_check_env(FlatDiscreteAction(gym.make(env_id, observation="features")), warn=False)


def test_validation_tasks_have_validation_ids_and_units():
    env = gym.make(V1.env_id, split="validation")
    _, info = env.reset(seed=0)
    assert info["task_id"].startswith("validation-") and info["unit_id"].startswith("validation-")
    assert info["unit_id"] == env.unwrapped.episode.task.template
    with pytest.raises(ValueError, match="split must be one of"):
        _make("AgentGym/Math-v0", split="validation")


def test_the_default_version_is_the_latest_and_a_bad_one_is_refused():
    assert MathEnv().version == 1 and gym.make("AgentGym/Math-L2-v1").unwrapped.version == 1
    for bad in (2, "1", True):
        with pytest.raises(ValueError, match=r"version must be one of \[0, 1\]"):
            MathEnv(version=bad)
    with pytest.raises(ValueError, match="first_n"):
        MathEnv(version=0, problems=("first_n",))


def test_the_docstring_states_the_splits_table():
    assert all(row in MathEnv.__doc__ for row in splits_table().splitlines())
