"""docs/tutorial_scenario.md's scenario runs: its code (docs/examples/my_scenario.py, quoted by
the page block by block) passes gymnasium's env checker in both action modes, its expert solves
every task it is given, a wrong call is an error result, and the page's usage example runs."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_envs.evaluation import ExpertPolicy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "my_scenario.py"
PAGE = ROOT / "docs" / "tutorial_scenario.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def my_scenario():
    spec = importlib.util.spec_from_file_location("my_scenario", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["my_scenario"] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("my_scenario", None)


def play_expert(env, seed):
    observation, info = env.reset(seed=seed)
    expert, done, total = ExpertPolicy(env), False, 0.0
    while not done:
        observation, reward, terminated, truncated, info = env.step(expert(observation, info))
        total, done = total + reward, terminated or truncated
    return info, total


@pytest.mark.parametrize("mode", ["structured", "text"])
def test_the_env_passes_gymnasium_check_env(my_scenario, mode):
    check_env(gym.make(my_scenario.StockScenario.env_id, action_mode=mode).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("mode", ["structured", "text"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_expert_solves_every_task(my_scenario, mode, split):
    env = gym.make(my_scenario.StockScenario.env_id, action_mode=mode, split=split)
    for seed in range(20):
        info, total = play_expert(env, seed)
        assert info["outcome"]["success"] and info["metrics"]["tool_reliability"] == 1.0, info["outcome"]
        assert total == pytest.approx(1.3)  # three correct calls at +0.1, then the success
    env.close()


def test_a_wrong_call_is_an_error_result_and_the_episode_goes_on(my_scenario):
    env = gym.make(my_scenario.StockScenario.env_id, action_mode="text")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(json.dumps({"name": "lookup_item", "arguments": {"name": "teapot"}}))
    assert not terminated and reward < 0 and "no item called 'teapot'" in info["messages"][-1]["content"]
    env.close()


def test_a_task_file_plays(my_scenario, tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({"task_id": "mine-1", "item": "oak shelf", "store": "Oslo", "seed": 7}) + "\n")
    env = gym.make(my_scenario.StockScenario.env_id, task_file=str(path))
    info, _ = play_expert(env, 0)
    assert info["task_id"] == "mine-1" and info["outcome"]["success"]
    env.close()


def test_the_page_quotes_the_example_and_its_usage_runs(my_scenario):
    source = EXAMPLE.read_text(encoding="utf-8")
    quoted = [block for block in BLOCKS if not block.startswith("import gymnasium")]
    usage = [block for block in BLOCKS if block.startswith("import gymnasium")]
    assert quoted and usage
    assert [block for block in quoted if block not in source] == []  # every quoted block is the file's own text
    assert sum(len(block.splitlines()) for block in quoted) >= 0.8 * len(source.splitlines())
    for block in usage:
        exec(compile(block, str(PAGE), "exec"), {})
