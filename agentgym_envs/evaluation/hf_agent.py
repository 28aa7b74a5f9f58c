"""An agent backed by a local Hugging Face causal LM: the tokenizer's chat template renders the
conversation and the tools, and a rollout engine (``agentgym_envs.inference.engine``) answers every
waiting environment in one batch."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

from ..observe import tracing
from .agents import Turn

Message = dict[str, Any]


class TransformersAgent:
    """Generates each turn with ``model`` (a local path or a hub id) on CPU or CUDA.

    ``device`` is ``auto`` (CUDA when available), ``cpu`` or ``cuda[:n]``; weights are bf16 on
    CUDA and fp32 on CPU unless ``dtype`` says otherwise. ``temperature`` 0 decodes greedily;
    above 0 it samples from the whole distribution (no top-k or top-p), the torch generator
    seeded with ``seed``. ``engine`` names the rollout engine: ``cached`` (the project's:
    continuous batching over a KV cache) or ``generate`` (``transformers``' ``generate``);
    ``batch_size`` caps the conversations decoded at once.

    Context policy: a prompt may hold ``max_context_tokens`` (default: the model's window,
    ``max_position_embeddings``) minus ``max_new_tokens`` tokens. A longer conversation keeps
    its opening (system message and task) and loses its oldest exchanges (an assistant turn with
    the tool results that answer it) until it fits; if the opening alone is too long, the prompt
    keeps its last tokens. Each cut is warned about once and counted per turn as
    ``llm_truncated_prompts``.
    """

    def __init__(self, model: str, *, device: str = "auto", dtype: str | None = None, max_new_tokens: int = 256,
                 temperature: float = 0.0, max_context_tokens: int | None = None, batch_size: int | None = None,
                 seed: int = 0, engine: str = "cached") -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            from agentgym_envs.inference.engine import Sampling, make_engine
        except ImportError as exc:  # pragma: no cover - the llm extra is part of the dev install
            raise ImportError('the local-model agent needs transformers: pip install "agentgym-envs[llm]"') from exc
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
        self.sampling = Sampling(temperature, max_new_tokens)
        self.engine = make_engine(engine, self.model, self.device, self.tokenizer.pad_token_id, batch_size)
        self._warned = False
        self.settings = {"name": "hf", "model": model, "temperature": temperature, "max_new_tokens": max_new_tokens,
                         "max_context_tokens": window, "seed": seed, "engine": engine}
        if temperature > 0:
            torch.manual_seed(seed)

    def respond(self, conversations: Sequence[Sequence[Message]], tools: list[dict[str, Any]] | None) -> list[Turn]:
        from agentgym_envs.inference.engine import complete

        parents = tracing.conversation_parents(len(conversations))
        prompts = [self.prompt_ids(messages, tools) for messages in conversations]
        started = time.time_ns()
        answers = complete(self.engine, [ids for ids, _ in prompts], self.sampling, self._stop_ids())
        turns = []
        for answer, (ids, cut) in zip(answers, prompts):
            text = self.tokenizer.decode(answer.reply, skip_special_tokens=True)  # as transformers serve decodes content
            usage = {"llm_prompt_tokens": len(ids), "llm_completion_tokens": len(answer.reply),
                     "llm_truncated_prompts": int(cut)}
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
        """The prompt's token ids under the context policy, and whether it was cut.

        The kept exchanges are the longest suffix, starting at an assistant turn, that fits
        (:func:`kept_starts`): the one dropping the oldest exchange one at a time would reach. A
        prompt's length only shrinks as exchanges are dropped, so that suffix is found by
        bisection, and where even the opening alone is too long after them, by two encodings:
        the whole conversation and the opening alone (tau2's tools and policy exceed a small window
        at every turn)."""
        messages = list(messages)
        opening = next((i + 1 for i, m in enumerate(messages) if m["role"] == "user"), len(messages))
        head, rest = messages[:opening], messages[opening:]
        starts = kept_starts(rest)
        encoded: dict[int, list[int]] = {}

        def ids_from(index: int) -> list[int]:  # the prompt keeping rest[starts[index]:]
            if index not in encoded:
                encoded[index] = self._encode(head + rest[starts[index]:], tools)
            return encoded[index]

        if len(ids_from(0)) <= self.prompt_budget:
            return ids_from(0), False
        low, high = 1, len(starts) - 1  # the first index that fits lies in [low, high], if any does
        if len(ids_from(high)) <= self.prompt_budget:
            while low < high:
                middle = (low + high) // 2
                if len(ids_from(middle)) <= self.prompt_budget:
                    high = middle
                else:
                    low = middle + 1
        ids = ids_from(high)
        if len(ids) > self.prompt_budget:
            ids = ids[-self.prompt_budget:]
        if not self._warned:
            warnings.warn(f"{self.name}: a conversation is longer than the model's window ({self.window} tokens, "
                          f"{self.max_new_tokens} kept for the answer); its oldest exchanges are dropped", stacklevel=2)
            self._warned = True
        return ids, True

    def _encode(self, messages: list[Message], tools: list[dict[str, Any]] | None) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]


def kept_starts(turns: list[Message]) -> list[int]:
    """Where the kept part of ``turns`` (the messages after the opening) may start, from keeping all to keeping none:
    0, then each later assistant turn (an exchange is an assistant turn with the messages that answer it), then the end."""
    later = [i for i in range(1, len(turns)) if turns[i]["role"] == "assistant"]
    return [0, *later, len(turns)] if turns else [0]
