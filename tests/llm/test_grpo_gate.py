"""The GRPO gate: llm-grpo on a task whose optimum is known, and its objective checked by hand.

The task: the prompt shows one of four words and the reply must repeat it (reward 1, else 0).
The start is a micro model fine-tuned on replies that repeat the word 30 % of the time and
name another of the four words otherwise, so it answers with a word and succeeds about 0.3 of
the time; GRPO must take it to >= 0.9.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.spaces import Text
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainers.llm import grpo, sft
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load
from trainers.llm.recipe.model import SIZES, new_model
from trainers.llm.rollout import Sampling, Trajectory, play

GATE_ENV = "RepeatWord-v0"
WORDS = ("lookup_user", "submit_answer", "check_payment", "send_email")  # tool names: whole tokens of the micro tokenizer
START_SUCCESS = 0.3  # the share of the weak start's fine-tuning replies that repeat the word
SYSTEM = "Repeat the word."


def prompt_text(word: str) -> str:
    """The user's turn: the word, written eight times (a tiny network attends to it easily)."""
    return "WORD: " + " ".join([word] * 8)


class RepeatWordEnv(gym.Env):
    """One turn: the user shows a word, the reply must be that word (reward 1, else 0)."""

    metadata = {"render_modes": []}
    tool_schemas: list[dict[str, Any]] = []

    def __init__(self, action_mode: str = "text", split: str = "train") -> None:
        self.observation_space = Text(max_length=64, min_length=0)
        self.action_space = Text(max_length=256)
        self.split, self.word = split, WORDS[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id") or f"{self.split}-{int(self.np_random.integers(len(WORDS)))}"
        self.word = WORDS[int(task_id.rsplit("-", 1)[1])]
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt_text(self.word)}]
        return self.word, {"task_id": task_id, "messages": messages}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        success = float(action.strip() == self.word)
        return "", success, True, False, {"tool_call": action.strip() or None, "metrics": {"success": success}}


if GATE_ENV not in gym.registry:
    gym.register(GATE_ENV, entry_point=RepeatWordEnv)

GATE = dict(env_id=GATE_ENV, group_size=8, tasks_per_update=8, max_new_tokens=6, micro_batch=64, update_epochs=2,
            learning_rate=1e-3, device="cpu", threads=1, checkpoint_every=1000, eval_episodes=0)
# The gate's run: without the KL term to the start, the policy often collapses onto one word
# whatever the prompt (every group's returns then equal: nothing left to learn from); with
# it, seeds 0-4 all pass, the slowest crossing 0.9 after about 400 updates.
GATE_RUN = dict(GATE, update_epochs=4, kl_coef=0.1, total_steps=32_000)


@pytest.fixture(scope="module")
def weak_start(micro_model, tmp_path_factory) -> str:
    """The micro tokenizer on a fresh micro network, fine-tuned on replies right START_SUCCESS of the time."""
    root = tmp_path_factory.mktemp("gate")
    _, tokenizer = load(micro_model)
    tokenizer.save_pretrained(root / "base")
    new_model(tokenizer, SIZES["micro"], seed=0).save_pretrained(root / "base")
    rng = np.random.default_rng(0)
    with (root / "random_replies.jsonl").open("w") as handle:
        for _ in range(128):
            shown = rng.choice(WORDS)
            reply = shown if rng.random() < START_SUCCESS else rng.choice([w for w in WORDS if w != shown])
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt_text(shown)},
                        {"role": "assistant", "content": str(reply)}]
            handle.write(json.dumps({"messages": messages}) + "\n")
    config = sft.Config(model=str(root / "base"), data=[str(root / "random_replies.jsonl")], run_dir=str(root / "sft"),
                        epochs=30, batch_size=16, learning_rate=3e-3, device="cpu", threads=1)
    return str(sft.fine_tune(config))


def sampled_success(model: str, episodes: int = 64) -> float:
    network, tokenizer = load(model)
    envs = [gym.make(GATE_ENV) for _ in range(episodes)]
    torch.manual_seed(123)
    trajectories, _ = play(network, ChatFormat(tokenizer), envs, [{"seed": 1000 + i} for i in range(episodes)],
                           Sampling(1.0, 6), torch.device("cpu"), 2048)
    return float(np.mean([t.metrics["success"] for t in trajectories]))


