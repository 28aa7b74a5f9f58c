"""The trainers' path ablations: the token-count stub holds only inside its block, the bags-cached
ablation forgets the tokenized texts but keeps the bags, and the page gives every path's time for
each env it measured, as made and under each ablation."""

from __future__ import annotations

import gymnasium as gym
import pytest

from agentgym_envs.core import tokens
from agentgym_envs.core.features import bag_entries
from benchmarks.trainers_path_parts import ABLATIONS, ablated, main, tokens_counted


def tokens_after_one_step(env_id: str = "AgentGym/CustomerSupport-v0") -> int:
    env = gym.make(env_id)
    env.reset(seed=0)
    return env.step(env.action_space.sample())[4]["tokens_used"]


def test_the_stub_counts_no_token_inside_its_block_and_the_envs_count_again_after():
    with tokens_counted(False):
        assert tokens_after_one_step() == 0
    assert tokens_after_one_step() > 0


@pytest.mark.parametrize("ablation, bags_kept", [("as made", False), ("text bags cached", True)])
def test_between_chunks_the_tokenized_texts_are_forgotten_and_the_bags_only_when_not_cached(ablation, bags_kept):
    tokens.token_array("a ticket about a refund")
    bag_entries("a ticket about a refund", 16)
    with ablated(ablation) as forget:
        forget()
    assert tokens.token_array.cache_info().currsize == 0
    assert (bag_entries.cache_info().currsize > 0) == bags_kept


def test_the_page_has_a_row_of_every_path_per_env(tmp_path):
    assert main(["--envs", "AgentGym/Math-v0", "--steps", "20", "--rounds", "1", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "trainers_path_parts.md").read_text()
    assert "`python benchmarks/trainers_path_parts.py --envs AgentGym/Math-v0 --steps 20 --rounds 1" in page
    rows = [line for line in page.splitlines() if line.startswith("| AgentGym/Math-v0 |")]
    assert [row.split(" | ")[1] for row in rows] == list(ABLATIONS)
    assert all(len(row.split("|")) == 2 + 6 for row in rows)  # the env, the ablation, three times and a quotient
