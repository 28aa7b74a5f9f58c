"""The local-model agent: batched generation across environments and the context policy."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

from agentgym_envs.evaluation import ExpertPolicy, TransformersAgent, evaluate

pytest.importorskip("transformers")
MATH = "AgentGym/Math-v0"


def test_batched_generation_plays_several_environments(micro_model):
    agent = TransformersAgent(str(micro_model), device="cpu", max_new_tokens=6)
    summary = evaluate(MATH, agent, episodes=3, concurrency=2, action_mode="text", max_turns=2)
    assert summary["errors"] == 0 and summary["episodes"] == 3
    assert summary["llm_prompt_tokens"] > 0 and 0 < summary["llm_completion_tokens"] <= 6 * summary["turns"]
    assert summary["llm_truncated_prompts"] == 0


def expert_conversation(turns: int, slips: int = 0) -> tuple[list[dict], list[dict]]:
    """The expert's first ``turns`` calls, after ``slips`` replies that are no call (each answered by an error)."""
    env = gym.make("AgentGym/CustomerSupport-v0", action_mode="text")
    _, info = env.reset(seed=0)
    expert = ExpertPolicy(env)
    for _ in range(slips):
        _, _, _, _, info = env.step("Let me look into this for you.")
    for _ in range(turns):
        _, _, _, _, info = env.step(expert(None, info))
    return info["messages"], env.unwrapped.tool_schemas


def test_a_conversation_longer_than_the_window_loses_its_oldest_exchanges(micro_model):
    messages, tools = expert_conversation(3)
    full = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=10**6)  # measures, never cuts
    opening_ids, _ = full.prompt_ids(messages[:2], tools)
    last_ids, _ = full.prompt_ids(messages[:2] + messages[-2:], tools)
    window = len(last_ids) + 4  # room for the opening and the last exchange only
    small = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=window)
    with pytest.warns(UserWarning, match="longer than the model's window"):
        ids, cut = small.prompt_ids(messages, tools)
    assert cut and ids == last_ids and len(ids) <= small.prompt_budget
    assert ids[:len(opening_ids) - 3] == opening_ids[:len(opening_ids) - 3]  # the system prompt and task are kept


def test_the_cut_keeps_what_dropping_one_exchange_at_a_time_keeps_at_every_window(micro_model):
    messages, tools = expert_conversation(2, slips=4)
    full = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=10**6)
    opening = 2  # the system message and the task

    def one_at_a_time(budget: int) -> list[int]:  # the policy as stated: drop the oldest exchange until it fits
        kept = messages
        ids = full.prompt_ids(kept, tools)[0]
        while len(ids) > budget and len(kept) > opening:
            rest = kept[opening + 1:]
            while rest and rest[0]["role"] != "assistant":
                rest = rest[1:]
            kept = kept[:opening] + rest
            ids = full.prompt_ids(kept, tools)[0]
        return ids[-budget:]

    longest = len(full.prompt_ids(messages, tools)[0])
    for window in range(40, longest + 8, 11):
        agent = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=window)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ids, cut = agent.prompt_ids(messages, tools)
        assert ids == one_at_a_time(agent.prompt_budget) and cut == (longest > agent.prompt_budget)


def test_an_opening_longer_than_the_window_keeps_its_last_tokens(micro_model):
    messages, tools = expert_conversation(0)
    full_ids, _ = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=10**6).prompt_ids(messages, tools)
    small = TransformersAgent(str(micro_model), max_new_tokens=4, max_context_tokens=64)
    with pytest.warns(UserWarning):
        ids, cut = small.prompt_ids(messages, tools)
    assert cut and ids == full_ids[-60:]
    turn = small.respond([messages], tools)[0]
    assert turn.usage["llm_truncated_prompts"] == 1 and turn.usage["llm_prompt_tokens"] == 60


def test_a_window_without_room_to_answer_is_a_clear_error(micro_model):
    with pytest.raises(ValueError, match="no room for 300 new tokens"):
        TransformersAgent(str(micro_model), max_new_tokens=300, max_context_tokens=200)
