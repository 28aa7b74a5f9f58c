"""llm-sft: assistant-only labels, a falling loss, clear errors on bad data, stated truncation."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoTokenizer

from trainers.llm import runtime, sft
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load, read_trajectories


def test_labels_cover_exactly_the_assistant_turns(micro_model):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    fmt = ChatFormat(tokenizer)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    ids, labels, truncated = sft.encode(fmt, record, 10_000)
    assert not truncated and len(ids) == len(labels)
    kept = [i for i, label in zip(ids, labels) if label != sft.IGNORE]
    expected = "".join(p.text for p in fmt.pieces(record["messages"], record["tools"]) if p.assistant)
    assert tokenizer.decode(kept) == expected
    assert all(label in (sft.IGNORE, i) for i, label in zip(ids, labels))


def test_long_conversations_keep_their_first_tokens(micro_model, capsys):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    full, _, _ = sft.encode(ChatFormat(tokenizer), record, 10_000)
    ids, labels, truncated = sft.encode(ChatFormat(tokenizer), record, 50)
    assert truncated and ids == full[:50] and len(labels) == 50


def test_training_lowers_the_assistant_loss(micro_model, tmp_path):
    data = micro_model / "expert_train.jsonl"
    network, tokenizer = load(micro_model)
    fmt = ChatFormat(tokenizer)
    rows = [sft.encode(fmt, r, 4096)[:2] for r in read_trajectories(data)[:8]]

    def loss(model):
        with torch.no_grad():
            total, count = sft.assistant_loss(model, sft.collate(rows, tokenizer.pad_token_id, torch.device("cpu")))
        return float(total) / count

    before = loss(network)
    out = sft.train(sft.Config(model=str(micro_model), data=[str(data)], run_dir=str(tmp_path / "run"), epochs=3,
                               batch_size=4, micro_batch=2, device="cpu"))
    after = loss(load(out)[0])
    assert after < before
    assert (tmp_path / "run" / runtime.STATE_FILE).exists()


def test_malformed_trajectory_file_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"messages": []}) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not JSON"):
        read_trajectories(path)
    path.write_text(json.dumps({"turns": []}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: a record needs a 'messages' list"):
        read_trajectories(path)
