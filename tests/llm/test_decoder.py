"""The lean decoder computes transformers' forward: its log-probs over a ragged KV cache (rows
of different lengths, right-padded, fed in several passes, some passes over a subset of the
rows) equal the network's own on each whole sequence, for both architectures it takes."""

from __future__ import annotations

import pytest
import torch

from agentgym_envs.inference import decoder
from agentgym_envs.inference.engine import CachedEngine, Sampling, complete
from agentgym_envs.inference.kv_cache import RaggedCache
from trainers.llm.chat import ChatFormat
from trainers.llm.model import load

# Passes over a cache of three rows: (rows fed, None for all; tokens fed to each).
PASSES = [(None, [5, 9, 2]), (None, [1, 1, 1]), ([0, 2], [4, 1]), ([1], [1]), (None, [1, 3, 1])]


@pytest.fixture(scope="module")
def llama(micro_model):
    network, tokenizer = load(micro_model)
    return network.eval(), ChatFormat(tokenizer)


def qwen2_like(llama_network):
    """A randomly initialised Qwen2 network (biased query/key/value projections, grouped key
    and value heads) over the micro model's vocabulary."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=llama_network.config.vocab_size, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                         attn_implementation="sdpa")
    return Qwen2ForCausalLM(config).eval()


@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_ragged_multi_pass_logprobs_match_the_networks_forward(llama, architecture, attention):
    network = llama[0] if architecture == "llama" else qwen2_like(llama[0])
    assert decoder.supports(network)
    lean = decoder.LeanDecoder(network)
    generator = torch.Generator().manual_seed(0)
    sequences: list[list[int]] = [[], [], []]
    cache = RaggedCache(network.config.num_hidden_layers, torch.device("cpu"), attention)
    cache.add_rows(3)
    with torch.no_grad():
        for chosen, fed in PASSES:
            rows = chosen or [0, 1, 2]
            width = max(fed)
            ids = torch.randint(3, network.config.vocab_size, (len(rows), width), generator=generator)
            keep = torch.arange(width)[None, :] < torch.tensor(fed)[:, None]  # real tokens, not the padding
            starts = [len(sequences[r]) for r in rows]
            for k, r in enumerate(rows):
                sequences[r] += ids[k, : fed[k]].tolist()
            positions, mask = cache.step(chosen, fed, width)
            logprobs = torch.log_softmax(lean(ids, positions, mask, cache, keep), -1)
            expected = torch.cat([network(input_ids=torch.tensor([sequences[r]])).logits[0, start: start + count]
                                  for r, start, count in zip(rows, starts, fed)])
            assert torch.allclose(logprobs, torch.log_softmax(expected, -1), atol=1e-5)


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="needs torch built with oneDNN")
def test_a_projection_through_onednn_computes_torch_s_product():
    generator = torch.Generator().manual_seed(0)
    weight, bias, x, residual = (torch.randn(shape, generator=generator) for shape in ((48, 32), (48,), (5, 32), (5, 48)))
    packed, plain = decoder.Projection(weight, bias), decoder.Projection(weight, bias)
    plain.packed = None
    assert packed.packed is not None
    assert torch.allclose(packed(x), torch.nn.functional.linear(x, weight, bias), atol=1e-5)
    assert torch.allclose(plain(x), torch.nn.functional.linear(x, weight, bias), atol=1e-5)
    unbiased = decoder.Projection(weight)
    assert torch.allclose(unbiased.added_to(residual, x), residual + x @ weight.T, atol=1e-5)


def lean_decoder_and_cache(network, rows: int) -> tuple[decoder.LeanDecoder, RaggedCache]:
    """The lean decoder of ``network`` and an empty cache of ``rows`` rows for it."""
    cache = RaggedCache(network.config.num_hidden_layers, torch.device("cpu"))
    cache.add_rows(rows)
    return decoder.LeanDecoder(network), cache


def test_a_padded_pass_projects_only_the_tokens_it_feeds(llama, monkeypatch):
    network, _ = llama
    lean, cache = lean_decoder_and_cache(network, 3)
    rows_projected = []
    project = decoder.Projection.__call__

    def recorded(projection, x):
        rows_projected.append(x.shape[0])
        return project(projection, x)

    monkeypatch.setattr(decoder.Projection, "__call__", recorded)
    positions, mask = cache.step(None, [5, 9, 2], 9)
    with torch.no_grad():
        lean(torch.randint(3, 50, (3, 9)), positions, mask, cache, None)
    assert set(rows_projected) == {5 + 9 + 2}  # not 3 rows x 9 queries


def test_a_pass_over_rows_that_hold_nothing_attends_causally_without_a_mask(llama, monkeypatch):
    network, _ = llama
    lean, cache = lean_decoder_and_cache(network, 2)
    calls = []
    attention = torch.nn.functional.scaled_dot_product_attention

    def recorded(query, keys, values, attn_mask=None, is_causal=False, **kwargs):
        calls.append((attn_mask is None, is_causal))
        return attention(query, keys, values, attn_mask=attn_mask, is_causal=is_causal, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", recorded)
    with torch.no_grad():
        for fed in ([4, 2], [1, 3]):  # the first pass fills empty rows, the second continues them
            positions, mask = cache.step(None, fed, max(fed))
            lean(torch.randint(3, 50, (2, max(fed))), positions, mask, cache, None)
    layers = network.config.num_hidden_layers
    assert calls == [(True, True)] * layers + [(False, False)] * layers


def test_greedy_replies_and_logprobs_match_transformers_forward_in_the_engine(llama):
    network, fmt = llama
    prompts = [fmt.encode(fmt.prompt([{"role": "user", "content": text}], None))
               for text in ("What is 2 + 3?", "Hello", "Reset my password, please; my order id is 1234.")]
    replies = {lean: complete(CachedEngine(network, torch.device("cpu"), lean=lean), prompts, Sampling(0.0, 12), set())
               for lean in (True, False)}
    for new, old in zip(replies[True], replies[False]):
        assert new.reply == old.reply and len(new.reply) == 12
        assert new.logprobs == pytest.approx(old.logprobs, abs=1e-5)


def test_a_network_the_decoder_does_not_compute_keeps_transformers_forward(llama):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, mlp_bias=True)  # the decoder has no MLP biases
    network = LlamaForCausalLM(config).eval()
    assert not decoder.supports(network)
    assert not CachedEngine(network, torch.device("cpu")).lean
    assert CachedEngine(llama[0], torch.device("cpu")).lean
    (prompt,) = complete(CachedEngine(network, torch.device("cpu")), [[1, 2, 3]], Sampling(0.0, 4), set())
    assert len(prompt.reply) == 4