def test_grpo_gate_learns_to_repeat_the_word_from_a_weak_start(weak_start, tmp_path):
    start = sampled_success(weak_start)
    assert 0.1 <= start <= 0.4
    config = grpo.Config(model=weak_start, run_dir=str(tmp_path), **GATE_RUN)
    writer = grpo.runtime.writer_for(tmp_path, None)
    grpo.learn(config, False, tmp_path, writer)
    writer.close()
    assert sampled_success(str(tmp_path / "model")) >= 0.9


def test_grpo_gate_clipped_loss_takes_the_pessimistic_term_per_token():
    new = torch.log(torch.tensor([1.5, 0.5, 1.5, 0.5, 1.1, 1.25]))
    old = torch.zeros(6)
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0, 2.0, 1.0])
    loss, clipped = grpo.clipped_token_loss(new, old, adv, (0.8, 1.28))  # clip-higher: 1 - 0.2, 1 + 0.28
    # A>0, r=1.5: -min(1.5, 1.28) = -1.28 (gain clipped above)   A>0, r=0.5: -min(0.5, 0.8) = -0.5
    # A<0, r=1.5: -min(-1.5, -1.28) = 1.5 (loss not clipped)     A<0, r=0.5: -min(-0.5, -0.8) = 0.8
    # inside [0.8, 1.28]: r=1.1 -> -2.2, r=1.25 -> -1.25 (a symmetric 0.2 clip would give -1.2)
    assert loss.tolist() == pytest.approx([-1.28, -0.5, 1.5, 0.8, -2.2, -1.25])
    assert clipped.tolist() == [True, True, True, True, False, False]


def test_grpo_gate_clipped_tokens_get_no_gradient():
    new = torch.log(torch.tensor([1.5, 1.1])).requires_grad_()
    loss, _ = grpo.clipped_token_loss(new, torch.zeros(2), torch.tensor([1.0, 1.0]), (0.8, 1.2))
    loss.sum().backward()
    assert new.grad.tolist() == pytest.approx([0.0, -1.1])  # d(-r)/d(log r) = -r where unclipped


def test_grpo_gate_advantages_reward_the_better_episode_of_a_group():
    returns = np.array([[0.0, 1.0, 1.0, 0.0], [2.0, 2.0, 2.0, 5.0]])
    scaled = grpo.group_advantages(returns)
    assert scaled[0].tolist() == pytest.approx([-1, 1, 1, -1], abs=1e-6)
    assert scaled[1].tolist() == pytest.approx([-1 / 3**0.5] * 3 + [3**0.5], abs=1e-6)  # mean 2.75, std 0.75*sqrt(3)
    assert grpo.group_advantages(returns, scale=False)[1].tolist() == pytest.approx([-0.75, -0.75, -0.75, 2.25])


