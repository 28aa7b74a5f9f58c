"""A lean forward pass of a Llama or Qwen2 causal LM over a :class:`~.kv_cache.RaggedCache`,
for the rollout engine.

``transformers``' forward spends most of a small model's decode step outside its matrix
products (mask and cache bookkeeping, module dispatch, one product per projection). This one
computes the same function on the model's own weights in a few fused calls per layer: one
product for the query, key and value projections, one for the gate and up projections, the
output and down projections added to the residual in the product, ``rms_norm`` in one call,
rotary embeddings from the model's own rotary module. On a CPU, float32 products go through
oneDNN with each matrix packed once into its preferred layout (``torch.ops.mkldnn``, as
``torch.compile`` does for frozen weights): 2-3x the speed of ``torch.nn.functional.linear``
(MKL) at every shape of the ``small`` model on the AMD CPU measured (``benchmarks/llm_analysis.py matmul``,
``benchmarks/results/cpu_matmul.md``). Its log-probs equal ``transformers``' forward to float
tolerance (``tests/llm/test_decoder.py``).

The fused weights are copies taken when a :class:`LeanDecoder` is made: make one per
rollout (the engine does, per :meth:`~.engine.CachedEngine.run`), after any weight update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from .kv_cache import RaggedCache, SharedRun

ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM")


def supports(network: Any) -> bool:
    """Whether :class:`LeanDecoder` computes ``network``'s forward: a plain (not adapter-wrapped)
    Llama or Qwen2 causal LM with SiLU MLPs, no sliding window and no bias outside the
    query, key and value projections."""
    if type(network).__name__ not in ARCHITECTURES or getattr(network.config, "hidden_act", None) != "silu":
        return False
    for layer in network.model.layers:
        attention, mlp = layer.self_attn, layer.mlp
        projections = (attention.q_proj, attention.k_proj, attention.v_proj, attention.o_proj,
                       mlp.gate_proj, mlp.up_proj, mlp.down_proj)
        if any(type(p) is not torch.nn.Linear for p in projections):
            return False
        qkv_biases = {p.bias is None for p in projections[:3]}
        if len(qkv_biases) > 1 or any(p.bias is not None for p in projections[3:]):
            return False
        if getattr(attention, "sliding_window", None) is not None:
            return False
    return True


class Projection:
    """``x @ weight.T (+ bias)``: through oneDNN on a packed copy of ``weight`` where it is a
    float32 matrix on a CPU with oneDNN (module docstring), else through torch's own product."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None) -> None:
        self.weight, self.bias = weight, bias
        onednn = weight.device.type == "cpu" and weight.dtype == torch.float32 and torch.backends.mkldnn.is_available()
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight) if onednn else None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed is None:
            return F.linear(x, self.weight, self.bias)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")

    def added_to(self, residual: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``residual + x @ weight.T`` (no bias), in the product."""
        if self.packed is None:
            return torch.addmm(residual, x, self.weight.t())
        return torch.ops.mkldnn._linear_pointwise.binary(x, residual, self.packed, None, "add")


@dataclass
class _Layer:
    """One decoder layer's weights, the projections fused."""

    input_norm: torch.Tensor
    qkv: Projection  # [(heads + 2 kv heads) * head_dim, hidden], with the projections' bias if any
    output: Projection
    post_norm: torch.Tensor
    gate_up: Projection  # [2 * intermediate, hidden]
    down: Projection


def cascade_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, runs: list[SharedRun],
                      scale: float) -> torch.Tensor:
    """A decode step's attention (``query`` ``[rows, heads, 1, head_dim]`` over ``keys`` and
    ``values`` ``[rows, heads, positions, head_dim]``), each run's shared prefix read once for
    all its rows: the scores of the prefix (one product per run) and of each row's own
    positions go through one softmax, and the output adds the two parts' weighted values."""
    outputs = []
    for run in runs:
        q = query[run.start:run.end, :, 0]  # [n, heads, head_dim]
        own_keys = keys[run.start:run.end, :, run.shared:run.width]
        scores = torch.matmul(q.unsqueeze(2), own_keys.transpose(-1, -2)).squeeze(2)  # [n, heads, own]
        scores = scores.masked_fill(run.own_hidden[:, None, :], float("-inf"))
        if run.shared:
            prefix = torch.bmm(q.transpose(0, 1), keys[run.start, :, :run.shared].transpose(1, 2))  # [heads, n, shared]
            scores = torch.cat([prefix.transpose(0, 1), scores], -1)
        weights = torch.softmax(scores * scale, -1)
        out = torch.matmul(weights[..., run.shared:].unsqueeze(2), values[run.start:run.end, :, run.shared:run.width])
        if run.shared:
            out = out + torch.bmm(weights[..., :run.shared].transpose(0, 1),
                                  values[run.start, :, :run.shared]).transpose(0, 1).unsqueeze(2)
        outputs.append(out)
    return torch.cat(outputs)  # [rows, heads, 1, head_dim]


