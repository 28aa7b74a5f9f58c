"""llm-corrections: a local model's own episodes, labelled by the scripted expert, as SFT data."""

import json

from transformers import AutoTokenizer

from agentgym_envs.cli import main as agentgym
from trainers.llm import sft
from trainers.llm.chat import ChatFormat
from trainers.llm.recipe.corrections import Config, collect


def test_the_micro_models_slips_become_records_whose_one_learnt_turn_is_the_experts(micro_model, tmp_path):
    out = tmp_path / "corrections.jsonl"
    summary = collect(Config(model=str(micro_model), env_id="Math-v0", out=str(out), tasks=6, max_new_tokens=24,
                             device="cpu"))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary["episodes"] == 6 and summary["records"] == len(records) > 0
    assert 0 < summary["labelled_episodes"] <= 6
    fmt = ChatFormat(AutoTokenizer.from_pretrained(micro_model))
    for record in records:
        label = record["messages"][-1]
        assert label["role"] == "assistant" and "weight" not in label
        learnt = [piece for piece in fmt.pieces(record["messages"], record["tools"]) if piece.assistant]
        assert len(learnt) == 1 and label["tool_calls"][0]["function"]["name"] in learnt[0].text
        ids, labels, _ = sft.encode(fmt, record, 10_000)
        assert sum(label != sft.IGNORE for label in labels) == len(fmt.encode(learnt[0].text))


def test_the_same_seed_gives_the_same_corrections(micro_model, tmp_path):
    for name in "ab":
        assert agentgym(["llm-corrections", "--model", str(micro_model), "--env", "Math-v0", "--tasks", "4", "--device", "cpu",
                         "--max-new-tokens", "24",
                         "--out", str(tmp_path / f"{name}.jsonl")]) == 0
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def test_a_build_with_a_corrections_round_learns_from_them_after_its_sft(tmp_path):
    from safetensors.torch import load_file

    from trainers.llm.recipe.build import build_model

    out = build_model(tmp_path / "micro", size="micro", envs=["Math-v0"], device="cpu", corrections=3)
    records = (out / "corrections.jsonl").read_text().splitlines()
    assert records and all(json.loads(line)["messages"][-1]["role"] == "assistant" for line in records)
    final, before = load_file(out / "model.safetensors"), load_file(out / "sft" / "model" / "model.safetensors")
    assert final.keys() == before.keys() and any(not (final[k] == before[k]).all() for k in final)
    assert (out / "sft_corrections" / "model" / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
    collected = (out / "corrections.jsonl").stat().st_mtime_ns
    resumed = build_model(tmp_path / "micro", size="micro", envs=["Math-v0"], device="cpu", corrections=3, resume=True)
    assert (resumed / "corrections.jsonl").stat().st_mtime_ns == collected  # a resumed build keeps its corrections
    assert (resumed / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
