"""The trainers' path ablations: the token-count stub holds only inside its block, and the page
gives every path's time for each env it measured, as made and under each ablation."""

from __future__ import annotations

import gymnasium as gym

from benchmarks.trainers_path_parts import ABLATIONS, main, tokens_counted


def tokens_after_one_step(env_id: str = "AgentGym/CustomerSupport-v0") -> int:
    env = gym.make(env_id)
    env.reset(seed=0)
    return env.step(env.action_space.sample())[4]["tokens_used"]


def test_the_stub_counts_no_token_inside_its_block_and_the_envs_count_again_after():
    with tokens_counted(False):
        assert tokens_after_one_step() == 0
    assert tokens_after_one_step() > 0


def test_the_page_has_a_row_of_every_path_per_env(tmp_path):
    assert main(["--envs", "AgentGym/Math-v0", "--steps", "20", "--rounds", "1", "--out", str(tmp_path)]) == 0
    page = (tmp_path / "trainers_path_parts.md").read_text()
    assert "`python benchmarks/trainers_path_parts.py --envs AgentGym/Math-v0 --steps 20 --rounds 1" in page
    rows = [line for line in page.splitlines() if line.startswith("| AgentGym/Math-v0 |")]
    assert [row.split(" | ")[1] for row in rows] == list(ABLATIONS)
    assert all(len(row.split("|")) == 2 + 6 for row in rows)  # the env, the ablation, three times and a quotient
