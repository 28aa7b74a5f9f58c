"""llm-grpo: token-in/token-out rollouts, group advantages, the update, TensorBoard tags, resume."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from transformers import AutoModelForCausalLM

from agentgym_envs.cli import main as agentgym
from trainers.llm import grpo, rollout
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load
from trainers.llm.rollout import Sampling, play

MATH = "AgentGym/Math-v0"
SMALL = {"group_size": 2, "tasks_per_update": 2, "max_new_tokens": 24, "micro_batch": 2, "learning_rate": 1e-3,
         "env_kwargs": {"max_turns": 2}, "eval_episodes": 2, "checkpoint_every": 1, "device": "cpu", "threads": 1}


def test_rollout_keeps_the_sampled_tokens_and_their_logprobs(micro_model):
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    envs = [gym.make(MATH, action_mode="text", max_turns=2) for _ in range(2)]
    torch.manual_seed(0)
    trajectories, speed = play(network, fmt, envs, [{"seed": 3}, {"seed": 4}], Sampling(1.0, 16), torch.device("cpu"), 2048)
    for t in trajectories:
        assert len(t.token_ids) == len(t.sampled) == len(t.logprobs) and t.turns == 2 and t.done
        ids = torch.tensor([t.token_ids])
        with torch.no_grad():
            recomputed = torch.log_softmax(network(ids).logits[0, :-1], -1).gather(-1, ids[0, 1:, None]).squeeze(-1)
        sampled = torch.tensor(t.sampled[1:])
        assert sampled.sum() == t.generated > 0
        assert torch.allclose(recomputed[sampled], torch.tensor(t.logprobs[1:])[sampled], atol=1e-4)
        context = tokenizer.decode([i for i, s in zip(t.token_ids, t.sampled) if not s])
        assert context.count("<|im_start|>assistant\n") == 2 and "PROBLEM" in context
    assert speed["generated_tokens"] == sum(t.generated for t in trajectories)


def test_sampling_draws_from_the_whole_distribution(micro_model):
    """No top-k / top-p from the model's or transformers' defaults: the stored log-probs are
    those of the distribution actually sampled."""
    network, tokenizer = load(micro_model)
    network.generation_config.top_k, network.generation_config.top_p = 5, 0.5
    fmt = ChatFormat(tokenizer)
    env = gym.make(MATH, action_mode="text", max_turns=1)
    torch.manual_seed(0)
    (trajectory,), _ = play(network, fmt, [env], [{"seed": 0}], Sampling(1.0, 48), torch.device("cpu"), 2048)
    ids = torch.tensor([trajectory.token_ids])
    with torch.no_grad():
        logits = network(ids).logits[0, :-1]
    sampled = torch.tensor(trajectory.sampled[1:])
    ranks = (logits[sampled] > logits[sampled].gather(-1, ids[0, 1:][sampled][:, None])).sum(-1)
    assert int(ranks.max()) >= 5  # some token outside the top 5 was drawn


def test_a_context_past_the_window_stops_the_episode_and_says_so(micro_model):
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    env = gym.make(MATH, action_mode="text")
    with pytest.warns(UserWarning, match="reached the model's window"):
        (trajectory,), _ = play(network, fmt, [env], [{"seed": 0}], Sampling(1.0, 16), torch.device("cpu"), window=40)
    assert trajectory.context_overflow and trajectory.turns == 0 and trajectory.metrics["success"] == 0.0


def test_a_reply_cut_at_the_token_limit_ends_its_episode_only_when_asked(micro_model):
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    envs = [gym.make(MATH, action_mode="text", max_turns=3) for _ in range(2)]
    played = {}
    for cut_ends_episode in (False, True):
        torch.manual_seed(0)  # two tokens are no tool call: every reply is cut
        (played[cut_ends_episode],), _ = play(network, fmt, envs[:1], [{"seed": 0}], Sampling(1.0, 2), torch.device("cpu"),
                                              2048, cut_ends_episode=cut_ends_episode)
    assert played[False].turns == 3 and played[False].cut_replies == 3
    ended = played[True]
    assert ended.turns == 1 and ended.cut_replies == 1 and ended.done and ended.metrics["success"] == 0.0
    assert rollout.summarize([ended])["cut_reply_rate"] == 1.0


def test_cli_trains_llm_grpo_logs_llm_tags_and_saves_a_plain_model(micro_model, tmp_path):
    sets = [f"--set={k}={v}" for k, v in SMALL.items() if k not in ("device", "eval_episodes", "env_kwargs")]
    code = agentgym(["train", "Math-v0", "--algo", "llm-grpo", "--total-steps", "1", "--run-dir", str(tmp_path),
                     "--device", "cpu", "--eval-episodes", "2", f"--set=model={micro_model}",
                     '--set=env_kwargs={"max_turns": 2}', "--set=lora_rank=2", *sets])
    assert code == 0
    run_dir = tmp_path / "Math-v0__llm-grpo__seed0"
    assert (run_dir / "result.json").exists()
    AutoModelForCausalLM.from_pretrained(run_dir / "model")  # LoRA merged: a plain model
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"charts/episodic_return", "metrics/success", "llm/rollout_tokens_per_s", "llm/response_length",
            "llm/parse_error_rate", "llm/cut_reply_rate"} <= tags


def test_the_update_favours_the_episode_with_the_higher_return(micro_model):
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    envs = [gym.make(MATH, action_mode="text", max_turns=1) for _ in range(2)]
    torch.manual_seed(1)
    trajectories, _ = play(network, fmt, envs, [{"seed": 5}, {"seed": 5}], Sampling(1.0, 16), torch.device("cpu"), 2048)
    config = grpo.Config(**{**SMALL, "learning_rate": 1e-2})

    def mean_logprob(t):
        batch = grpo.token_batch([t], [0.0], tokenizer.pad_token_id, torch.device("cpu"))
        with torch.no_grad():
            return float(grpo.token_logprobs(network, batch, 1.0)[0][batch["sampled"]].mean())

    before = [mean_logprob(t) for t in trajectories]
    optimizer = torch.optim.AdamW(network.parameters(), lr=config.learning_rate)
    stats = grpo.policy_update(network, None, optimizer, trajectories, [1.0, -1.0], config, tokenizer.pad_token_id,
                               torch.device("cpu"))
    after = [mean_logprob(t) for t in trajectories]
    assert after[0] > before[0] and after[1] < before[1]
    assert stats["clipfrac"] == 0.0 and stats["tokens"] > 0  # one step from the sampling policy: ratio 1


def test_resume_continues_exactly(micro_model, tmp_path):
    config = dict(SMALL, model=str(micro_model), env_id=MATH, seed=3)
    first = grpo.train_and_evaluate(grpo.Config(**config, total_steps=1, run_dir=str(tmp_path / "a")))
    resumed = grpo.train_and_evaluate(grpo.Config(**config, total_steps=first["env_steps"] + 1, run_dir=str(tmp_path / "a")),
                         resume=True)
    straight = grpo.train_and_evaluate(grpo.Config(**config, total_steps=resumed["env_steps"], run_dir=str(tmp_path / "b")))
    assert straight["env_steps"] == resumed["env_steps"] > first["env_steps"]
    a = load_file(tmp_path / "a" / "model" / "model.safetensors")
    b = load_file(tmp_path / "b" / "model" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)

    def logged(run):
        events = EventAccumulator(str(tmp_path / run))
        events.Reload()
        return [(e.step, e.value) for tag in ("charts/episodic_return", "llm/response_length") for e in events.Scalars(tag)]

    assert logged("a") == logged("b")


def test_training_envs_play_the_given_task_file(tmp_path):
    from trainers.llm.recipe.corpus import math_tasks, write_tasks

    task_file = write_tasks(tmp_path / "tasks.jsonl", math_tasks(3, seed=1))
    config = grpo.Config(**SMALL, train_task_file=str(task_file))
    envs = grpo.training_envs(config, MATH)
    assert len(envs) == config.group_size * config.tasks_per_update
    assert {envs[0].reset(seed=seed)[1]["task_id"] for seed in range(20)} == {"aug-0", "aug-1", "aug-2"}