class LeanDecoder:
    """``network``'s forward over a :class:`RaggedCache` (module docstring); check
    :func:`supports` first."""

    def __init__(self, network: Any) -> None:
        config, model = network.config, network.model
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.hidden = config.hidden_size
        self.scale = self.head_dim**-0.5  # as transformers scales attention
        self.eps = config.rms_norm_eps
        self.embed, self.final_norm = model.embed_tokens.weight, model.norm.weight
        self.rotary = model.rotary_emb
        self.layers = []
        with torch.no_grad():  # the packed and fused copies hold no autograd history
            self.lm_head = Projection(network.lm_head.weight)
            for layer in model.layers:
                attention, mlp = layer.self_attn, layer.mlp
                projections = (attention.q_proj, attention.k_proj, attention.v_proj)
                bias = None if attention.q_proj.bias is None else torch.cat([p.bias for p in projections])
                self.layers.append(_Layer(
                    input_norm=layer.input_layernorm.weight, qkv=Projection(torch.cat([p.weight for p in projections]), bias),
                    output=Projection(attention.o_proj.weight), post_norm=layer.post_attention_layernorm.weight,
                    gate_up=Projection(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])),
                    down=Projection(mlp.down_proj.weight)))
        half = self.head_dim // 2
        # rotate_half(x) * sin == roll(x, half) * signed_sin: the first half of sin negated
        self.sin_sign = torch.cat([-torch.ones(half), torch.ones(self.head_dim - half)]).to(self.embed)

    def __call__(self, input_ids: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor, cache: RaggedCache,
                 keep: torch.Tensor | None) -> torch.Tensor:
        """Logits ``[kept, vocab]`` at the positions where ``keep`` ``[rows, Q]`` is True (None:
        every position, as a captured decode step needs: no data-dependent shape), feeding
        ``input_ids`` ``[rows, Q]`` at ``positions`` with ``mask`` (what :meth:`RaggedCache.step`
        returned) and writing their keys and values to ``cache``."""
        rows, width = input_ids.shape
        runs, packed = cache.shared_runs, cache.packed
        ids, pos = input_ids.reshape(-1), positions.reshape(-1)
        if packed is not None:  # the products skip padded queries; attention reads them in rows again
            ids, pos = ids[packed], pos[packed]
        x = F.embedding(ids, self.embed)  # [tokens, hidden]
        cos, sin = self.rotary(x, pos[None])  # [1, tokens, head_dim]
        cos, sin = cos[0, :, None], (sin[0] * self.sin_sign)[:, None]
        heads, kv_heads, half = self.heads, self.kv_heads, self.head_dim // 2
        for index, layer in enumerate(self.layers):
            h = F.rms_norm(x, (self.hidden,), layer.input_norm, self.eps)
            qkv = layer.qkv(h).view(-1, heads + 2 * kv_heads, self.head_dim)
            qk = qkv[:, : heads + kv_heads]  # rotary on queries and keys at once, in place
            rolled = qk.roll(half, -1)
            qk.mul_(cos).addcmul_(rolled, sin)
            if packed is not None:
                qkv = qkv.new_zeros((rows * width, *qkv.shape[1:])).index_copy_(0, packed, qkv)
            qkv = qkv.view(rows, width, -1, self.head_dim).transpose(1, 2)  # [rows, heads + 2 kv heads, Q, head_dim]
            query = qkv[:, :heads]
            keys, values = cache.update(qkv[:, heads: heads + kv_heads], qkv[:, heads + kv_heads:], index)
            if runs is None:  # causal: no mask to read, and blocks above the diagonal skipped
                attended = F.scaled_dot_product_attention(query, keys, values, attn_mask=None if cache.causal else mask,
                                                          is_causal=cache.causal, scale=self.scale,
                                                          enable_gqa=kv_heads != heads)
            else:
                attended = cascade_attention(query, keys, values, runs, self.scale)
            attended = attended.transpose(1, 2).reshape(rows * width, -1)
            x = layer.output.added_to(x, attended if packed is None else attended[packed])
            h = F.rms_norm(x, (self.hidden,), layer.post_norm, self.eps)
            gate, up = layer.gate_up(h).chunk(2, dim=-1)
            x = layer.down.added_to(x, F.silu(gate).mul_(up))
        if keep is not None:
            keep = keep.reshape(-1)
            x = x[keep if packed is None else keep[packed]]
        return self.lm_head(F.rms_norm(x, (self.hidden,), self.final_norm, self.eps))
