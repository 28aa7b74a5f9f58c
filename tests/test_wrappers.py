import json

import gymnasium as gym
import numpy as np
import pytest

from agentgym_envs.core import encode
from agentgym_envs.evaluation import ExpertPolicy, run_episode
from agentgym_envs.wrappers import (
    PAD_ID,
    BagOfTokensObservation,
    FlatDiscreteAction,
    TokenIdsObservation,
    TrajectoryRecorder,
)
from agentgym_envs.wrappers.tokens import bag_counts

CS = "AgentGym/CustomerSupport-v0"


def test_token_ids_layout_puts_task_first_and_entity_rows_at_fixed_offsets():
    env = TokenIdsObservation(gym.make(CS), context_len=128, entity_len=8)
    obs, _ = env.reset(seed=0)
    episode = env.unwrapped.episode
    task = encode(episode.prompt)[:64]
    assert tuple(obs[: len(task)]) == task
    for i in (0, len(episode.entities) - 1):
        row = episode.entities.rows[i]
        ids = encode(f"{row.kind}: {row.text}")[:8]
        block = obs[128 + 8 * i : 128 + 8 * (i + 1)]
        assert tuple(block[: len(ids)]) == ids and (block[len(ids) :] == PAD_ID).all()
    assert (obs[128 + 8 * len(episode.entities) :] == PAD_ID).all()
    assert env.observation_space.contains(obs)


def test_token_ids_report_how_many_leading_ids_are_the_task_prompt():
    env = TokenIdsObservation(gym.make(CS), context_len=64)
    _, info = env.reset(seed=0)
    task = encode(env.unwrapped.episode.prompt)
    assert info["task_tokens"] == min(len(task), 32)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert info["task_tokens"] == min(len(task), 32)  # the prompt stays at the front all episode


def test_token_ids_keep_most_recent_turns_when_context_is_full():
    env = TokenIdsObservation(gym.make(CS, action_mode="text", max_turns=30), context_len=200)
    env.reset(seed=0)
    for topic in ("billing", "refunds", "rate_limits", "password_reset"):
        obs, *_ = env.step(json.dumps({"name": "search_kb", "arguments": {"topic": topic}}))
    episode = env.unwrapped.episode
    task = encode(episode.prompt)[:100]
    turns = [encode(t) for t in episode.turn_texts]
    context = tuple(t for t in obs[:200] if t != PAD_ID)
    shown = [k for k in range(1, 5) if context == task + sum(turns[-k:], ())]
    assert shown and shown[0] < 4  # the latest turns, not all of them


def test_token_ids_keep_the_head_of_a_latest_turn_too_long_for_the_context():
    env = TokenIdsObservation(gym.make(CS, action_mode="text"), context_len=64)
    env.reset(seed=0)
    obs, *_ = env.step("x" * 2000)
    task = encode(env.unwrapped.episode.prompt)[:32]
    head = encode(env.unwrapped.episode.turn_texts[-1])[: 64 - len(task)]
    assert tuple(obs[len(task) : 64]) == head


def test_bag_of_tokens_counts_change_with_the_conversation():
    env = BagOfTokensObservation(gym.make(CS), dim=256)
    first, _ = env.reset(seed=0)
    second, *_ = env.step(ExpertPolicy(env)(None, {}))
    assert first.shape == (256 + 32,) and not np.array_equal(first, second)
    assert env.observation_space.contains(second)


@pytest.mark.parametrize("history_turns", [8, 2])
def test_bag_of_tokens_kept_step_by_step_equals_counting_the_whole_episode(history_turns):
    env = BagOfTokensObservation(gym.make(CS, history_turns=history_turns, max_turns=20))
    rng = np.random.default_rng(0)
    sliding = rows_added = 0
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        expert, episode, done = ExpertPolicy(env), env.unwrapped.episode, False
        env.action_space.seed(seed)
        while True:
            counts = np.zeros(env.observation_space.shape, dtype=np.float32)
            counts[: env.dim] = np.log1p(bag_counts(episode, env.dim))
            counts[env.dim : env.dim + len(episode.entities)] = 1.0
            assert obs.tobytes() == counts.tobytes()
            if done:
                break
            rows = len(episode.entities)
            obs, _, terminated, truncated, _ = env.step(expert(None, {}) if rng.random() < 0.5 else env.action_space.sample())
            done = terminated or truncated
            sliding += len(episode.turn_texts) > history_turns
            rows_added += len(episode.entities) > rows
    assert sliding and rows_added  # turns left the shown history and entity rows were added


def test_flat_discrete_maps_back_to_structured_calls_and_masks_valid_ones():
    env = FlatDiscreteAction(gym.make(CS))
    env.reset(seed=0)
    masks = env.action_masks()
    assert masks.shape == (env.action_space.n,)
    for index in np.flatnonzero(masks)[:40]:
        call, problem = env.unwrapped.episode.decode(env.action(index))
        assert call is not None, problem
    refund_block = env.offsets[5]
    assert tuple(env.action(refund_block + 3 * 32 + 7)) == (5, 3, 7)


def test_flat_discrete_rejects_out_of_range_actions():
    env = FlatDiscreteAction(gym.make(CS))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="Discrete"):
        env.step(env.action_space.n)


def test_recorder_writes_one_openai_chat_line_per_episode(tmp_path):
    path = tmp_path / "traj.jsonl"
    env = TrajectoryRecorder(gym.make(CS), path)
    for seed in range(3):
        run_episode(env, ExpertPolicy(env), seed=seed)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3
    assert lines[0]["messages"][0]["role"] == "system" and lines[0]["tools"][0]["type"] == "function"
    assert lines[0]["metrics"]["success"] == 1.0
