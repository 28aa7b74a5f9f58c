"""The masks an algorithm consumes admit only valid calls: the per-dimension tool mask, the
argument mask with repeats left out, and the flat joint mask of every env family."""

from __future__ import annotations

import importlib.util
import os
import pickle
from itertools import product
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agentgym_envs.scenarios.tau2.upstream.files import installed_package_data
from agentgym_envs.wrappers import FlatDiscreteAction, actions
from agentgym_envs.wrappers.actions import CallTable, new_calls

CS = "AgentGym/CustomerSupport-v0"
SHARED_TAU2 = Path(__file__).resolve().parents[1].parent / "shared" / "tau2"
# the retail and airline data: $TAU2_DATA_DIR, else the reference copy ../shared/tau2, else the installed tau2 package's
TAU2_DATA = Path(os.environ.get("TAU2_DATA_DIR") or (SHARED_TAU2 if SHARED_TAU2.is_dir() else installed_package_data() or SHARED_TAU2))
NEEDS = {
    "tau2_retail": TAU2_DATA.is_dir(),
    "tau2_airline": TAU2_DATA.is_dir(),
    "tau2_airline_v1": TAU2_DATA.is_dir(),
    "tau2_telecom": importlib.util.find_spec("tau2") is not None,
}


@pytest.mark.parametrize("family", ["customer_support", "math", "coding", "tau2_retail", "tau2_airline", "tau2_airline_v1",
                                    "tau2_telecom", "support_team"])
def test_every_masked_in_flat_action_is_a_valid_call_over_masked_random_play(family, benchmark_script):
    if not NEEDS.get(family, True):
        pytest.skip(f"{family} needs data that is not here")
    module = benchmark_script("admissible_actions")
    counts = module.check_masked_play(module.env_makers(str(TAU2_DATA))[family], states=120, seed=0)
    assert counts["admitted"] > counts["states"]
    assert counts["invalid"] == 0 and counts["stepped_invalid"] == 0, counts


def test_tool_dimension_admits_only_tools_whose_every_argument_has_a_fitting_row():
    env = gym.make(CS)
    env.reset(seed=0)
    base = env.unwrapped
    masks, (tools, argument) = base.action_masks(), base.call_masks()
    assert np.array_equal(masks[: len(base.tool_names)], tools)
    for t, arity in enumerate(base.tool_arities):
        assert tools[t] == all(argument[t, k].any() for k in range(arity))
    refund = base.tool_names.index("refund")
    assert not tools[refund] and tools.any()  # no invoice row yet: refund cannot be filled


def test_mask_repeats_leaves_out_a_call_already_made_from_every_mask():
    env = FlatDiscreteAction(gym.make(CS, mask_repeats=True))
    env.reset(seed=0)
    base, episode = env.unwrapped, env.unwrapped.episode
    lookup = base.tool_names.index("lookup_user")
    email = next(i for i, row in enumerate(episode.entities.rows) if row.kind == "email")
    index = int(env.offsets[lookup]) + email
    assert env.action_masks()[index] and base.call_masks()[1][lookup, 0, email]
    env.step(index)
    tools, argument = base.call_masks()
    assert not env.action_masks()[index] and not argument[lookup, 0, email]
    assert not tools[lookup] and not base.action_masks()[lookup]  # the one email was used


def test_without_mask_repeats_a_made_call_stays_admitted():
    env = FlatDiscreteAction(gym.make(CS))
    env.reset(seed=0)
    lookup = env.unwrapped.tool_names.index("lookup_user")
    email = next(i for i, row in enumerate(env.unwrapped.episode.entities.rows) if row.kind == "email")
    env.step(int(env.offsets[lookup]) + email)
    assert env.action_masks()[int(env.offsets[lookup]) + email]


def test_admissible_layout_numbers_keep_their_call_for_the_whole_episode():
    env = FlatDiscreteAction(gym.make("AgentGym/Math-v0"), layout="admissible", capacity=16)
    env.reset(seed=3)
    assert env.action_space.n == 16 * len(env.arities)
    before = {int(i): tuple(env.action(i)) for i in np.flatnonzero(env.action_masks())}
    rng = np.random.default_rng(0)
    for _ in range(3):
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            break
    assert all(tuple(env.action(i)) == call for i, call in before.items())


@pytest.mark.skipif(not TAU2_DATA.is_dir(), reason="needs the tau2 data")
def test_product_layout_too_large_is_refused_with_the_way_out():
    with pytest.raises(ValueError, match="layout='admissible'"):
        FlatDiscreteAction(gym.make("AgentGym/Tau2Retail-v0", data_dir=str(TAU2_DATA)))


