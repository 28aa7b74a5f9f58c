"""agentgym environments in TRL's GRPOTrainer (environment mode), on the micro model."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
import torch

pytest.importorskip("trl")

from transformers import AutoTokenizer  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl.chat_template_utils import parse_response  # noqa: E402

from agentgym_envs.external_trainers.trl_env import ENDED, env_return, environment_class, task_dataset  # noqa: E402
from trainers.llm.model import RESPONSE_TEMPLATE, read_trajectories, record_expert_trajectories  # noqa: E402
from trainers.llm.trl_grpo import ensure_response_template  # noqa: E402

MATH = "AgentGym/Math-v0"
STEERING_BIAS = 10.0


def without_extras(schema: dict) -> dict:
    """A tool schema as transformers writes one from a function: no ``additionalProperties``,
    no empty ``required``."""
    function = dict(schema["function"])
    function["parameters"] = {k: v for k, v in function["parameters"].items()
                              if k != "additionalProperties" and v != []}
    return {"type": "function", "function": function}


@pytest.mark.parametrize("env", ["math", "customer_support", "coding"])  # tau2: tests/tau2/test_trl_tools.py
def test_tool_methods_declare_the_env_tool_schemas(env):
    environment = environment_class(env)()
    schemas = environment.env.unwrapped.tool_schemas
    methods = [getattr(environment, schema["function"]["name"]) for schema in schemas]
    for method, schema in zip(methods, schemas):
        assert get_json_schema(method) == without_extras(schema)
    environment.env.close()


def test_tool_calls_step_the_env_and_a_bad_call_is_answered_as_text():
    environment = environment_class("Math-v0")()
    environment.reset(seed=0)
    replay = gym.make(MATH, action_mode="text")
    replay.reset(seed=0)
    assert environment.sum_1_to_n(n=14) == "1 + 2 + ... + 14 = 105"
    assert environment.sum_1_to_n(m="x").startswith("Error: tool 'sum_1_to_n' has no argument(s) ['m']")
    assert environment.submit_answer(value=105) == "Answer 105 submitted."
    assert environment.ended and environment.metrics["success"] == 1.0 and environment.steps == 3
    assert environment.calculator(operation="add", a=1, b=2) == ENDED and environment.steps == 3
    expected = sum(replay.step(call)[1] for call in ('{"name": "sum_1_to_n", "arguments": {"n": 14}}',
                                                     '{"name": "sum_1_to_n", "arguments": {"m": "x"}}',
                                                     '{"name": "submit_answer", "arguments": {"value": 105}}'))
    assert environment.episode_return == pytest.approx(expected)


def test_the_dataset_rows_seed_the_tasks_their_prompts_show():
    data = task_dataset("Math-v0", 3, seed=7)
    environment = environment_class("Math-v0")()
    env = gym.make(MATH, action_mode="text")
    for row in data:
        _, info = env.reset(seed=row["seed"])
        assert row["prompt"] == [{"role": m["role"], "content": m["content"]} for m in info["messages"]]
        environment.reset(**row)  # TRL passes every column
        assert environment.env.unwrapped.episode.task.task_id == row["task_id"] == info["task_id"]
    with pytest.raises(RuntimeError, match="dataset row says"):
        environment.reset(seed=data[0]["seed"], task_id=data[1]["task_id"])


def test_a_final_reply_without_a_tool_call_is_the_env_s_to_judge():
    environments = [environment_class("Math-v0")() for _ in range(2)]
    for environment in environments:
        environment.reset(seed=0)
    replies = [[{"role": "assistant", "content": "sum_1_to_n(n=14)"}],  # a form only the env reads
               [{"role": "assistant", "content": "no idea"}]]
    logged = {}
    rewards = env_return(replies, environments, log_metric=logged.__setitem__)
    assert environments[0].env.unwrapped.episode.messages[-1]["content"] == "1 + 2 + ... + 14 = 105"
    assert rewards[0] > 0 > rewards[1] and [e.steps for e in environments] == [1, 1]
    assert logged == {"env/success": 0.0, "env/finished": 0.0, "env/steps": 1.0}


def expert_episode(tmp_path: Path) -> dict:
    """The scripted expert's Math-v0 episode on train seed 0, recorded in text mode."""
    return read_trajectories(record_expert_trajectories(tmp_path / "expert.jsonl", ["Math-v0"], episodes=1))[0]


