"""The tau2 progress, the potential of ``reward_config={"mode": "potential"}``: the share of the
task's reference calls of the agent (reads and the write) made so far."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest


def _call(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


@pytest.mark.parametrize("env_id", ["AgentGym/Tau2Airline-L1-v0", "AgentGym/Tau2Retail-L1-v0"])
def test_progress_counts_the_tasks_reference_calls_and_no_other_call(data_dir, env_id):
    env = gym.make(env_id, data_dir=data_dir, action_mode="text")
    env.reset(seed=0)
    episode = env.unwrapped.episode
    reference = episode.world.reference_actions
    env.step(_call("get_user_details", user_id="nobody_0000"))
    env.step(_call("respond", message="Hello, how can I help?"))
    assert episode.progress() == 0.0
    for made, action in enumerate(reference[:2], start=1):
        env.step(_call(action.name, **action.arguments))
        assert episode.progress() == pytest.approx(made / len(reference))
    env.close()