def test_new_calls_are_the_products_tuples_naming_a_new_row_in_the_products_order():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n, arity = int(rng.integers(0, 10)), int(rng.integers(0, 4))
        seen = int(rng.integers(0, n + 1))
        pools = [sorted(rng.choice(n, int(rng.integers(0, n + 1)), replace=False).tolist()) for _ in range(arity)]
        expected = [rows for rows in product(*pools) if seen == 0 or max(rows, default=-1) >= seen]
        assert list(new_calls(pools, seen)) == expected


def test_a_call_table_numbers_a_tool_once_every_argument_has_a_row_in_the_products_order():
    table = CallTable([("order", "item"), ("order",)], capacity=8)
    table.extend([0, 1], ["order", "order"])
    assert table.calls == [[], [(0,), (1,)]]  # no item yet: the two-argument tool has no call
    table.extend([2, 3], ["item", "order"])
    assert table.calls == [[(0, 2), (1, 2), (3, 2)], [(0,), (1,), (3,)]]


def test_unknown_layout_is_refused_naming_the_layouts():
    with pytest.raises(ValueError, match="product"):
        FlatDiscreteAction(gym.make(CS), layout="bogus")


def reference_joint_mask(env: FlatDiscreteAction) -> np.ndarray:
    """The joint mask computed call by call, tool by tool (what ``action_masks`` must equal)."""
    tools, argument = env.unwrapped.call_masks()
    episode = env.unwrapped.episode
    mask = np.zeros(env.action_space.n, dtype=bool)
    for tool, arity in enumerate(env.arities):
        if not tools[tool]:
            continue
        start = int(env.offsets[tool])
        if env.layout == "admissible":
            for number, rows in enumerate(env.call_table().calls[tool]):
                mask[start + number] = all(argument[tool, position, row] for position, row in enumerate(rows))
        else:
            block = np.ones(1, dtype=bool)
            for position in range(arity):
                block = np.outer(block, argument[tool, position]).ravel()
            mask[start : start + len(block)] = block
        if episode.mask_repeats:
            for rows in episode.made_rows[tool]:
                structured = np.zeros(1 + max(env.arities), dtype=np.int64)
                structured[0], structured[1 : 1 + arity] = tool, rows
                index = env.index(structured)
                if index is not None:
                    mask[index] = False
    return mask


@pytest.mark.parametrize("family", ["customer_support", "math", "tau2_retail", "tau2_airline_v1", "support_team"])
@pytest.mark.parametrize("layout, capacity", [("admissible", 32), ("admissible", 3), ("product", 0)])
@pytest.mark.parametrize("mask_repeats", [True, False])
def test_joint_mask_equals_the_call_by_call_mask_in_every_state_of_random_play(family, layout, capacity, mask_repeats, benchmark_script):
    if not NEEDS.get(family, True):
        pytest.skip(f"{family} needs data that is not here")
    make = benchmark_script("admissible_actions").env_makers(str(TAU2_DATA))[family]
    try:
        env = FlatDiscreteAction(make(mask_repeats=mask_repeats), layout=layout, capacity=capacity or 128)
    except ValueError as exc:  # a product layout too large for the family
        pytest.skip(str(exc))
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    states = episodes = 0
    while states < 150:
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, reference_joint_mask(env))
        np.testing.assert_array_equal(info["action_mask"], mask)
        assert info["action_mask"] is not mask and env.action_masks() is not mask  # fresh copies
        mask[:] = False  # a caller changing its copy changes no later answer
        assert env.action_masks().any() == info["action_mask"].any()
        admitted = np.flatnonzero(info["action_mask"])
        action = rng.choice(admitted) if len(admitted) and rng.random() < 0.9 else rng.integers(env.action_space.n)
        _, _, terminated, truncated, info = env.step(int(action))
        states += 1
        if terminated or truncated:
            _, info = env.reset()
            episodes += 1
    assert episodes >= 2


AIRLINE_V1 = pytest.param("AgentGym/Tau2Airline-L3-v1", marks=pytest.mark.skipif(not TAU2_DATA.is_dir(), reason="needs the tau2 data"))


