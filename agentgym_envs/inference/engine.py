"""Rollout engines: the turns of many sequences decoded together by a local causal LM.

A sequence (an episode of an env, a prompt to answer) shows the engine its context as token
ids (``tokens``); the engine samples a reply (up to a stop token, kept, or ``max_new_tokens``)
and hands it over with each token's log-prob (``turn_done``), which says whether another turn
follows: the sequence has then appended to ``tokens`` the reply as sampled and what comes
after it (the env's answer, the next turn's header). Sampled ids are never decoded and
tokenised again, and log-probs are those of the distribution sampled: ``softmax(logits /
temperature)`` over the whole vocabulary (greedy at temperature 0, scored at temperature 1).

- ``cached`` (:class:`CachedEngine`, the default): one forward pass per token for every live
  sequence; each sequence's keys and values stay in a :class:`~.kv_cache.RaggedCache` across
  its turns (a turn feeds only the tokens appended since, not the conversation again);
  sequences that finish leave the batch and waiting ones join it (continuous batching); a
  sequence that joins with a context beginning as another live one's (the same prompt, drawn
  again for a GRPO group; the same system prompt and tools) copies the keys and values of that
  prefix, in whole blocks of :data:`SHARE_BLOCK` tokens, instead of computing them again; a
  decode step of every sequence then reads that prefix once for the rows that share it
  (cascade attention). Llama and Qwen2 networks run :class:`~.decoder.LeanDecoder`, the same
  forward in fewer calls; others ``transformers``' own forward. On CUDA, a step in which every live sequence feeds one
  token replays a CUDA graph of the lean decoder (:class:`~.decode_graph.DecodeGraph`).
- ``generate`` (:class:`GenerateEngine`): ``transformers``' ``generate`` on each turn's whole
  context, batches in lockstep (a batch's next turn waits for its slowest reply).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any, Protocol

import torch

from . import decoder
from .decode_graph import DecodeGraph
from .kv_cache import RaggedCache

ENGINES = ("cached", "generate")
SHARE_BLOCK = 16  # the cached engine shares context prefixes in whole blocks of this many tokens
PREFILL_FILL = 0.75  # a prefill pass's real tokens fill at least this share of its padded width (but for one row)


@dataclass(frozen=True)
class Sampling:
    """How replies are drawn: ``temperature`` 0 is greedy."""

    temperature: float = 1.0
    max_new_tokens: int = 96


class Sequence(Protocol):
    """What an engine decodes: a context that grows by turns."""

    tokens: list[int]

    def turn_done(self, ids: list[int], logprobs: list[float]) -> bool:
        """Take a sampled reply; True when another turn follows (``tokens`` then holds the reply and what follows it)."""


def draw(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """One token per row of ``logits`` ``[rows, vocab]`` from ``softmax(logits / temperature)``
    (argmax at temperature 0), and its log-prob (at temperature 1 when greedy), as one tensor
    ``[2, rows]`` (ids, log-probs; float64 holds both exactly) that one copy brings to the host.
    Draws use the Gumbel-max trick, ``argmax(log p - log E)`` with ``E = -log U ~ Exp(1)``
    (never 0 for ``U`` in [0, 1); ``-log E`` is Gumbel noise): an exact draw from ``p``, cheaper
    on a CPU than ``torch.multinomial``, and one a CUDA graph can hold; torch's global
    generator seeds it."""
    logits = logits.float()
    logp = torch.log_softmax(logits / temperature if temperature > 0 else logits, dim=-1)
    if temperature <= 0:
        ids = logp.argmax(dim=-1, keepdim=True)
    else:
        ids = (logp - torch.rand_like(logp).log_().neg_().log_()).argmax(dim=-1, keepdim=True)
    return torch.stack([ids.squeeze(-1).double(), logp.gather(-1, ids).squeeze(-1).double()])


def sample(logits: torch.Tensor, temperature: float) -> tuple[list[int], list[float]]:
    """:func:`draw` as lists: the ids and their log-probs."""
    return host_samples(draw(logits, temperature))


def host_samples(drawn: torch.Tensor) -> tuple[list[int], list[float]]:
    """What :func:`draw` returned, as lists on the host."""
    ids, logprobs = drawn.cpu()
    return ids.long().tolist(), logprobs.tolist()


class _Clock:
    """Seconds spent decoding: the run's wall time less the time its sequences' callbacks took."""

    def __init__(self) -> None:
        self.start, self.outside = time.perf_counter(), 0.0

    def outside_call(self, call: Any, *args: Any) -> Any:
        began = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.outside += time.perf_counter() - began

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start - self.outside


def block_keys(tokens: list[int]) -> list[int]:
    """One key per whole block of :data:`SHARE_BLOCK` tokens: the ``i``-th stands for
    ``tokens[: SHARE_BLOCK * (i + 1)]`` (equal keys, equal prefixes but for hash collisions)."""
    keys, key = [], 0
    for end in range(SHARE_BLOCK, len(tokens) + 1, SHARE_BLOCK):
        key = hash((key, *tokens[end - SHARE_BLOCK:end]))
        keys.append(key)
    return keys


def common_prefix(context: list[int], source: list[int], start: int) -> int:
    """How many first tokens of ``context`` (all but its last at most) ``source`` begins with,
    given that ``start`` of them are probably shared (0 if they are not)."""
    limit = min(len(context) - 1, len(source))
    length = min(start, limit)
    if context[:length] != source[:length]:
        return 0
    while length < limit and context[length] == source[length]:
        length += 1
    return length


@dataclass
class _Row:
    """A live sequence of :class:`CachedEngine`: what it still has to feed, its reply so far,
    and the block keys of the context it joined with."""

    sequence: Sequence
    pending: list[int]
    keys: list[int]
    reply: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    done: bool = False


class CachedEngine:
    """Continuous batching over a ragged KV cache (module docstring). At most ``max_batch``
    sequences are live at once (None: all); new context tokens are fed in passes of at most
    ``prefill_tokens`` tokens (rows x padded width; rows of similar lengths together, the
    padding at most a quarter of a pass), ``prefill_tokens`` per row at most.
    ``lean``: run :class:`~.decoder.LeanDecoder` where it computes the network's forward
    (:func:`~.decoder.supports`); False: always ``transformers``' forward. ``graphs``: decode
    steps of every sequence through a :class:`~.decode_graph.DecodeGraph` (None: on CUDA,
    where the lean decoder runs; True on a CPU runs the same step uncaptured)."""

    def __init__(self, network: Any, device: torch.device, max_batch: int | None = None,
                 prefill_tokens: int = 4096, lean: bool = True, graphs: bool | None = None) -> None:
        self.network, self.device = network, device
        self.lean = lean and decoder.supports(network)  # else transformers' forward
        self.graphs = self.lean and (device.type == "cuda" if graphs is None else graphs)
        self.max_batch = max_batch or 1 << 30
        self.prefill_tokens = prefill_tokens
        config = network.config
        self.layers = config.num_hidden_layers
        # cascade attention: the lean decoder, where keys and values have as many heads as queries
        self.cascade = self.lean and config.num_key_value_heads == config.num_attention_heads
        self.attention = getattr(config, "_attn_implementation", None) or "eager"
        base = network.get_base_model() if hasattr(network, "get_base_model") else network
        names = inspect.signature(type(base).forward).parameters
        self.cache_argument = "cache" if "cache" in names else "past_key_values"

    def run(self, sequences: Iterable[Sequence], sampling: Sampling, stop_ids: set[int]) -> dict[str, float]:
        """Decode every turn of ``sequences`` (taken as room frees up); returns
        ``generated_tokens`` and ``seconds`` (decoding only: the sequences' callbacks excluded)."""
        source = iter(sequences)
        cache = RaggedCache(self.layers, self.device, self.attention, cascade=self.cascade)
        forward = decoder.LeanDecoder(self.network) if self.lean else self._transformers_forward
        rows: list[_Row] = []
        graph: DecodeGraph | None = None
        clock, generated, exhausted = _Clock(), 0, False
        with torch.no_grad():
            while True:
                while not exhausted and len(rows) < self.max_batch:
                    sequence = clock.outside_call(next, source, None)
                    if sequence is None:
                        exhausted = True
                    elif not sequence.tokens:
                        raise ValueError("a sequence to decode needs at least one context token")
                    else:
                        rows.append(_Row(sequence, list(sequence.tokens), block_keys(sequence.tokens)))
                        cache.add_rows(1)
                        cache.reserve(len(sequence.tokens) + sampling.max_new_tokens)  # room for its first reply
                if not rows:
                    break
                waiting = True
                while waiting:  # rows waiting for a prefix are fed once the rows computing it were
                    waiting = self._share_prefixes(cache, rows)
                    for group in self._prefill_groups(rows, waiting):
                        generated += self._pass(forward, cache, rows, group, sampling, stop_ids, clock)
                rows = self._drop_finished(cache, rows)
                feeding = [r for r, row in enumerate(rows) if len(row.pending) == 1]
                if self.graphs and feeding and len(feeding) == len(rows):
                    positions = cache.advance()
                    if graph is None or not graph.fits(cache):
                        graph = DecodeGraph(forward, cache, partial(draw, temperature=sampling.temperature))
                    ids, logprobs = host_samples(graph([row.pending.pop() for row in rows], positions))
                    generated += self._take_samples(ids, logprobs, feeding, cache, rows, sampling, stop_ids, clock)
                elif feeding:
                    generated += self._pass(forward, cache, rows, None if len(feeding) == len(rows) else feeding,
                                            sampling, stop_ids, clock)
                rows = self._drop_finished(cache, rows)
        return {"generated_tokens": float(generated), "seconds": clock.seconds}

    @staticmethod
    def _share_prefixes(cache: RaggedCache, rows: list[_Row]) -> set[int]:
        """Rows that hold nothing yet take the keys and values of the longest prefix of their
        context that another row holds, found by whole blocks and extended token by token (all
        but their last token at most: that one is fed to predict the next); returns the rows
        that wait for a prefix another new row is about to compute."""
        new = {r for r, length in enumerate(cache.lengths) if not length}
        if not new:  # the usual decoding step: nothing joined
            return set()
        holders: dict[int, int] = {}  # block key -> a row that holds that prefix, or computes it this pass
        for r, row in enumerate(rows):
            held = min(cache.lengths[r], len(row.sequence.tokens)) // SHARE_BLOCK
            for key in row.keys[:held]:
                holders.setdefault(key, r)
        waiting = set()
        for r, row in enumerate(rows):
            if r not in new or not row.keys:
                continue
            blocks = 0
            while blocks < len(row.keys) and row.keys[blocks] in holders:
                blocks += 1
            holder = holders[row.keys[blocks - 1]] if blocks else None
            length = 0 if holder is None else common_prefix(row.pending, rows[holder].sequence.tokens, blocks * SHARE_BLOCK)
            if length and holder in new and cache.lengths[holder] < length:  # it feeds the rest this pass
                waiting.add(r)
                continue
            if length:
                length = min(length, cache.lengths[holder])
                cache.copy_prefix(holder, r, length)
                row.pending = row.pending[length:]
            for key in row.keys:  # the rows after this one can wait for what it feeds this pass
                holders.setdefault(key, r)
        return waiting

    def _prefill_groups(self, rows: list[_Row], waiting: set[int]) -> list[list[int]]:
        """Rows with more than one token to feed (but the ``waiting`` ones), shortest first, in
        groups of at most ``prefill_tokens`` tokens (rows x width)."""
        feeding = sorted((r for r, row in enumerate(rows) if len(row.pending) > 1 and r not in waiting),
                         key=lambda r: len(rows[r].pending))
        groups: list[list[int]] = []
        real = 0  # tokens the last group feeds, its padding not counted
        for r in feeding:
            width = min(len(rows[r].pending), self.prefill_tokens)  # the group's widest row, as sorted
            padded = (len(groups[-1]) + 1) * width if groups else 0
            if groups and padded <= self.prefill_tokens and real + width >= PREFILL_FILL * padded:
                groups[-1].append(r)
                real += width
            else:
                groups.append([r])
                real = width
        return groups

    def _pass(self, forward: Any, cache: RaggedCache, rows: list[_Row], chosen: list[int] | None, sampling: Sampling,
              stop_ids: set[int], clock: _Clock) -> int:
        """One forward pass over ``chosen`` rows (None: all) feeding their pending tokens (up
        to ``prefill_tokens`` each); rows that fed all of theirs sample a token. Returns the
        tokens sampled."""
        indices = list(range(len(rows))) if chosen is None else chosen
        fed = [rows[r].pending[: self.prefill_tokens] for r in indices]
        width = max(map(len, fed))
        input_ids = torch.tensor([ids + [0] * (width - len(ids)) for ids in fed])
        ends = []  # per row, the query whose next token is predicted (-1: its feed goes on)
        for r, ids in zip(indices, fed):
            rows[r].pending = rows[r].pending[len(ids):]
            ends.append(-1 if rows[r].pending else len(ids) - 1)
        positions, mask = cache.step(chosen, list(map(len, fed)), width)
        if width == 1 and min(ends) == 0:  # a decode step: every row's one query predicts
            keep = None
        else:
            keep = (torch.arange(width)[None, :] == torch.tensor(ends)[:, None]).to(self.device)
        logits = forward(input_ids.to(self.device), positions, mask, cache, keep)
        sampling_rows = [r for r, end in zip(indices, ends) if end >= 0]
        if not sampling_rows:
            return 0
        ids, logprobs = sample(logits.reshape(len(sampling_rows), -1), sampling.temperature)
        return self._take_samples(ids, logprobs, sampling_rows, cache, rows, sampling, stop_ids, clock)

    def _take_samples(self, ids: list[int], logprobs: list[float], sampling_rows: list[int], cache: RaggedCache,
                      rows: list[_Row], sampling: Sampling, stop_ids: set[int], clock: _Clock) -> int:
        """Append each sampled token to its row's reply; a row whose reply ends hands it to its
        sequence. Returns the tokens sampled."""
        for r, token, logprob in zip(sampling_rows, ids, logprobs):
            row = rows[r]
            row.reply.append(token)
            row.logprobs.append(logprob)
            row.pending = [token]
            if token in stop_ids or len(row.reply) >= sampling.max_new_tokens:
                self._end_turn(cache, r, row, clock)
        return len(sampling_rows)

    def _transformers_forward(self, input_ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor,
                              cache: RaggedCache, keep: torch.Tensor | None) -> torch.Tensor:
        """The network's own forward, as :class:`~.decoder.LeanDecoder` is called."""
        return self.network(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True,
                            logits_to_keep=0 if keep is None else keep, **{self.cache_argument: cache}).logits

    @staticmethod
    def _end_turn(cache: RaggedCache, r: int, row: _Row, clock: _Clock) -> None:
        if clock.outside_call(row.sequence.turn_done, row.reply, row.logprobs):
            row.pending = row.sequence.tokens[cache.lengths[r]:]
            row.reply, row.logprobs = [], []
        else:
            row.done, row.pending = True, []

    @staticmethod
    def _drop_finished(cache: RaggedCache, rows: list[_Row]) -> list[_Row]:
        kept = [r for r, row in enumerate(rows) if not row.done]
        cache.keep_rows(kept)
        return [rows[r] for r in kept]


def left_padded(contexts: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)`` of token lists left-padded to one width, as ``generate`` wants them."""
    width = max(map(len, contexts))
    input_ids = torch.full((len(contexts), width), pad, dtype=torch.long)
    attention = torch.zeros((len(contexts), width), dtype=torch.long)
    for row, ids in enumerate(contexts):
        input_ids[row, width - len(ids):] = torch.tensor(ids)
        attention[row, width - len(ids):] = 1
    return input_ids, attention


def generate(network: Any, contexts: list[list[int]], sampling: Sampling, stop_ids: set[int], pad: int,
             device: torch.device) -> list[tuple[list[int], list[float]]]:
    """Sample one reply per context with ``transformers``' ``generate`` (left-padded batch),
    each ending at its first stop token (kept) or at ``max_new_tokens``, with the log-prob of
    every sampled token (:func:`sample`'s distribution)."""
    from transformers import GenerationConfig

    input_ids, attention = left_padded(contexts, pad)
    width = input_ids.shape[1]
    greedy = sampling.temperature <= 0
    config = GenerationConfig(
        max_new_tokens=sampling.max_new_tokens, do_sample=not greedy, temperature=None if greedy else sampling.temperature,
        top_k=0, top_p=1.0,  # explicit: unset values would take the model's defaults (Qwen: top_k 20, top_p 0.8)
        eos_token_id=sorted(stop_ids), pad_token_id=pad, output_logits=True, return_dict_in_generate=True,
    )
    with torch.no_grad():
        out = network.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device), generation_config=config)
    new = out.sequences[:, width:].cpu()
    logits = torch.stack(out.logits, dim=1).float().cpu()  # [batch, new tokens, vocab]
    scale = 1.0 if greedy else sampling.temperature
    logprobs = torch.log_softmax(logits / scale, dim=-1).gather(-1, new[:, : logits.shape[1], None]).squeeze(-1)
    replies = []
    for row in range(len(contexts)):
        ids = new[row].tolist()
        end = next((i + 1 for i, token in enumerate(ids) if token in stop_ids), len(ids))
        replies.append((ids[:end], logprobs[row, :end].tolist()))
    return replies


