"""The rollout engines: the cached engine decodes what transformers' generate decodes, keeps
an episode's KV cache across turns, batches continuously and samples the exact distribution."""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest
import torch

from agentgym_envs.evaluation import TransformersAgent
from agentgym_envs.inference.decode_graph import DecodeGraph
from agentgym_envs.inference.engine import SHARE_BLOCK, CachedEngine, Sampling, complete, make_engine, sample
from agentgym_envs.inference.kv_cache import RaggedCache
from trainers.llm import grpo, rollout
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load
from trainers.llm.rollout import play

MATH = "AgentGym/Math-v0"
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def micro(micro_model):
    network, tokenizer = load(micro_model)
    return network.eval(), ChatFormat(tokenizer)


def math_envs(count: int, turns: int = 3) -> list[gym.Env]:
    return [gym.make(MATH, action_mode="text", max_turns=turns) for _ in range(count)]


def record_passes(monkeypatch) -> list[tuple[int, int, int]]:
    """``(rows, width, fed tokens)`` of each forward pass the engine prepares on its cache."""
    passes: list[tuple[int, int, int]] = []
    step = RaggedCache.step

    def recorded(cache, rows, fed, width):
        passes.append((cache.rows if rows is None else len(rows), width, sum(fed)))
        return step(cache, rows, fed, width)

    monkeypatch.setattr(RaggedCache, "step", recorded)
    return passes


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_greedy_episodes_match_transformers_generate(micro, attention):
    network, fmt = micro
    network.config._attn_implementation = attention
    try:
        resets = [{"seed": seed} for seed in range(5)]
        runs = {engine: play(network, fmt, math_envs(3), resets, Sampling(0.0, 8), CPU, 2048, engine)[0]
                for engine in ("generate", "cached")}
    finally:
        network.config._attn_implementation = "sdpa"
    for old, new in zip(runs["generate"], runs["cached"]):
        assert new.turns == old.turns == 3 and new.task_id == old.task_id
        assert new.token_ids == old.token_ids and new.sampled == old.sampled
        assert new.logprobs == pytest.approx(old.logprobs, abs=1e-4)


def test_sampled_logprobs_match_the_trainers_rescoring(micro):
    network, fmt = micro
    torch.manual_seed(0)
    trajectories, speed = play(network, fmt, math_envs(2), [{"seed": 3}, {"seed": 4}], Sampling(0.7, 12), CPU, 2048)
    batch = grpo.token_batch(trajectories, [0.0, 0.0], fmt.tokenizer.pad_token_id, CPU)
    with torch.no_grad():
        rescored, _ = grpo.token_logprobs(network, batch, 0.7)
    sampled = batch["sampled"]
    assert int(sampled.sum()) == sum(t.generated for t in trajectories) == speed["generated_tokens"] > 0
    assert torch.allclose(rescored[sampled], batch["old"][sampled], atol=1e-4)


def test_a_turn_feeds_only_the_tokens_appended_since_the_last(micro, monkeypatch):
    """Each context token goes through the network once: the env's reply is appended to the
    cache, the conversation is not encoded again (the last reply's last token is never fed)."""
    network, fmt = micro
    passes = record_passes(monkeypatch)
    (trajectory,), _ = play(network, fmt, math_envs(1), [{"seed": 2}], Sampling(1.0, 8), CPU, 2048)
    last_reply_closed_by_the_model = trajectory.sampled[-1]
    assert trajectory.turns == 3
    assert sum(fed for _, _, fed in passes) == len(trajectory.token_ids) - (1 if last_reply_closed_by_the_model else 2)


