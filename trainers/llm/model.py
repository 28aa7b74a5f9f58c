"""Chat models as the LLM trainers use them: the ChatML chat template that renders tools and
Hermes-style tool calls (:data:`CHAT_TEMPLATE`) and the response template that parses replies back
(:data:`RESPONSE_TEMPLATE`), the scripted expert's conversations recorded in text mode
(:func:`record_expert_trajectories`, read back by :func:`read_trajectories`), and :func:`load`,
any Hugging Face causal LM and its tokenizer from a path or a hub id.

Tools render one a line as a signature, ``name(arg: type, kind: a|b|c) - description``
(short enough for a model with a small window); tool calls render as ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``, tool
results as a user turn holding ``<tool_response>...</tool_response>``: Qwen2.5's format.

The project's own small model built on these (its tokenizer, network sizes and the corpus it
learns from) is the recipe in :mod:`trainers.llm.recipe`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs.evaluation import ExpertPolicy, run_episode
from agentgym_envs.observe import store
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


DEFAULT_ENVS = ("Math-v0", "CustomerSupport-v0")  # the version the augmented corpus writes tasks for


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


def load(model: str | Path, device: Any = "cpu", dtype: Any = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local path or a hub id, as any HF model is loaded."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    network = AutoModelForCausalLM.from_pretrained(str(model), dtype=dtype).to(device)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return network, tokenizer

