"""``observation="features"``: a Box vector stock SB3 policies train on, kept step by step."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.wrappers import FlatDiscreteAction

CS = "AgentGym/CustomerSupport-v0"


def features_env(**kwargs):
    return gym.make(CS, observation="features", **kwargs)


def test_features_mode_passes_gymnasium_and_sb3_checks_with_both_action_spaces():
    check_env(features_env().unwrapped, skip_render_check=True)
    sb3_check_env(features_env(), warn=False)
    sb3_check_env(FlatDiscreteAction(features_env()), warn=False)


def test_text_stays_the_default_observation():
    assert isinstance(gym.make(CS).observation_space, gym.spaces.Text)


def test_unknown_observation_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="features"):
        gym.make(CS, observation="pixels")


def test_features_record_calls_per_tool_and_rows_used_turn_and_last_call():
    env = features_env()
    obs, _ = env.reset(seed=0)
    encoder, episode = env.unwrapped.features, env.unwrapped.episode
    assert env.observation_space.contains(obs) and not obs[encoder.slices["calls"]].any()
    action = ExpertPolicy(env)(obs, {})
    obs, _, _, _, info = env.step(action)
    tool, row = int(action[0]), int(action[1])
    assert obs[encoder.slices["calls"]][tool] == pytest.approx(1 / env.unwrapped.max_turns)
    used = obs[encoder.slices["used"]].reshape(encoder.n_tools, encoder.max_entities)
    assert used[tool, row] == 1.0 and used.sum() == len(episode.last_call[1])
    assert obs[encoder.slices["turn"]][0] == pytest.approx(1 / env.unwrapped.max_turns)
    assert tuple(obs[encoder.slices["last"]]) == (info["valid"], info["correct"]) == (True, True)
    assert obs[encoder.slices["result"]].any()


def test_features_mark_the_last_calls_rows_apart_from_earlier_ones():
    env = features_env()
    obs, info = env.reset(seed=0)
    expert, encoder = ExpertPolicy(env), env.unwrapped.features
    first = expert(obs, info)
    obs, _, _, _, info = env.step(first)
    second = expert(obs, info)
    obs, _, _, _, _ = env.step(second)
    used = obs[encoder.slices["used"]].reshape(encoder.n_tools, encoder.max_entities)
    assert used[int(second[0]), int(second[1])] == 1.0
    assert used[int(first[0]), int(first[1])] == 0.5
    assert set(np.unique(used)) <= {0.0, 0.5, 1.0}


def test_features_keep_each_tested_programs_verdict_after_later_calls():
    env = gym.make("AgentGym/Coding-L0-v0", observation="features")
    obs, _ = env.reset(seed=0)
    episode, encoder = env.unwrapped.episode, env.unwrapped.features
    solution = next(i for i, row in enumerate(episode.entities.rows) if row.text == episode.task.solution)
    wrong = (solution + 1) % len(episode.entities.rows)
    run_tests = env.unwrapped.tool_names.index("run_tests")
    for row in (solution, wrong):
        obs, *_ = env.step(np.array([run_tests, row]))
    verdicts = obs[encoder.slices["verdicts"]].reshape(encoder.max_entities, 2)
    assert tuple(verdicts[solution]) == (1.0, 0.0) and tuple(verdicts[wrong]) == (0.0, 1.0)
    assert verdicts.sum() == 2.0


def test_features_hold_verdicts_only_where_the_scenario_gives_them():
    size = lambda part: part.stop - part.start  # noqa: E731
    coding = gym.make("AgentGym/Coding-L0-v0", observation="features").unwrapped.features
    assert size(features_env().unwrapped.features.slices["verdicts"]) == 0
    assert size(coding.slices["verdicts"]) == 2 * coding.max_entities and size(coding.slices["hint"]) == 0


def test_features_hold_the_levels_hint_in_a_block_of_its_own():
    def hint_block(env_id: str, seed: int) -> tuple[str, np.ndarray]:
        env = gym.make(env_id, observation="features")
        obs, _ = env.reset(seed=seed)
        return env.unwrapped.episode.task.kind, obs[env.unwrapped.features.slices["hint"]]

    blocks = {}
    for seed in range(40):
        kind, block = hint_block("AgentGym/CustomerSupport-L3-v0", seed)
        assert block.any() and blocks.setdefault(kind, block.tobytes()) == block.tobytes(), "one block per ticket kind"
    assert len(blocks) == 5
    assert not hint_block(CS, 0)[1].any(), "-v0 writes no Category: line: zeros, the same space"
    team = gym.make("AgentGym/SupportTeam-L0-v0", observation="features").unwrapped
    assert team.features.slices["hint"].stop - team.features.slices["hint"].start == 16


def test_features_tell_rows_of_the_same_kind_apart_and_one_hot_their_kind():
    env = features_env()
    obs, _ = env.reset(seed=0)
    encoder, rows = env.unwrapped.features, env.unwrapped.episode.entities.rows
    block = obs[encoder.slices["rows"]].reshape(encoder.max_entities, encoder.row_width)
    assert (block[: len(rows), 0] > 0).all() and not block[len(rows) :].any()
    assert ((block[: len(rows), 1 : 2 + len(encoder.kinds)] > 0).sum(axis=1) == 1).all()
    same_kind = [i for i, row in enumerate(rows) if row.kind == rows[0].kind]
    texts = {block[i, 2 + len(encoder.kinds) :].tobytes() for i in same_kind}
    assert len(same_kind) > 1 and len(texts) == len(same_kind)


def test_features_kept_step_by_step_equal_a_fresh_encoding_of_the_same_state():
    env = features_env(max_turns=12)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        done = False
        env.action_space.seed(seed)
        while not done:
            action = env.action_space.sample(mask=env.unwrapped.sample_mask())
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        encoder, episode = env.unwrapped.features, env.unwrapped.episode
        fresh = encoder.reset(episode)  # rows and task from scratch; calls and results are history
        for part in ("task", "rows"):
            assert np.array_equal(fresh[encoder.slices[part]], obs[encoder.slices[part]])


def play_alike(env: gym.Env, restored: gym.Env, expert: ExpertPolicy) -> None:
    """Play the expert's calls on both envs to the episode's end: the same observation at every step."""
    done = False
    while not done:
        action = expert(None, {})
        obs, _, terminated, truncated, _ = env.step(action)
        again, *_ = restored.step(action)
        assert np.array_equal(obs, again)
        done = terminated or truncated


def test_an_env_restored_from_a_pickle_mid_episode_observes_as_the_original():
    """A checkpoint pickles the envs mid-episode: rows a call reveals after the restore reach the vector."""
    env = gym.make("AgentGym/Math-v1", observation="features")
    env.reset(seed=1)
    restored = pickle.loads(pickle.dumps(env))
    expert, rows_before = ExpertPolicy(env.unwrapped), len(env.unwrapped.episode.entities.rows)
    play_alike(env, restored, expert)
    assert len(env.unwrapped.episode.entities.rows) > rows_before


def test_an_encoder_pickled_without_its_result_entries_clears_the_last_result_after_the_restore():
    """A checkpoint of an earlier version holds no ``_result_entries``: the restore reads them off the vector."""
    env = gym.make("AgentGym/Math-v1", observation="features")
    env.reset(seed=1)
    expert = ExpertPolicy(env.unwrapped)
    env.step(expert(None, {}))
    earlier = copy.copy(env.unwrapped.features)
    earlier.__dict__ = {name: value for name, value in earlier.__dict__.items() if name != "_result_entries"}
    restored = pickle.loads(pickle.dumps(env))
    restored.unwrapped.features = pickle.loads(pickle.dumps(earlier))
    play_alike(env, restored, expert)


def test_features_work_with_make_vec():
    envs = gym.make_vec(CS, num_envs=2, vectorization_mode="sync", observation="features")
    obs, _ = envs.reset(seed=0)
    obs, *_ = envs.step(envs.action_space.sample())
    assert obs.shape == (2, *envs.single_observation_space.shape) and obs.dtype == np.float32


def test_hashed_words_counts_each_word_in_its_crc32_bucket_at_unit_length():
    import zlib

    from agentgym_envs.core.features import hashed_words

    for text, dim in (("Order 123: refund order 123 NOW", 16), ("", 8), ("!!! ...", 8), ("a b c d e f g h i j", 4)):
        counts = np.zeros(dim, dtype=np.float32)
        for word in text.lower().replace(":", " ").replace("!", " ").replace(".", " ").split():
            counts[zlib.crc32(word.encode()) % dim] += 1.0
        norm = float(np.linalg.norm(counts))
        expected = counts / norm if norm else counts
        got = hashed_words(text, dim)
        assert got.dtype == np.float32 and not got.flags.writeable
        np.testing.assert_array_equal(got, expected)


def test_bag_entries_are_the_nonzero_entries_of_hashed_words_for_texts_long_and_short():
    from agentgym_envs.core.features import bag_entries, hashed_words

    words = ["Order", "ORD-12", "İstanbul", "Straße", "\u212aelvin", "café", "x_y", "9.50", "order"]
    for n in (0, 1, 2, 9, 40):
        text = " ".join(words[i % len(words)] for i in range(n))
        for dim in (4, 16, 64):
            dense = np.zeros(dim, dtype=np.float32)
            for bucket, value in bag_entries(text, dim):
                dense[bucket] = value
            np.testing.assert_array_equal(dense, hashed_words(text, dim))


def test_a_rows_bag_is_its_texts_hashed_words_times_the_rows_scale():
    from agentgym_envs.core.features import hashed_words

    env = features_env()
    obs, _ = env.reset(seed=0)
    encoder, rows = env.unwrapped.features, env.unwrapped.episode.entities.rows
    block = obs[encoder.slices["rows"]].reshape(encoder.max_entities, encoder.row_width)
    scale = 1.0 / np.sqrt(encoder.max_entities)
    for line, row in zip(block, rows):
        bag = hashed_words(row.text[: encoder.scenario.max_entity_chars], encoder.row_dim)
        np.testing.assert_array_equal(line[-encoder.row_dim :], (scale * bag).astype(np.float32))
        assert line[0] == np.float32(scale)