def test_grpo_gate_aggregations_weigh_tokens_as_documented():
    per_token = torch.tensor([[1.0, 2.0, 3.0, 9.0], [4.0, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])  # 3 + 1 sampled tokens
    assert grpo.aggregate(per_token, mask, "token-mean", 2, 4, 8).item() == pytest.approx((1 + 2 + 3 + 4) / 4)
    assert grpo.aggregate(per_token, mask, "sequence-mean", 2, 4, 8).item() == pytest.approx((6 / 3 + 4 / 1) / 2)
    assert grpo.aggregate(per_token, mask, "constant", 2, 4, 8).item() == pytest.approx(10 / (2 * 8))


@pytest.fixture(scope="module")
def multi_turn(micro_model) -> tuple[Any, Any, Trajectory]:
    """A three-turn Math-v0 episode of the micro model: replies with tool results between them."""
    network, tokenizer = load(micro_model)
    env = gym.make("AgentGym/Math-v0", action_mode="text", max_turns=3)
    torch.manual_seed(0)
    (trajectory,), _ = play(network, ChatFormat(tokenizer), [env], [{"seed": 2}], Sampling(1.0, 12),
                            torch.device("cpu"), 2048)
    assert trajectory.turns == 3
    return network, tokenizer, trajectory


def test_grpo_gate_env_tokens_are_masked_out_of_the_loss_on_a_multi_turn_episode(multi_turn):
    network, tokenizer, trajectory = multi_turn
    batch = grpo.token_batch([trajectory], [1.0], tokenizer.pad_token_id, torch.device("cpu"))
    predicted = batch["ids"][0, 1:][batch["sampled"][0]].tolist()
    written = [i for i, s in zip(trajectory.token_ids, trajectory.sampled) if s]
    assert predicted == written and len(written) == trajectory.generated
    context = tokenizer.decode([i for i, s in zip(trajectory.token_ids, trajectory.sampled) if not s])
    assert context.count("<|im_start|>assistant\n") == 3 and context.count("<|im_start|>user\n") == 3  # task + 2 replies
    # At the first step the ratio is 1 on every token: with advantage 1, each sampled token's loss
    # is -1, so the token mean is -1 exactly when prompt, tool-result and template tokens add nothing.
    config = grpo.Config(**{**GATE, "learning_rate": 0.0, "env_id": "AgentGym/Math-v0"})
    optimizer = torch.optim.SGD(network.parameters(), lr=0.0)
    stats = grpo.policy_update(network, None, optimizer, [trajectory], [1.0], config, tokenizer.pad_token_id,
                               torch.device("cpu"))
    assert stats["loss"] == pytest.approx(-1.0, abs=1e-4) and stats["clipfrac"] == 0.0 and stats["entropy"] > 0


def test_sequence_mean_and_constant_normalise_the_same_episode_differently(multi_turn):
    network, tokenizer, trajectory = multi_turn
    optimizer = torch.optim.SGD(network.parameters(), lr=0.0)
    losses = {how: grpo.policy_update(network, None, optimizer, [trajectory], [1.0],
                                      grpo.Config(**{**GATE, "loss_aggregation": how}), tokenizer.pad_token_id,
                                      torch.device("cpu"))["loss"] for how in grpo.LOSS_AGGREGATIONS}
    assert losses["sequence-mean"] == pytest.approx(-1.0, abs=1e-4)
    assert losses["constant"] == pytest.approx(-trajectory.generated / GATE["max_new_tokens"], abs=1e-3)


def test_an_unknown_loss_aggregation_is_a_clear_error():
    with pytest.raises(ValueError, match="loss_aggregation must be one of"):
        grpo.Config(loss_aggregation="mean")


def test_dynamic_sampling_refills_groups_whose_returns_are_all_equal(weak_start):
    network, tokenizer = load(weak_start)
    fmt, envs = ChatFormat(tokenizer), [gym.make(GATE_ENV) for _ in range(8)]
    counts = {}
    for dynamic in (False, True):
        config = grpo.Config(**{**GATE, "group_size": 2, "tasks_per_update": 8, "dynamic_sampling": dynamic,
                                "max_sampling_rounds": 20})
        torch.manual_seed(0)
        played, learning, advantages, counts[dynamic] = grpo.play_groups(
            network, fmt, envs, config, np.random.default_rng(0), torch.device("cpu"), 2048)
        assert len(learning) == len(advantages) and np.all(np.abs(advantages).reshape(-1, 2).sum(1) > 0)
        assert len(played) == len(learning) + 2 * counts[dynamic]["skipped_groups"]
        counts[dynamic]["learning_groups"] = len(learning) // 2
    assert counts[False]["sampling_rounds"] == 1 and counts[False]["skipped_groups"] > 0
    assert counts[False]["learning_groups"] == 8 - counts[False]["skipped_groups"]
    assert counts[True]["skipped_groups"] > 0 and counts[True]["sampling_rounds"] > 1
    assert counts[True]["learning_groups"] == 8  # refilled


def test_the_options_are_logged_to_tensorboard(weak_start, tmp_path):
    config = grpo.Config(model=weak_start, run_dir=str(tmp_path), total_steps=64, kl_coef=0.1, dynamic_sampling=True,
                         clip_coef_high=0.28, scale_advantages=False, loss_aggregation="constant",
                         **{**GATE, "group_size": 4, "tasks_per_update": 2})
    writer = grpo.runtime.writer_for(tmp_path, None)
    grpo.learn(config, False, tmp_path, writer)
    writer.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    events.Reload()
    assert {"losses/entropy", "losses/clipfrac", "losses/policy_loss", "llm/kl", "charts/skipped_groups",
            "charts/sampling_rounds", "charts/learning_groups"} <= set(events.Tags()["scalars"])
    table = events.Tensors("hyperparameters/text_summary")[0].tensor_proto.string_val[0].decode()
    for option in ("|loss_aggregation|constant|", "|scale_advantages|False|", "|clip_coef_high|0.28|",
                   "|dynamic_sampling|True|", "|kl_coef|0.1|"):
        assert option in table