def test_finished_episodes_leave_the_batch_and_waiting_ones_join(micro, monkeypatch):
    network, fmt = micro
    resets = [{"seed": seed} for seed in range(4)]
    passes = record_passes(monkeypatch)
    together, _ = play(network, fmt, math_envs(2, turns=2), resets, Sampling(0.0, 6), CPU, 2048)
    decode_batches = [rows for rows, width, _ in passes if width == 1]
    alone = [play(network, fmt, math_envs(1, turns=2), [kwargs], Sampling(0.0, 6), CPU, 2048)[0][0] for kwargs in resets]
    assert [t.token_ids for t in together] == [t.token_ids for t in alone]
    assert max(decode_batches) == 2  # two envs: never more than two episodes live


def shared_prefix_prompts(fmt: ChatFormat) -> list[list[int]]:
    """Two questions after one long system prompt, the second asked twice (as a GRPO group draws a prompt)."""
    system = {"role": "system", "content": "You answer arithmetic questions. " * 12}
    questions = ["What is 12 + 30?", "What is 7 * 6?", "What is 7 * 6?"]
    return [fmt.encode(fmt.prompt([system, {"role": "user", "content": q}], None)) for q in questions]


def test_a_shared_prefix_is_computed_once_and_replies_are_unchanged(micro, monkeypatch):
    network, fmt = micro
    prompts = shared_prefix_prompts(fmt)
    common = next(i for i, (a, b) in enumerate(zip(*prompts[:2])) if a != b)
    assert common > 3 * SHARE_BLOCK
    alone = [complete(CachedEngine(network, CPU), [ids], Sampling(0.0, 6), set())[0] for ids in prompts]
    passes = record_passes(monkeypatch)
    together = complete(CachedEngine(network, CPU), prompts, Sampling(0.0, 6), set())
    for new, old in zip(together, alone):
        assert new.reply == old.reply and new.logprobs == pytest.approx(old.logprobs, abs=1e-5)
    # the first prompt whole, the second past the common prefix, the third (the second again) its last token only
    context_fed = sum(fed for _, width, fed in passes if width > 1)
    assert context_fed == len(prompts[0]) + len(prompts[1]) - common
    assert max(rows for rows, width, _ in passes if width == 1) == 3  # the three decode together


def test_decode_steps_read_a_shared_prefix_once_and_decode_as_plain_attention(micro, monkeypatch):
    from agentgym_envs.inference import decoder, kv_cache

    network, fmt = micro
    prompts = shared_prefix_prompts(fmt) + [fmt.encode(fmt.prompt([{"role": "user", "content": "Hi"}], None))]
    runs: list[list[tuple[int, int, int]]] = []
    cascade = decoder.cascade_attention

    def recorded(query, keys, values, shared_runs, scale):
        runs.append([(run.start, run.end, run.shared) for run in shared_runs])
        return cascade(query, keys, values, shared_runs, scale)

    monkeypatch.setattr(decoder, "cascade_attention", recorded)
    read_once = complete(CachedEngine(network, CPU), prompts, Sampling(0.0, 8), set())
    common = next(i for i, (a, b) in enumerate(zip(*prompts[:2])) if a != b)
    # the three prompts with the system prompt read it once (the third is the second again: a longer prefix
    # with it, but the run keeps the first's), the fourth prompt attends over its own positions alone
    assert runs and runs[0] == [(0, 3, runs[0][0][2]), (3, 4, 0)] and common - SHARE_BLOCK < runs[0][0][2] <= common
    monkeypatch.setattr(kv_cache, "MIN_SHARED", 10**9)  # no run shares enough: plain attention
    runs.clear()
    plain = complete(CachedEngine(network, CPU), prompts, Sampling(0.0, 8), set())
    assert not runs
    for new, old in zip(read_once, plain):
        assert new.reply == old.reply and new.logprobs == pytest.approx(old.logprobs, abs=1e-5)