@pytest.mark.parametrize("env_id", ["AgentGym/Math-v0", CS, AIRLINE_V1])  # airline -v1: rows offered out of order, some held
def test_numberings_shared_between_episodes_number_every_call_as_a_numbering_of_its_own(env_id, monkeypatch):
    def play(env: FlatDiscreteAction) -> list:
        rng, seen = np.random.default_rng(0), []
        env.reset(seed=2)
        for _ in range(400):
            mask = env.action_masks()
            seen.append(([list(calls) for calls in env.call_table().calls], mask))
            _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            if terminated or truncated:
                env.reset()
        return seen

    options = {"data_dir": str(TAU2_DATA)} if "Tau2" in env_id else {}
    shared = play(FlatDiscreteAction(gym.make(env_id, mask_repeats=True, **options), layout="admissible"))
    monkeypatch.setattr(actions, "MAX_SHARED", 0)  # every episode numbers its calls itself
    own = play(FlatDiscreteAction(gym.make(env_id, mask_repeats=True, **options), layout="admissible"))
    for (calls, mask), (own_calls, own_mask) in zip(shared, own, strict=True):
        assert calls == own_calls
        np.testing.assert_array_equal(mask, own_mask)


def test_an_env_pickled_mid_episode_plays_on_as_the_original_without_its_remembered_masks():
    """A checkpoint pickles the envs: their numberings and masks remembered are left out, and rebuilt alike."""
    env = FlatDiscreteAction(gym.make("AgentGym/Math-L3-v1", observation="features", mask_repeats=True), layout="admissible")
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def play(env: FlatDiscreteAction, rng: np.random.Generator, steps: int) -> list:
        seen = []
        for _ in range(steps):
            mask = env.action_masks()
            observation, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            seen.append((mask, observation, reward))
            if terminated or truncated:
                env.reset()
        return seen

    play(env, rng, 300)
    copy, copy_rng = pickle.loads(pickle.dumps((env, rng)))
    assert env._roots and env.unwrapped.episode._layout._grown
    assert not copy._roots and not copy.unwrapped.episode._layout._grown
    for (mask, observation, reward), (mask_, observation_, reward_) in zip(play(env, rng, 300), play(copy, copy_rng, 300)):
        np.testing.assert_array_equal(mask, mask_)
        np.testing.assert_array_equal(observation, observation_)
        assert reward == reward_


def test_joint_mask_follows_steps_taken_under_the_wrapper():
    env = FlatDiscreteAction(gym.make(CS, mask_repeats=True), layout="admissible", capacity=32)
    env.reset(seed=1)
    before = env.action_masks()
    env.unwrapped.step(env.action(int(np.flatnonzero(before)[0])))  # the base env stepped directly
    np.testing.assert_array_equal(env.action_masks(), reference_joint_mask(env))
    assert not np.array_equal(env.action_masks(), before)


def test_the_default_capacity_is_the_scenarios_so_the_expert_solves_every_math_range_sum(benchmark_script):
    module = benchmark_script("admissible_actions")
    make = module.level_maker("AgentGym/Math-L2-v0", str(TAU2_DATA))
    assert FlatDiscreteAction(make(), layout="admissible").capacity == 256
    assert FlatDiscreteAction(gym.make(CS), layout="admissible").capacity == 64
    assert module.expert_episodes(make, 12) == (12, 12)  # test tasks 0-11: consecutive-number sums among them


def test_at_capacity_64_the_expert_cannot_finish_every_math_range_sum(benchmark_script):
    module = benchmark_script("admissible_actions")
    solved, played = module.expert_episodes(module.level_maker("AgentGym/Math-L2-v0", str(TAU2_DATA)), 12, capacity=64)
    assert solved < played == 12  # a range sum's subtract(sum, sum) is past the calculator's 64th call


def test_the_ceiling_page_measures_only_the_ladders_named_and_keeps_the_other_rows(benchmark_script):
    module = benchmark_script("admissible_actions")
    kept = {"Math-L0-v0": "| Math-L0-v0 | 256 | 7 of 7 |"}
    page = module.expert_page(2, str(TAU2_DATA), only=["CustomerSupport-v0"], kept=kept)
    rows = [line for line in page.splitlines() if line.startswith("| ") and "-v" in line]
    assert rows[0] == "| CustomerSupport-L0-v0 | 64 | 2 of 2 |" and kept["Math-L0-v0"] in rows
    assert len(rows) == len(module.family("CustomerSupport-v0").ids()) + 1


