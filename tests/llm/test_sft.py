"""llm-sft: assistant-only labels, a falling loss, clear errors on bad data, stated truncation; the
lifecycle run (expert data recorded when none is given, total_steps as demonstration env
steps, exact resume, agentgym eval of the checkpoint)."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from transformers import AutoTokenizer

from agentgym_envs.cli import main as agentgym
from trainers.lifecycle import train
from trainers.llm import runtime, sft
from trainers.llm.chat import ChatFormat
from trainers.llm.model import env_steps, load, read_trajectories
from trainers.run import TrainRequest

SMALL = {"epochs": 2, "batch_size": 2, "micro_batch": 2, "env_kwargs": {"max_turns": 2}}


def test_labels_cover_exactly_the_assistant_turns(micro_model):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    fmt = ChatFormat(tokenizer)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    ids, labels, truncated = sft.encode(fmt, record, 10_000)
    assert not truncated and len(ids) == len(labels)
    kept = [i for i, label in zip(ids, labels) if label != sft.IGNORE]
    assistant = [p for p in fmt.pieces(record["messages"], record["tools"]) if p.assistant]
    assert tokenizer.decode(kept) == "".join(p.text for p in assistant)
    # the pieces marked assistant are the assistant's messages, and no other message's text is learnt
    assert len(assistant) == sum(m["role"] == "assistant" for m in record["messages"])
    others = [m["content"] for m in record["messages"] if m["role"] != "assistant" and len(m.get("content") or "") > 20]
    assert others and not any(text in tokenizer.decode(kept) for text in others)
    assert all(label in (sft.IGNORE, i) for i, label in zip(ids, labels))


def test_an_assistant_turn_of_weight_zero_is_context_without_a_loss(micro_model):
    fmt = ChatFormat(AutoTokenizer.from_pretrained(micro_model))
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    record = {**record, "messages": [{k: v for k, v in m.items() if k != "weight"} for m in record["messages"]]}
    learnt_ids, labels, _ = sft.encode(fmt, record, 10_000)
    first = next(m for m in record["messages"] if m["role"] == "assistant")
    unlearnt = {**record, "messages": [{**m, "weight": 0} if m is first else m for m in record["messages"]]}
    ids, unlearnt_labels, _ = sft.encode(fmt, unlearnt, 10_000)
    learnt = [p for p in fmt.pieces(record["messages"], record["tools"]) if p.assistant]
    dropped = len(fmt.encode(learnt[0].text))
    assert sum(label != sft.IGNORE for label in unlearnt_labels) == sum(label != sft.IGNORE for label in labels) - dropped
    assert ids == learnt_ids


def test_long_conversations_keep_their_first_tokens(micro_model, capsys):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    full, _, _ = sft.encode(ChatFormat(tokenizer), record, 10_000)
    ids, labels, truncated = sft.encode(ChatFormat(tokenizer), record, 50)
    assert truncated and ids == full[:50] and len(labels) == 50


@pytest.mark.parametrize("cpu_bf16", [False, True])
def test_training_lowers_the_assistant_loss(micro_model, tmp_path, monkeypatch, cpu_bf16):
    monkeypatch.setattr(runtime, "cpu_computes_bf16", lambda: True)  # bf16 autocast emulated where the CPU lacks it
    data = micro_model / "expert_train.jsonl"
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    rows = [sft.encode(fmt, r, 4096)[:2] for r in read_trajectories(data)[:8]]

    def loss(model):
        with torch.no_grad():
            total, count = sft.assistant_loss(model, sft.collate(rows, tokenizer.pad_token_id, torch.device("cpu")))
        return float(total) / count

    before = loss(network)
    out = sft.fine_tune(sft.Config(model=str(micro_model), data=[str(data)], run_dir=str(tmp_path / "run"), epochs=3,
                               batch_size=4, micro_batch=2, device="cpu", cpu_bf16=cpu_bf16))
    after = loss(load(out)[0])
    assert after < before
    assert (tmp_path / "run" / runtime.STATE_FILE).exists()


def test_cpu_bf16_autocasts_only_on_a_cpu_with_bf16_arithmetic(monkeypatch):
    square = torch.ones(2, 2)
    for computes, dtype in ((True, torch.bfloat16), (False, torch.float32)):
        monkeypatch.setattr(runtime, "cpu_computes_bf16", lambda: computes)  # noqa: B023 (read in this iteration)
        with runtime.autocast(torch.device("cpu"), cpu_bf16=True):
            assert (square @ square).dtype == dtype
        with runtime.autocast(torch.device("cpu")):
            assert (square @ square).dtype == torch.float32


def test_malformed_trajectory_file_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"messages": []}) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not JSON"):
        read_trajectories(path)
    path.write_text(json.dumps({"turns": []}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: a record needs a 'messages' list"):
        read_trajectories(path)


def test_the_first_conversations_holding_the_step_budget_are_used(micro_model):
    records = read_trajectories(micro_model / "expert_train.jsonl")
    taken = sft.first_env_steps(records, 5)
    held = [env_steps(r) for r in taken]
    assert taken == records[: len(taken)] and sum(held) >= 5 > sum(held[:-1])
    assert sft.first_env_steps(records, 0) == records == sft.first_env_steps(records, 10**9)


def test_cli_trains_llm_sft_on_recorded_expert_steps_and_eval_reads_its_checkpoint(micro_model, tmp_path, capsys):
    code = agentgym(["train", "Math-v0", "--algo", "llm-sft", "--total-steps", "6", "--run-dir", str(tmp_path), "--device",
                     "cpu", "--eval-episodes", "1", "--no-progress", f"--set=model={micro_model / 'base'}",
                     '--set=env_kwargs={"max_turns": 2}', "--set=epochs=1", "--set=batch_size=2"])
    assert code == 0 and "success criteria (test split)" in capsys.readouterr().out
    run_dir = tmp_path / "Math-v0__llm-sft__seed0"
    recorded = read_trajectories(run_dir / sft.EXPERT_DATA)
    steps = sum(env_steps(r) for r in recorded)
    assert steps >= 6 > steps - env_steps(recorded[-1])  # whole expert episodes up to the budget
    result = json.loads((run_dir / "result.json").read_text())
    assert result["total_steps"] == steps and set(result["test_metrics"]) >= {"success", "return"}
    events = EventAccumulator(str(run_dir))
    events.Reload()
    assert {"losses/sft_loss", "llm/update_tokens_per_s", "final/test_success"} <= set(events.Tags()["scalars"])
    assert agentgym(["eval", str(run_dir / runtime.STATE_FILE), "--episodes", "1", "--device", "cpu"]) == 0
    assert "split=test" in capsys.readouterr().out


def test_given_data_is_learnt_from_up_to_the_step_budget(micro_model, tmp_path):
    data = micro_model / "expert_train.jsonl"
    result = train(TrainRequest("Math-v0", algo="llm-sft", total_steps=4, device="cpu", run_root=str(tmp_path),
                                eval_episodes=1, progress=False,
                                overrides={**SMALL, "model": str(micro_model / "base"), "data": [str(data)]}))
    assert result.total_steps == sum(env_steps(r) for r in sft.first_env_steps(read_trajectories(data), 4))
    assert not (tmp_path / "Math-v0__llm-sft__seed0" / sft.EXPERT_DATA).exists()


def test_an_interrupted_lifecycle_run_resumes_exactly(micro_model, tmp_path, monkeypatch):
    def run(root, resume=False):
        return train(TrainRequest("Math-v0", algo="llm-sft", total_steps=8, device="cpu", run_root=str(tmp_path / root),
                                  eval_episodes=1, resume=resume, progress=False,
                                  overrides={**SMALL, "model": str(micro_model / "base"), "checkpoint_every": 1}))

    saved = runtime.save_state

    def save_then_stop(run_dir, *args):
        saved(run_dir, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(runtime, "save_state", save_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run("a")
    assert runtime.load_state(tmp_path / "a" / "Math-v0__llm-sft__seed0")["progress"] == {"step": 1}
    monkeypatch.setattr(runtime, "save_state", saved)
    resumed, straight = run("a", resume=True), run("b")
    assert resumed.total_steps == straight.total_steps
    weights = [load_file(tmp_path / root / "Math-v0__llm-sft__seed0" / "model" / "model.safetensors") for root in "ab"]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_a_shared_system_prefix_gives_the_same_loss_and_gradients(micro_model):
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    math = [r for r in read_trajectories(micro_model / "expert_train.jsonl") if r.get("tools")][:4]
    rows = [sft.encode(fmt, r, 4096)[:2] for r in math]
    prefix = sft.shared_prefix(rows)
    assert prefix >= sft.MIN_SHARED_PREFIX
    batch = sft.collate(rows, tokenizer.pad_token_id, torch.device("cpu"))
    results = []
    for shared in (0, prefix):
        network.zero_grad()
        loss, count = sft.assistant_loss(network, batch, shared)
        loss.backward()
        results.append((loss.item(), count, [p.grad.clone() for p in network.parameters()]))
    (full, n_full, g_full), (cut, n_cut, g_cut) = results
    assert n_full == n_cut and cut == pytest.approx(full, rel=1e-5)
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-4) for a, b in zip(g_full, g_cut))