def test_the_project_tokenizer_lets_trl_parse_its_tool_calls(micro_model, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    assert tokenizer.response_template == RESPONSE_TEMPLATE
    tokenizer.response_template = None  # as a model built before the template was saved with it
    assert ensure_response_template(tokenizer).response_template == RESPONSE_TEMPLATE
    record = expert_episode(tmp_path)
    environment = environment_class("Math-v0")()
    environment.reset(seed=0)
    assert environment.env.unwrapped.episode.task.task_id == record["task_id"]  # the expert's task 0 is seed 0
    for turn, message in enumerate(record["messages"]):
        if message["role"] != "assistant":
            continue
        prompt = tokenizer.apply_chat_template(record["messages"][:turn], tools=record["tools"], tokenize=False,
                                               add_generation_prompt=True)
        reply = tokenizer.apply_chat_template(record["messages"][:turn + 1], tools=record["tools"], tokenize=False)
        ids = tokenizer(reply[len(prompt):].rstrip("\n"), add_special_tokens=False)["input_ids"]
        parsed = parse_response(tokenizer, ids, prefix=tokenizer(prompt, add_special_tokens=False)["input_ids"])
        (call,) = parsed["tool_calls"]
        result = getattr(environment, call["function"]["name"])(**call["function"]["arguments"])
        assert result == record["messages"][turn + 1]["content"]
    assert environment.metrics["success"] == 1.0


def test_grpo_trainer_trains_the_micro_model_through_the_env_tools(micro_model, tmp_path, monkeypatch):
    """Two GRPO steps of TRL on Math-v0 through the adapter. On its own the micro model writes
    noise, never a tool call: every rollout would earn the same invalid-call penalty and leave
    GRPO nothing to learn. ``sequence_bias`` (a transformers generation setting) steers its
    sampling towards the expert's first call of the task (the micro model is near uniform over
    its 600 tokens, so a bias of 10 per token makes about half the rollouts write the whole
    call): TRL parses those calls and runs them in the env, and the rewards differ."""
    from trl import GRPOConfig, GRPOTrainer

    from trainers.llm.model import load

    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    record = expert_episode(tmp_path)
    first_call = tokenizer.apply_chat_template(record["messages"][:3], tools=record["tools"], tokenize=False)
    prompt = tokenizer.apply_chat_template(record["messages"][:2], tools=record["tools"], tokenize=False,
                                           add_generation_prompt=True)
    target = tokenizer(first_call[len(prompt):].rstrip("\n"), add_special_tokens=False)["input_ids"]
    # Each key is the assistant turn's opening and the call's first k + 1 tokens: its bias applies
    # only where the model has written those k tokens of the call at the start of a reply.
    opening = tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    steering = [[opening + target[: k + 1], STEERING_BIAS] for k in range(len(target))]

    episodes = []  # every finished episode of both batches: (tool steps, return, the model's actions)

    def keep_episode(instance):
        actions = [m for m in instance.env.unwrapped.episode.messages if m["role"] == "assistant"]
        episodes.append((instance.tool_steps, instance.episode_return, actions))

    class Recording(environment_class("Math-v0")):  # TRL reads its public methods as tools
        def reset(self, **row):
            if self.steps:
                keep_episode(self)
            return super().reset(**row)

    instances = []

    def factory():
        instances.append(Recording())
        return instances[-1]

    args = GRPOConfig(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=96, learning_rate=1e-2, seed=0, use_cpu=True, report_to=[],
                      logging_steps=1, save_strategy="no", max_tool_calling_iterations=4,
                      generation_kwargs={"sequence_bias": steering})
    data = task_dataset("Math-v0", 1)
    assert data[0]["task_id"] == record["task_id"]
    before = {k: v.clone() for k, v in load(micro_model)[0].state_dict().items()}
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = GRPOTrainer(model=str(micro_model), reward_funcs=env_return, args=args, train_dataset=data,
                          processing_class=tokenizer, environment_factory=factory)
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logs) == 2 and any(entry["tools/call_frequency"] > 0 for entry in logs)
    assert any(entry["reward_std"] > 0 for entry in logs)
    # The reward TRL logged last is the return of the episodes the instances hold; over both
    # batches the model's tool calls stepped the env, and each episode's return is what a fresh
    # env gives for the same actions.
    assert len(instances) == 4
    assert logs[-1]["reward"] == pytest.approx(sum(i.episode_return for i in instances) / 4, abs=1e-6)
    for instance in instances:
        keep_episode(instance)
    assert len(episodes) == 8 and sum(tool_steps for tool_steps, _, _ in episodes) > 0
    for _, episode_return, actions in episodes:
        replay = gym.make(MATH, action_mode="text")
        replay.reset(seed=0)
        assert actions
        assert sum(replay.step(action)[1] for action in actions) == pytest.approx(episode_return)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k].cpu()) for k in before)


def test_the_example_trains_and_writes_tensorboard_events_and_the_model(micro_model, tmp_path, monkeypatch):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from trainers.llm import trl_grpo

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    trl_grpo.main(["--model", str(micro_model), "--env", "customer_support", "--max-steps", "1", "--tasks", "1",
                   "--tasks-per-step", "1", "--num-generations", "2", "--max-completion-length", "32",
                   "--device", "cpu", "--output-dir", str(tmp_path)])
    (events_dir,) = (tmp_path / "runs").iterdir()
    events = EventAccumulator(str(events_dir))
    events.Reload()
    assert {"train/rewards/env_return/mean", "train/env/success", "train/tools/call_frequency"} <= set(
        events.Tags()["scalars"])
    assert AutoTokenizer.from_pretrained(tmp_path).response_template == RESPONSE_TEMPLATE
    assert (tmp_path / "model.safetensors").is_file()
