"""An agent backed by a local Hugging Face causal LM: the tokenizer's chat template renders the
conversation and the tools, and one batched ``generate`` answers every waiting environment."""

from __future__ import annotations

import time
import warnings
from typing import Any, Sequence

from ..observe import tracing
from .agents import Turn

Message = dict[str, Any]


class TransformersAgent:
    """Generates each turn with ``model`` (a local path or a hub id) on CPU or CUDA.

    ``device`` is ``auto`` (CUDA when available), ``cpu`` or ``cuda[:n]``; weights are bf16 on
    CUDA and fp32 on CPU unless ``dtype`` says otherwise. ``temperature`` 0 decodes greedily;
    above 0 it samples, the torch generator seeded with ``seed``.

    Context policy: a prompt may hold ``max_context_tokens`` (default: the model's window,
    ``max_position_embeddings``) minus ``max_new_tokens`` tokens. A longer conversation keeps
    its opening (system message and task) and loses its oldest exchanges (an assistant turn with
    the tool results that answer it) until it fits; if the opening alone is too long, the prompt
    keeps its last tokens. Each cut is warned about once and counted per turn as
    ``llm_truncated_prompts``.
    """

    def __init__(self, model: str, *, device: str = "auto", dtype: str | None = None, max_new_tokens: int = 256,
                 temperature: float = 0.0, max_context_tokens: int | None = None, batch_size: int | None = None,
                 seed: int = 0) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the dev install
            raise ImportError('the local-model agent needs transformers: pip install "agentgym[llm]"') from exc
        self._torch = torch
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        torch_dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"{model}: the tokenizer has no chat template; an agent needs one to render conversations and tools")
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype).to(self.device).eval()
        window = max_context_tokens or getattr(self.model.config, "max_position_embeddings", None)
        if not window or window <= max_new_tokens:
            raise ValueError(f"{model}: a context of {window} tokens leaves no room for {max_new_tokens} new tokens")
        self.name = model
        self.window = window
        self.prompt_budget = window - max_new_tokens
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.batch_size = batch_size
        self._warned = False
        self.settings = {"name": "hf", "model": model, "temperature": temperature, "max_new_tokens": max_new_tokens,
                         "max_context_tokens": window, "seed": seed}
        if temperature > 0:
            torch.manual_seed(seed)

    def respond(self, conversations: Sequence[Sequence[Message]], tools: list[dict[str, Any]] | None) -> list[Turn]:
        size = self.batch_size or max(len(conversations), 1)
        parents = tracing.conversation_parents(len(conversations))
        turns: list[Turn] = []
        for start in range(0, len(conversations), size):
            turns.extend(self._generate(conversations[start:start + size], tools, parents[start:start + size]))
        return turns

    def _generate(self, conversations: Sequence[Sequence[Message]], tools: list[dict[str, Any]] | None,
                  parents: Sequence[Any]) -> list[Turn]:
        """One batched ``generate`` for ``conversations`` (one LLM span each, under ``parents``)."""
        torch = self._torch
        prompts = [self.prompt_ids(messages, tools) for messages in conversations]
        width = max(len(ids) for ids, _ in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids, _ in prompts], device=self.device)
        attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in prompts], device=self.device)
        sampling = {"do_sample": True, "temperature": self.temperature} if self.temperature > 0 else {"do_sample": False}
        started = time.time_ns()
        with torch.inference_mode():
            output = self.model.generate(input_ids=input_ids, attention_mask=attention, max_new_tokens=self.max_new_tokens,
                                         pad_token_id=pad, **sampling)
        turns = []
        for row, (ids, cut) in zip(output[:, width:].tolist(), prompts):
            generated = _until_stop(row, self._stop_ids())
            text = self.tokenizer.decode(generated, skip_special_tokens=True)  # as transformers serve decodes content
            usage = {"llm_prompt_tokens": len(ids), "llm_completion_tokens": len(generated), "llm_truncated_prompts": int(cut)}
            turns.append(Turn(text.strip(), usage))
        tracing.record_generations(parents, self.name, started, time.time_ns(),
                                   [(turn.usage["llm_prompt_tokens"], turn.usage["llm_completion_tokens"]) for turn in turns])
        return turns

    def _stop_ids(self) -> set[int]:
        stop = self.model.generation_config.eos_token_id
        ids = set(stop if isinstance(stop, list) else [stop] if stop is not None else [])
        ids.add(self.tokenizer.eos_token_id)
        return ids

    def prompt_ids(self, messages: Sequence[Message], tools: list[dict[str, Any]] | None) -> tuple[list[int], bool]:
        """The prompt's token ids under the context policy, and whether it was cut."""
        messages = list(messages)
        opening = next((i + 1 for i, m in enumerate(messages) if m["role"] == "user"), len(messages))
        ids = self._encode(messages, tools)
        cut = False
        while len(ids) > self.prompt_budget and len(messages) > opening:
            messages = messages[:opening] + _drop_oldest_exchange(messages[opening:])
            ids, cut = self._encode(messages, tools), True
        if len(ids) > self.prompt_budget:
            ids, cut = ids[-self.prompt_budget:], True
        if cut and not self._warned:
            warnings.warn(f"{self.name}: a conversation is longer than the model's window ({self.window} tokens, "
                          f"{self.max_new_tokens} kept for the answer); its oldest exchanges are dropped", stacklevel=2)
            self._warned = True
        return ids, cut

    def _encode(self, messages: list[Message], tools: list[dict[str, Any]] | None) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]


def _drop_oldest_exchange(turns: list[Message]) -> list[Message]:
    """``turns`` without its first message and the non-assistant messages that follow it."""
    rest = turns[1:]
    while rest and rest[0]["role"] != "assistant":
        rest = rest[1:]
    return rest


def _until_stop(tokens: list[int], stop: set[int]) -> list[int]:
    """The generated tokens up to and including the first stop token (padding after it dropped)."""
    for index, token in enumerate(tokens):
        if token in stop:
            return tokens[:index + 1]
    return tokens
