"""A decode step of every row of a :class:`~.kv_cache.RaggedCache`, replayed from a CUDA graph.

On a GPU a small model's decode step is bound by the host: the lean decoder's few dozen kernel
launches, each prepared in Python, take longer than the kernels run
(``benchmarks/results/llm_speed.md``). A :class:`DecodeGraph` captures the step once: every
slot of the cache feeds one token at its row's length, the attention mask and the positions
the keys and values are written to are computed on the device from those lengths, and the
next tokens are drawn there too. A step then copies the tokens and lengths in, replays the
graph and copies the drawn tokens and their log-probs out. It stays valid while the cache keeps
its tensors (rows leave and join in place); when rows outgrow the slots or positions the
capacity, the cache allocates new tensors and the engine captures a new graph. Slots without
a row compute a token too, written at their position 0 and ignored (a row that joins there
overwrites it). On a CPU the same step runs without capture (what the tests check).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .decoder import LeanDecoder
from .kv_cache import RaggedCache


class _EverySlot:
    """The cache as :class:`~.decoder.LeanDecoder` sees it in the captured step: each layer's
    new keys and values written at ``index`` (flat slot, head, position), every slot's keys
    and values over the whole capacity returned."""

    shared_runs = None  # the captured step reads every slot's own keys and values (no cascade)
    packed, causal = None, False  # and feeds one token per slot (no padding) after what it holds

    def __init__(self, cache: RaggedCache) -> None:
        self.cache = cache
        self.index = torch.empty(0, dtype=torch.long, device=cache.device)

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        out = []
        for store, new in ((self.cache.keys, key), (self.cache.values, value)):
            tensor = store[layer_idx]
            tensor.view(-1, tensor.shape[-1]).index_copy_(0, self.index, new.reshape(-1, tensor.shape[-1]).to(tensor.dtype))
            out.append(tensor)
        return out[0], out[1]


class DecodeGraph:
    """``forward``'s decode step over every slot of ``cache`` (module docstring) and ``draw``
    of the next tokens from its logits, captured on CUDA. Call it with each row's token and
    position; it returns what ``draw`` returns for the rows (the engine's ids and log-probs)."""

    def __init__(self, forward: LeanDecoder, cache: RaggedCache, draw: Callable[[torch.Tensor], torch.Tensor]) -> None:
        self.forward, self.cache, self.draw = forward, cache, draw
        self.tensors = cache.keys[0]  # the graph reads and writes these tensors: valid while the cache keeps them
        device, slots, heads = cache.device, cache.slots, cache.keys[0].shape[1]
        self.inputs = torch.zeros((2, slots, 1), dtype=torch.long, device=device)  # tokens, positions
        self.slot_heads = (torch.arange(slots, device=device)[:, None] * heads
                           + torch.arange(heads, device=device)[None, :]) * cache.capacity
        self.key_positions = torch.arange(cache.capacity, device=device)
        self.writer = _EverySlot(cache)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.drawn: torch.Tensor | None = None

    def fits(self, cache: RaggedCache) -> bool:
        """Whether the graph still computes ``cache``'s decode step (the same tensors)."""
        return cache is self.cache and cache.keys[0] is self.tensors

    def __call__(self, tokens: list[int], positions: list[int]) -> torch.Tensor:
        """``draw`` of the next token of each row ``r`` feeding ``tokens[r]`` at ``positions[r]``
        (what :meth:`~.kv_cache.RaggedCache.advance` returned); their keys and values are written."""
        rows, empty = len(tokens), [0] * (self.inputs.shape[1] - len(tokens))  # slots without a row: token 0 at 0
        self.inputs.copy_(torch.tensor([tokens + empty, positions + empty]).view(self.inputs.shape))
        if self.cache.device.type != "cuda":
            return self._step()[:, :rows]
        if self.graph is None:
            self._capture()
        self.graph.replay()
        return self.drawn[:, :rows]

    def _step(self) -> torch.Tensor:
        tokens, positions = self.inputs[0], self.inputs[1]
        self.writer.index = (self.slot_heads + positions).view(-1)
        mask = self.key_positions[None, None, None, :] <= positions[:, None, :, None]  # [slots, 1, 1, capacity]
        return self.draw(self.forward(tokens, positions, mask, self.writer, None))

    def _capture(self) -> None:
        """Warm up on a side stream (as CUDA graph capture asks), then capture, on the inputs
        of the step at hand: the warm-up writes the keys and values the replay writes again."""
        side = torch.cuda.Stream(self.cache.device)
        side.wait_stream(torch.cuda.current_stream(self.cache.device))
        with torch.cuda.stream(side):
            self._step()
        torch.cuda.current_stream(self.cache.device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.drawn = self._step()