def test_rows_that_share_a_shorter_prefix_join_the_run_of_the_longer_one():
    cache = RaggedCache(1, CPU, cascade=True)
    cache.add_rows(4)
    cache.step([0], [200], 200)
    cache.update(torch.zeros(1, 1, 200, 2), torch.zeros(1, 1, 200, 2), 0)
    cache.copy_prefix(0, 1, 150)
    cache.copy_prefix(0, 2, 100)  # rows 0 and 1 share 150 positions, all three share 100
    cache.copy_prefix(0, 3, 20)  # too short a prefix to read once: row 3 keeps to itself
    cache.step(None, [1, 1, 1, 1], 1)
    runs = [(run.start, run.end, run.shared, run.width) for run in cache.shared_runs]
    assert runs == [(0, 3, 100, 201), (3, 4, 0, 21)]
    assert (~cache.shared_runs[0].own_hidden).sum(1).tolist() == [101, 51, 1]  # each row's own positions, the new one included


def test_a_joining_sequence_gets_room_for_its_context_and_reply_at_once(micro, monkeypatch):
    from agentgym_envs.inference import kv_cache

    network, _ = micro
    grown = []
    reserve = RaggedCache.reserve

    def recorded(cache, width):
        if cache.keys[0] is not None and width > cache.capacity:  # tensors allocated again, larger
            grown.append(width)
        reserve(cache, width)

    monkeypatch.setattr(RaggedCache, "reserve", recorded)
    prompt = list(range(3, 3 + kv_cache.GROWTH - 4))  # its reply crosses a step of the capacity
    [done] = complete(CachedEngine(network, CPU), [prompt], Sampling(0.0, 12), set())
    assert len(done.reply) == 12 and not grown


def test_rows_that_leave_move_only_the_later_rows_over_the_positions_they_hold():
    cache = RaggedCache(1, CPU)
    cache.add_rows(3)
    cache.step(None, [3, 3, 1], 3)
    cache.update(torch.arange(3.0)[:, None, None, None].expand(3, 1, 3, 2), torch.zeros(3, 1, 3, 2), 0)
    cache.keep_rows([0, 2])  # row 1 leaves: row 2 (one position held) moves to slot 1
    assert cache.lengths == [3, 1]
    assert cache.keys[0][:, 0, :3, 0].tolist() == [[0.0, 0.0, 0.0], [2.0, 1.0, 1.0], [2.0, 2.0, 2.0]]


def test_a_prefix_is_copied_only_to_a_row_that_holds_nothing():
    cache = RaggedCache(1, CPU)
    cache.add_rows(2)
    cache.step(None, [4, 2], 4)
    cache.update(torch.zeros(2, 1, 4, 2), torch.zeros(2, 1, 4, 2), 0)
    with pytest.raises(ValueError, match="cannot copy 3 positions of row 1"):
        cache.copy_prefix(1, 0, 3)
    with pytest.raises(ValueError, match="cannot copy 2 positions of row 0"):
        cache.copy_prefix(0, 1, 2)


def test_rows_leave_and_join_in_the_cache_s_tensors_until_they_outgrow_them():
    cache = RaggedCache(1, CPU)
    cache.add_rows(3)
    cache.step(None, [2, 3, 1], 3)
    cache.update(torch.arange(3.0)[:, None, None, None].expand(3, 1, 3, 2), torch.zeros(3, 1, 3, 2), 0)
    tensor = cache.keys[0]
    cache.keep_rows([2, 0])
    assert cache.keys[0] is tensor and cache.lengths == [1, 2]
    assert tensor[0, 0, 0, 0] == 2.0 and tensor[1, 0, 0, 0] == 0.0  # the rows kept, moved to the first slots
    cache.add_rows(1)
    assert cache.keys[0] is tensor and cache.slots == 3
    cache.add_rows(1)
    assert cache.keys[0] is not tensor and cache.slots == 6 and cache.lengths == [1, 2, 0, 0]


CUDA = pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"))


