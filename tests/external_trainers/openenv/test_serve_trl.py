"""TRL's environment adapter (agentgym_envs/external_trainers/trl_env.py) with ``base_url=``: the same completions
get the same returns from a served env as in process, and GRPOTrainer trains against it."""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("trl")

from agentgym_envs.external_trainers.trl_env import env_return, environment_class, task_dataset  # noqa: E402

CALLS = [  # per rollout: tool calls (method, arguments) and the final reply, which calls no tool
    ([("sum_1_to_n", {"n": 14}), ("submit_answer", {"value": 105})], "done"),
    ([("calculator", {"operation": "add", "a": 2, "b": 3})], "sum_1_to_n(n=14)"),
    ([("sum_1_to_n", {"m": "x"})], "no idea"),
    ([], '{"name": "submit_answer", "arguments": {"value": 7}}'),
]


def play(environments, seed: int) -> tuple[list[float], list[list[str]], list[dict]]:
    results = []
    for environment, (calls, _) in zip(environments, CALLS, strict=True):
        environment.reset(seed=seed)
        results.append([getattr(environment, name)(**arguments) for name, arguments in calls])
    replies = [[{"role": "assistant", "content": reply}] for _, reply in CALLS]
    returns = env_return(replies, environments)
    return returns, results, [environment.metrics for environment in environments]


def test_the_same_completions_get_the_same_returns_served_as_in_process():
    from agentgym_envs.external_trainers.openenv.local import thread_server

    local = environment_class("math")
    with thread_server("math", max_sessions=len(CALLS)) as base:
        served = environment_class("math", base_url=base)
        assert [name for name in vars(served) if not name.startswith("_")] == \
            [name for name in vars(local) if not name.startswith("_")]
        environments = [served() for _ in CALLS]
        for seed in (0, 1, 2):
            in_process = play([local() for _ in CALLS], seed)
            assert play(environments, seed) == in_process
            assert len(set(in_process[0])) > 1  # the rollouts earn different returns
        for environment in environments:
            environment.env.close()


def test_the_dataset_from_the_server_is_the_dataset_in_process(math_server):
    assert task_dataset("math", 3, seed=4, base_url=math_server).to_list() == task_dataset("math", 3, seed=4).to_list()


def test_a_served_env_behind_a_token_is_played_with_the_token(monkeypatch):
    from agentgym_envs.external_trainers.openenv.auth import TOKEN_ENV
    from agentgym_envs.external_trainers.openenv.client import Unauthorized
    from agentgym_envs.external_trainers.openenv.local import thread_server

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with thread_server("math", max_sessions=2, token="trl-token") as base:
        with pytest.raises(OSError, match="401"):
            environment_class("math", base_url=base)
        with pytest.raises(Unauthorized):
            task_dataset("math", 1, base_url=base, token="wrong")
        served = environment_class("math", base_url=base, token="trl-token")
        assert task_dataset("math", 2, base_url=base, token="trl-token").to_list() == task_dataset("math", 2).to_list()
        environment = served()
        environment.reset(seed=0)
        assert environment.sum_1_to_n(n=3) and environment.steps == 1
        environment.env.close()


def test_grpo_trainer_trains_against_the_served_env(micro_model, tmp_path, monkeypatch):
    """Two GRPO steps of TRL on a served Math-v1: every rollout's return, as TRL got it over the
    wire, is what an env in process gives for the same actions."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from agentgym_envs.external_trainers.openenv.local import thread_server

    with thread_server("math", max_sessions=8, idle_timeout_s=60) as base:
        served = environment_class("math", base_url=base)
        instances = []

        def factory():
            instances.append(served())
            return instances[-1]

        args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=4,
                          max_completion_length=24, learning_rate=1e-2, seed=0, use_cpu=True, report_to=[],
                          logging_steps=1, save_strategy="no", max_tool_calling_iterations=2)
        monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
        trainer = GRPOTrainer(model=str(micro_model), reward_funcs=env_return, args=args,
                              train_dataset=task_dataset("math", 1, base_url=base),
                              processing_class=AutoTokenizer.from_pretrained(micro_model), environment_factory=factory)
        trainer.train()
        logs = [entry for entry in trainer.state.log_history if "reward" in entry]
        assert len(logs) == 1 and len(instances) == 4
        assert logs[0]["reward"] == pytest.approx(sum(i.episode_return for i in instances) / 4, abs=1e-6)
    for instance in instances:  # each rollout's actions, replayed in process, give the return TRL got
        actions = [m for m in instance.env.messages if m["role"] == "assistant"]
        replay = gym.make("AgentGym/Math-v1", action_mode="text")
        replay.reset(seed=0)
        assert actions and instance.steps == len(actions)
        assert sum(replay.step(action)[1] for action in actions) == pytest.approx(instance.episode_return)
