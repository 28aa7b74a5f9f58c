"""The project's chat model: built by one call, loaded by plain transformers, its chat template
renders tools and tool calls the env's text mode runs."""

from __future__ import annotations

import gymnasium as gym
import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from agentgym_envs.evaluation import ExpertPolicy
from trainers.llm.chat import ChatFormat, TemplateError
from trainers.llm.model import read_trajectories


def test_micro_model_loads_with_plain_transformers(micro_model):
    model = AutoModelForCausalLM.from_pretrained(micro_model)
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    assert model.config.model_type == "llama"
    assert tokenizer.eos_token == "<|im_end|>" and model.generation_config.eos_token_id == tokenizer.eos_token_id
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "TICKET 1"}], add_generation_prompt=True,
                                        return_tensors="pt", return_dict=True)["input_ids"]
    out = model.generate(ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] > ids.shape[1]


def test_template_renders_tools_and_tool_calls_as_pieces(micro_model):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    fmt = ChatFormat(tokenizer)
    pieces = fmt.pieces(record["messages"], record["tools"])
    text = "".join(piece.text for piece in pieces)
    assert text == fmt.render(record["messages"], record["tools"])
    assert "# Tools" in text and "submit_answer(value: number)" in text
    replies = [piece.text for piece in pieces if piece.assistant]
    calls = [m for m in record["messages"] if m["role"] == "assistant"]
    assert len(replies) == len(calls)
    assert all(reply.startswith("<tool_call>\n") and reply.endswith("</tool_call><|im_end|>") for reply in replies)


def test_rendered_expert_reply_is_a_valid_text_action(micro_model):
    """What the template teaches the model to write is what the env runs."""
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    fmt = ChatFormat(tokenizer)
    env = gym.make("AgentGym/CustomerSupport-v0", action_mode="text")
    _, info = env.reset(seed=1)
    expert = ExpertPolicy(env)
    _, _, _, _, step = env.step(expert(None, info))
    reply = [p.text for p in fmt.pieces(step["messages"], env.unwrapped.tool_schemas) if p.assistant][0]
    env.reset(seed=1)
    _, _, _, _, replayed = env.step(reply.removesuffix(fmt.end_of_turn))
    assert replayed["valid"] and replayed["tool_call"] == step["tool_call"] and replayed["parse"]["form"] == "hermes"


def test_continuation_follows_the_model_end_of_turn(micro_model):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    fmt = ChatFormat(tokenizer)
    record = read_trajectories(micro_model / "expert_train.jsonl")[0]
    messages, tools = record["messages"], record["tools"]
    first_reply = next(i for i, m in enumerate(messages) if m["role"] == "assistant") + 1
    text = fmt.continuation(messages[: first_reply + 1], tools, first_reply)
    assert text.startswith("\n<|im_start|>user\n<tool_response>") and text.endswith("<|im_start|>assistant\n")


def test_a_template_that_rewrites_history_is_refused(micro_model):
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    tokenizer.chat_template = "{{ messages | length }}"
    with pytest.raises(TemplateError, match="prefix"):
        ChatFormat(tokenizer).pieces([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], None)



def test_a_resumed_build_keeps_its_finished_stages_and_ends_with_the_same_model(tmp_path):
    from trainers.llm.recipe.build import build_model

    out = build_model(tmp_path / "micro", size="micro", envs=["Math-v0"], device="cpu")
    built = (out / "model.safetensors").read_bytes()
    base_written = (out / "base" / "model.safetensors").stat().st_mtime_ns
    sft_saved = (out / "sft" / "llm_state.ckpt").stat().st_mtime_ns
    for item in ("model.safetensors", "config.json"):  # interrupted after its SFT stage, before the copy
        (out / item).unlink()
    assert build_model(out, size="micro", envs=["Math-v0"], device="cpu", resume=True) == out
    assert (out / "base" / "model.safetensors").stat().st_mtime_ns == base_written
    assert (out / "sft" / "llm_state.ckpt").stat().st_mtime_ns == sft_saved  # went on from its last checkpoint, no step again
    assert (out / "model.safetensors").read_bytes() == built


def test_a_build_resumed_with_another_definition_is_refused(tmp_path):
    from trainers.llm.recipe.build import build_model

    out = build_model(tmp_path / "micro", size="micro", envs=["Math-v0"], device="cpu")
    with pytest.raises(ValueError, match="other envs, seed"):
        build_model(out, size="micro", envs=["CustomerSupport-v0"], seed=1, device="cpu", resume=True)
