"""Token counts: a long text counted piece by piece gives the whole text's cl100k count."""

from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentgym_envs  # noqa: F401  (registers the envs)
from agentgym_envs.core.tokens import PIECEWISE_FROM, clean_pieces, count_tokens, encoding

# letters, digits, apostrophes, punctuation and every kind of whitespace the pre-tokenizer treats apart
ALPHABET = st.sampled_from(list("ab Z9'#.,:-_{}\"\n\r\t") + [" \n", "\n\n", "'s", "'ll", "\u00a0", "\u2028", "\x1c", "é", "中"])


def whole_count(text: str) -> int:
    return len(encoding().encode_ordinary(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, min_size=PIECEWISE_FROM // 2, max_size=PIECEWISE_FROM * 2).map("".join))
def test_a_long_text_counted_by_pieces_has_the_whole_texts_count(text):
    assert count_tokens(text) == whole_count(text)
    assert "".join(clean_pieces(text)) == text


@pytest.mark.parametrize("env_id", ["AgentGym/Tau2Retail-L1-v1", "AgentGym/Tau2Airline-v1", "AgentGym/Tau2Telecom-v1",
                                    "AgentGym/Coding-v1", "AgentGym/Math-v1", "AgentGym/CustomerSupport-v1"])
def test_prompts_are_counted_as_cl100k_counts_them_whole(env_id):
    env = gym.make(env_id, observation="features")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        prompt = env.unwrapped.episode.prompt
        assert info["tokens_used"] == whole_count(prompt)


def test_a_cut_falls_only_after_a_newline_that_a_non_space_character_follows():
    assert list(clean_pieces("TICKET\nline one\n  indented\n\nPOLICY\n")) == ["TICKET\n", "line one\n  indented\n\n",
                                                                             "POLICY\n"]