@pytest.mark.skipif(not TAU2_DATA.is_dir(), reason="needs the tau2 data")
def test_airline_v1_numbers_searches_only_over_the_airports_and_dates_the_episode_named():
    env = FlatDiscreteAction(gym.make("AgentGym/Tau2Airline-L3-v1", data_dir=str(TAU2_DATA), split="test"), layout="admissible")
    env.reset(seed=0)
    episode = env.unwrapped.episode
    request = episode.scenario.request_text(episode.prompt)
    search = env.unwrapped.tool_names.index("search_direct_flight")
    calls = env.call_table().calls[search]
    assert calls, "the request names a route and a date: their searches are numbered at once"
    for rows in calls:
        assert all(episode.entities.rows[row].text in request for row in rows)
    unnamed = next(r for r, row in enumerate(episode.entities.rows) if row.kind == "airport" and row.text not in request)
    assert not any(unnamed in rows for rows in calls)
    assert episode.entities.rows[unnamed].kind == "airport" and episode.flat_rows is not None


@pytest.mark.skipif(not TAU2_DATA.is_dir(), reason="needs the tau2 data")
def test_airline_v0_flat_layout_takes_in_every_row_as_it_comes():
    env = gym.make("AgentGym/Tau2Airline-v0", data_dir=str(TAU2_DATA))
    env.reset(seed=0)
    assert env.unwrapped.episode.flat_rows is None


@pytest.mark.skipif(not TAU2_DATA.is_dir(), reason="needs the tau2 data")
def test_through_flat_actions_the_expert_searches_and_books_on_airline_v1_but_not_v0(benchmark_script):
    module = benchmark_script("admissible_actions")
    assert module.expert_episodes(module.level_maker("AgentGym/Tau2Airline-L3-v1", str(TAU2_DATA)), 16) == (16, 16)
    solved, played = module.expert_episodes(module.level_maker("AgentGym/Tau2Airline-L2-v0", str(TAU2_DATA)), 16)
    assert solved < played  # at -v0 the first airports' searches fill the block (64 calls)


@pytest.mark.parametrize("env_id", ["AgentGym/Math-v0", "AgentGym/Math-L3-v1", CS])
def test_remembered_kind_masks_equal_the_masks_computed_from_every_row_in_every_state(env_id):
    env = gym.make(env_id)
    env.action_space.seed(0)
    env.reset(seed=0)
    for step in range(600):
        episode = env.unwrapped.episode
        layout, rows = episode._layout, episode.entities.rows
        expected = layout.empty_argument_mask(episode.entities.capacity)
        expected[:, :, : len(rows)] |= layout.fitting(rows)
        tools, kinds = episode.kind_masks()
        np.testing.assert_array_equal(kinds, expected)
        np.testing.assert_array_equal(tools, expected.any(axis=2).all(axis=1))
        action = env.action_space.sample(mask=env.unwrapped.sample_mask()) if step % 2 else env.action_space.sample()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()


def masked_play(steps: int) -> tuple[list[bytes], FlatDiscreteAction]:
    """The joint masks of ``steps`` masked random steps on CustomerSupport-v0 (features, flat admissible actions)."""
    env = features_flat_env()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    seen = []
    for _ in range(steps):
        mask = env.action_masks()
        seen.append(mask.tobytes())
        *_, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            env.reset()
    return seen, env


def test_the_numberings_kept_for_later_episodes_stay_within_their_byte_budget_and_change_no_mask(monkeypatch):
    unbounded, _ = masked_play(600)
    monkeypatch.setattr(actions, "MAX_SHARED_BYTES", 4096)
    bounded, env = masked_play(600)
    assert bounded == unbounded  # sharing fewer numberings only costs time
    one = next(iter(env._roots.values()))
    assert 0 < env._shared_bytes < 4096 + one.cells.nbytes + one.numbered.nbytes


def features_flat_env() -> FlatDiscreteAction:
    """CustomerSupport-v0 on the trainers' path: the features, repeats masked, flat admissible actions."""
    return FlatDiscreteAction(gym.make(CS, observation="features", mask_repeats=True), layout="admissible")


@pytest.mark.parametrize("action", [1.7, "3", b"1", True, float("nan"), None, [0], np.array([0]), np.array(2.0), 10**30, -1])
def test_an_action_that_is_no_integer_of_the_space_is_refused_naming_the_space(action):
    env = features_flat_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"outside the action space Discrete\(\d+\) \(an integer in \[0, \d+\)\)"):
        env.step(action)


@pytest.mark.parametrize("action", [np.int64(3), np.array(3), np.uint8(3)])
def test_numpy_integers_are_the_same_actions_as_python_ints(action):
    def first_call(action):
        env = features_flat_env()
        env.reset(seed=0)
        return env.step(action)[4]["tool_call"]

    assert first_call(action) == first_call(3) is not None


def test_a_step_or_mask_before_reset_is_a_runtime_error_asking_for_reset():
    env = features_flat_env()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.action_masks()
