"""The project's own small chat model: a BPE tokenizer trained on the environments' text, with
the chat template of :mod:`trainers.llm.model`, and a Llama causal LM.

Tests and CI cannot download weights, so the project makes its model: the tokenizer learns
from expert conversations recorded in text mode (tasks, tool schemas, tool calls and results,
rendered by the chat template), and the network is a ``transformers`` ``LlamaForCausalLM``
built from a config (not Qwen2: ``AutoTokenizer`` rebuilds a Qwen2 model's tokenizer with
Qwen's own pre-tokenizer, which would undo :data:`PRE_TOKENIZER_PATTERN`; a Llama model
keeps the saved ``tokenizer.json`` as it is). Everything is saved with ``save_pretrained``: any Hugging Face code path
(``AutoModelForCausalLM``, ``AutoTokenizer``, ``transformers serve``) loads it, and every
agentgym code path takes a hub id such as ``Qwen/Qwen2.5-0.5B-Instruct`` the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import CHAT_TEMPLATE, DEFAULT_ENVS, RESPONSE_TEMPLATE, SPECIAL_TOKENS, read_trajectories


@dataclass(frozen=True)
class ModelSize:
    """The shape of a Llama network and its tokenizer's vocabulary."""

    vocab_size: int
    hidden_size: int
    layers: int
    heads: int
    intermediate_size: int
    context: int


SIZES: dict[str, ModelSize] = {
    # Tests: builds and trains in seconds.
    "micro": ModelSize(vocab_size=600, hidden_size=32, layers=2, heads=2, intermediate_size=64, context=2048),
    # The demonstration model: about 0.9M parameters (3 layers, the fewest that copy ids and
    # numbers from the context comfortably); its SFT fits minutes of a shared 2-core CPU.
    "tiny": ModelSize(vocab_size=2048, hidden_size=128, layers=3, heads=4, intermediate_size=384, context=2048),
    # The GPU configuration: about 7M parameters, built on one GPU.
    "small": ModelSize(vocab_size=4096, hidden_size=256, layers=6, heads=8, intermediate_size=1024, context=2048),
}

# How text is cut before BPE merges: every character of an email address on its own (the
# domain's: after an ``@`` at most 40 characters back; the local part's: before an ``@``), runs
# of letters (and ``_``, so tool names stay whole), single digits, single parentheses, and runs
# of everything else (spaces, punctuation). No piece glues a space or a quote onto a word or a
# parenthesis, so a value copied from the prompt (an email, an id, a name, a number, an
# arithmetic expression) is the same tokens in the user's prose, in a tool result and inside a
# JSON tool call (a ``": "(`` piece made the model drop an expression's first parenthesis); an
# address the model never saw is spelled with the same few dozen characters as a number is with
# ten digits: a tiny model copies those, but not BPE pieces of unseen words
# (benchmarks/results/llm_model.md).
PRE_TOKENIZER_PATTERN = (r"(?<=@[\p{L}\p{N}_.-]{0,40})[\p{L}\p{N}_]|[\p{L}\p{N}_](?=[\p{L}\p{N}_.+-]*@)"
                         r"|[\p{L}_]+|\p{N}|[()]|[^\p{L}\p{N}_()]+")


def pre_tokenizer() -> Any:
    """The pre-tokenizer of :data:`PRE_TOKENIZER_PATTERN`, then the byte-level alphabet."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(PRE_TOKENIZER_PATTERN), behavior="isolated"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def train_tokenizer(records: Sequence[dict[str, Any]], vocab_size: int, context: int) -> Any:
    """A byte-level BPE tokenizer trained on the rendered conversations, with the chat
    template and the response template that parses replies back. Digits are split one by
    one (unseen numbers and ids are spelled from known pieces) and words never carry the
    space or punctuation before them (:data:`PRE_TOKENIZER_PATTERN`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    def renderer() -> Any:
        fast = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
        fast.chat_template = CHAT_TEMPLATE
        return fast

    plain = renderer()
    texts = [plain.apply_chat_template(r["messages"], tools=r.get("tools"), tokenize=False) for r in records]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizer()
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        model_max_length=context)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer


def new_model(tokenizer: Any, size: ModelSize, seed: int = 0) -> Any:
    """A randomly initialised ``LlamaForCausalLM`` of ``size`` for ``tokenizer``."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=size.hidden_size, intermediate_size=size.intermediate_size,
        num_hidden_layers=size.layers, num_attention_heads=size.heads, num_key_value_heads=size.heads,
        max_position_embeddings=size.context, tie_word_embeddings=True,
        bos_token_id=None, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return model


def build_base(out: str | Path, size: str = "tiny", envs: Sequence[str] = DEFAULT_ENVS, episodes: int = 200,
               seed: int = 0, tokenizer_conversations: int = 2000, drills: int = 0) -> Path:
    """Record the expert on augmented train tasks (:mod:`trainers.llm.recipe.corpus`: ``episodes``
    per env, task files in ``<out>/tasks/``, then ``drills`` copy drills) to
    ``<out>/expert_train.jsonl``, train the
    tokenizer on up to ``tokenizer_conversations`` of them and save it with a fresh
    (untrained) model to ``out``; return ``out``."""
    from .corpus import build_corpus

    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; choose from {list(SIZES)}")
    out = Path(out)
    data = build_corpus(out, envs, episodes, seed=seed, drills=drills)
    shape = SIZES[size]
    records = read_trajectories(data)
    sample = records[:: max(1, len(records) // tokenizer_conversations)]
    tokenizer = train_tokenizer(sample, shape.vocab_size, shape.context)
    model = new_model(tokenizer, shape, seed)
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out
