"""The failure census of a chat model's greedy episodes: each episode under the first kind that
applies, and the results page with its command."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agentgym_envs.scenarios.customer_support.tickets import KIND_DIFFICULTY

pytest.importorskip("transformers")

@pytest.fixture
def failures(benchmark_script):
    return benchmark_script("llm_analysis").subcommand("failures")


class ScriptedAgent:
    """Replies ``replies`` in turn to every conversation, each reported as ``tokens`` long."""

    def __init__(self, replies: list[str], tokens: int, limit: int) -> None:
        self.replies, self.tokens, self.sampling = replies, tokens, SimpleNamespace(max_new_tokens=limit)
        self.calls, self.settings = 0, {"name": "scripted"}

    def respond(self, conversations, tools):
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        return [SimpleNamespace(action=reply, usage={"llm_completion_tokens": self.tokens}, error=None) for _ in conversations]


def test_a_reply_at_the_token_limit_counts_before_an_unknown_tool(failures):
    agent = ScriptedAgent(['{"name": "no_such_tool", "arguments": {}}'], tokens=8, limit=8)
    ends = failures.play_greedy(agent, "AgentGym/CustomerSupport-v0", "test", 3)
    assert [kind for kind, _ in ends] == ["a reply that never ended"] * 3


def test_a_call_naming_no_tool_is_a_reply_the_env_could_not_run(failures):
    agent = ScriptedAgent(['{"name": "no_such_tool", "arguments": {}}', "not a call"], tokens=8, limit=256)
    ends = failures.play_greedy(agent, "AgentGym/Math-v0", "test", 2)
    assert [kind for kind, _ in ends] == ["a reply the env could not run"] * 2
    assert "unknown tool 'no_such_tool'" in ends[0][1]


def test_the_census_of_a_real_model_is_written_with_its_command(failures, micro_model, tmp_path):
    out = tmp_path / "failures.md"
    ends = failures.main(["--model", str(micro_model), "--envs", "Math-v0", "--splits", "test", "train", "--episodes", "2",
                          "--max-new-tokens", "1", "--out", str(out)])
    assert list(ends) == ["AgentGym/Math-v0, test", "AgentGym/Math-v0, train"]
    assert all(kind == "a reply that never ended" for source in ends.values() for kind, _ in source)  # one token is no call
    page = out.read_text()
    assert "--max-new-tokens 1" in page and "| AgentGym/Math-v0, train | 2 | 0 | 2 | 0 | 0 |" in page


def test_episodes_are_counted_per_task_family(failures):
    families = failures.task_families("AgentGym/Math-v0", "test", 3)
    assert len(families) == 3 and all(name.startswith("test-") for name in families)  # Math-v0: templates
    assert set(failures.task_families("AgentGym/CustomerSupport-v0", "test", 5)) <= set(KIND_DIFFICULTY)  # kinds
    ends = {"a": [("solved", ""), ("other", "wrong"), ("solved", "")]}
    table = failures.family_table(ends, {"a": ["x", "x", "y"]})
    assert table[2:] == ["| x | 1 / 2 |", "| y | 1 / 1 |"]