class GenerateEngine:
    """``transformers``' ``generate`` on each turn's whole context (module docstring): batches
    of ``max_batch`` sequences (None: all) play every turn in lockstep."""

    def __init__(self, network: Any, device: torch.device, max_batch: int | None = None, pad_id: int = 0) -> None:
        self.network, self.device, self.pad_id = network, device, pad_id
        self.max_batch = max_batch or 1 << 30

    def run(self, sequences: Iterable[Sequence], sampling: Sampling, stop_ids: set[int]) -> dict[str, float]:
        """As :meth:`CachedEngine.run`; ``seconds`` counts the ``generate`` calls."""
        source = iter(sequences)
        generated, seconds = 0, 0.0
        while batch := list(islice(source, self.max_batch)):
            while batch:
                start = time.perf_counter()
                replies = generate(self.network, [s.tokens for s in batch], sampling, stop_ids, self.pad_id, self.device)
                seconds += time.perf_counter() - start
                generated += sum(len(ids) for ids, _ in replies)
                batch = [s for s, (ids, logprobs) in zip(batch, replies) if s.turn_done(ids, logprobs)]
        return {"generated_tokens": float(generated), "seconds": seconds}


def make_engine(name: str, network: Any, device: torch.device, pad_id: int, max_batch: int | None = None) -> Any:
    """The engine called ``name`` (:data:`ENGINES`) on ``network``."""
    if name == "cached":
        return CachedEngine(network, device, max_batch)
    if name == "generate":
        return GenerateEngine(network, device, max_batch, pad_id)
    raise ValueError(f"unknown rollout engine {name!r}; choose from {ENGINES}")


@dataclass
class Prompt:
    """A one-turn sequence: a prompt whose reply is kept in ``reply``."""

    tokens: list[int]
    reply: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def turn_done(self, ids: list[int], logprobs: list[float]) -> bool:
        self.reply, self.logprobs = list(ids), list(logprobs)
        return False


def complete(engine: Any, prompts: list[list[int]], sampling: Sampling, stop_ids: set[int]) -> list[Prompt]:
    """One reply per prompt (token ids), decoded together by ``engine``."""
    sequences = [Prompt(list(ids)) for ids in prompts]
    engine.run(sequences, sampling, stop_ids)
    return sequences
