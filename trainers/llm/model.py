"""The project's own small chat model: a BPE tokenizer trained on the environments' text, a
ChatML chat template that renders tools and Hermes-style tool calls, and a Llama causal LM.

Tests and CI cannot download weights, so the project makes its model: the tokenizer learns
from expert conversations recorded in text mode (tasks, tool schemas, tool calls and results,
rendered by the chat template), and the network is a ``transformers`` ``LlamaForCausalLM``
built from a config (not Qwen2: ``AutoTokenizer`` rebuilds a Qwen2 model's tokenizer with
Qwen's own pre-tokenizer, which would undo :data:`PRE_TOKENIZER_PATTERN`; a Llama model
keeps the saved ``tokenizer.json`` as it is). Everything is saved with ``save_pretrained``: any Hugging Face code path
(``AutoModelForCausalLM``, ``AutoTokenizer``, ``transformers serve``) loads it, and every
agentgym code path takes a hub id such as ``Qwen/Qwen2.5-0.5B-Instruct`` the same way.

Tools render one a line as a signature, ``name(arg: type, kind: a|b|c) - description``
(short enough for a model with a small window); tool calls render as ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``, tool
results as a user turn holding ``<tool_response>...</tool_response>``: Qwen2.5's format.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs.observe import store
from agentgym_envs.policies import ExpertPolicy, run_episode
from agentgym_envs.wrappers.recorder import TrajectoryRecorder

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                  "<tool_response>", "</tool_response>"]

CHAT_TEMPLATE = (
    "{%- if tools or messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{- messages[0].content }}{%- endif %}"
    "{%- if tools %}"
    "{{- '\\n\\n# Tools\\n<tools>' }}"
    "{%- for tool in tools %}{%- set f = tool.function if tool.function is defined else tool %}"
    "{{- '\\n' + f.name + '(' }}"
    "{%- for arg, spec in (f.parameters.properties if f.parameters is defined else {}).items() %}"
    "{{- (', ' if not loop.first else '') + arg + ': ' }}"
    "{%- if spec.enum is defined %}{{- spec.enum | join('|') }}{%- else %}{{- spec.type }}{%- endif %}"
    "{%- endfor %}"
    "{{- ') - ' + f.description }}"
    "{%- endfor %}"
    "{{- '\\n</tools>\\nCall one tool per turn as <tool_call>\\n{\"name\": <function-name>, "
    "\"arguments\": <args-json-object>}\\n</tool_call>' }}"
    "{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'system' and loop.first %}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if message.content %}{{- message.content }}{%- endif %}"
    "{%- for call in message.tool_calls or [] %}"
    "{%- if loop.first and message.content or not loop.first %}{{- '\\n' }}{%- endif %}"
    "{{- '<tool_call>\\n{\"name\": \"' + call.function.name + '\", \"arguments\": ' }}"
    "{%- if call.function.arguments is string %}{{- call.function.arguments }}"
    "{%- else %}{{- call.function.arguments | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# How a reply in that template is read back into a message (``tokenizer.parse_response``,
# which TRL's GRPOTrainer uses to find tool calls): text, then ``<tool_call>`` JSON blocks.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": r"\s*<\|im_end\|>", "content": "text"},
    },
}


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

DEFAULT_ENVS = ("math", "customer_support")


def record_expert_trajectories(path: str | Path, envs: Sequence[str] = DEFAULT_ENVS, episodes: int = 200,
                               split: str = "train", seed: int = 0, *, steps: int | None = None,
                               env_kwargs: dict[str, Any] | None = None) -> Path:
    """Play the scripted expert in text mode on each env (an agentgym name or any registered
    id, made with ``env_kwargs``) and record the episodes (OpenAI chat JSONL,
    :class:`TrajectoryRecorder`) to ``path``, replacing any earlier file: ``episodes`` episodes
    per env seeded ``seed, seed + 1, ...``, or, given ``steps``, whole episodes until each env
    has recorded at least that many env steps."""
    from ..run import canonical_env_id

    path = Path(path)
    path.unlink(missing_ok=True)
    for name in envs:
        env = TrajectoryRecorder(gym.make(canonical_env_id(name), **{**(env_kwargs or {}), "action_mode": "text",
                                                                    "split": split}), path)
        try:
            expert = ExpertPolicy(env)
        except TypeError as exc:
            raise ValueError(f"recording expert trajectories needs an env with a scripted expert: {exc}") from exc
        played = episode = 0

        def counted(observation: Any, info: dict[str, Any]) -> Any:
            nonlocal played
            played += 1
            return expert(observation, info)  # noqa: B023 (played before the next episode makes another)

        while (played < steps) if steps is not None else (episode < episodes):
            run_episode(env, counted, seed=seed + episode)
            episode += 1
        env.close()
    return path


def env_steps(record: dict[str, Any]) -> int:
    """The env steps a recorded conversation holds: its assistant turns (one tool call each)."""
    return sum(message.get("role") == "assistant" for message in record["messages"])


def read_trajectories(paths: str | Path | Iterable[str | Path]) -> list[dict[str, Any]]:
    """Records of chat JSONL files (``messages`` and optional ``tools`` per line), or of the
    episodes of a run in the rollout store (``store:RUN``, ``store:RUN@PATH``); a malformed line
    is an error naming the file and line."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    records = []
    for path in paths:
        if str(path).startswith(store.STORE_PREFIX):  # a run of the rollout store
            records += store.trajectories(str(path))
            continue
        with Path(path).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
                if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
                    raise ValueError(f"{path}:{number}: a record needs a 'messages' list (OpenAI chat format)")
                records.append(record)
    if not records:
        raise ValueError(f"no trajectories in {', '.join(map(str, paths))}")
    return records


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
    """Record the expert on augmented train tasks (:mod:`trainers.llm.corpus`: ``episodes``
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


def load(model: str | Path, device: Any = "cpu", dtype: Any = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local path or a hub id, as any HF model is loaded."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    network = AutoModelForCausalLM.from_pretrained(str(model), dtype=dtype).to(device)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return network, tokenizer