@pytest.mark.parametrize("device", ["cpu", CUDA])
def test_decode_steps_of_every_row_as_one_captured_step_decode_the_same_episodes(micro, monkeypatch, device):
    """The decode step a CUDA graph replays (captured on CUDA; run uncaptured on a CPU: every
    slot of the cache, mask, write positions and draws made on the device) decodes what the
    ragged passes decode, while episodes end and others join, and its sampled log-probs are the
    trainer's."""
    device = torch.device(device)
    network, fmt = copy.deepcopy(micro[0]).to(device), micro[1]
    resets = [{"seed": seed} for seed in range(8)]
    def engines(graphs: bool):
        return lambda name, network, device, pad, max_batch: CachedEngine(network, device, max_batch, graphs=graphs)

    monkeypatch.setattr(rollout, "make_engine", engines(False))
    plain, _ = play(network, fmt, math_envs(3), resets, Sampling(0.0, 8), device, 2048)
    monkeypatch.setattr(rollout, "make_engine", engines(True))
    steps, call = [], DecodeGraph.__call__
    monkeypatch.setattr(DecodeGraph, "__call__", lambda graph, tokens, positions:
                        steps.append((len(tokens), id(graph))) or call(graph, tokens, positions))
    graphed, _ = play(network, fmt, math_envs(3), resets, Sampling(0.0, 8), device, 2048)
    rows, captured = zip(*steps)
    assert len(steps) > 20 and {2, 3} <= set(rows)  # it ran, also with fewer rows than slots
    assert len(set(captured)) < 4  # captured again only when the cache grew, not as 8 episodes came and went
    for new, old in zip(graphed, plain):
        assert new.token_ids == old.token_ids and new.sampled == old.sampled
        assert new.logprobs == pytest.approx(old.logprobs, abs=1e-5)
    sampled, _ = play(network, fmt, math_envs(3), resets, Sampling(0.7, 8), device, 2048)
    batch = grpo.token_batch(sampled, [0.0] * len(sampled), fmt.tokenizer.pad_token_id, device)
    with torch.no_grad():
        rescored, _ = grpo.token_logprobs(network, batch, 0.7)
    assert torch.allclose(rescored[batch["sampled"]], batch["old"][batch["sampled"]], atol=1e-4)


def test_sampling_draws_each_token_with_its_probability():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).repeat(20_000, 1)
    torch.manual_seed(0)
    ids, logprobs = sample(logits, temperature=0.5)
    expected = torch.softmax(logits[0] / 0.5, -1)
    frequencies = torch.bincount(torch.tensor(ids), minlength=4).float() / len(ids)
    assert torch.allclose(frequencies, expected, atol=0.01)
    assert torch.allclose(torch.tensor(logprobs), expected.log()[torch.tensor(ids)])
    greedy, scores = sample(logits[:2], temperature=0.0)
    assert greedy == [0, 0] and scores == pytest.approx([float(torch.log_softmax(logits[0], -1)[0])] * 2)


def test_the_agent_answers_alike_on_either_engine(micro_model):
    env = gym.make(MATH, action_mode="text")
    conversations = [env.reset(seed=seed)[1]["messages"] for seed in range(3)]
    answers = {engine: TransformersAgent(str(micro_model), device="cpu", max_new_tokens=8, engine=engine)
               .respond(conversations, env.unwrapped.tool_schemas) for engine in ("generate", "cached")}
    assert answers["cached"] == answers["generate"]


def test_an_unknown_engine_or_attention_is_a_clear_error(micro):
    network, _ = micro
    with pytest.raises(ValueError, match="unknown rollout engine"):
        make_engine("vllm", network, CPU, 0)
    with pytest.raises(ValueError, match="rollout_engine must be one of"):
        grpo.Config(rollout_engine="fast")
    network.config._attn_implementation = "flash_attention_2"
    try:
        with pytest.raises(ValueError, match="needs 'sdpa' or 'eager' attention"):
            CachedEngine(network, CPU).run([], Sampling(), set())
    finally:
        network.config._attn_implementation = "sdpa"
