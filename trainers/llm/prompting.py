"""A system prompt as a policy: instructions and few-shot demonstrations put in front of any chat
agent (an OpenAI-compatible endpoint or a local Hugging Face model), the episodes a prompt plays
with their conversations, and the trained policy of a prompt-optimisation run (``agentgym eval``
loads it). Shared by APO (:mod:`trainers.llm.apo`) and the GEPA adapter
(:mod:`trainers.llm.gepa_adapter`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym_envs.evaluation import BatchPolicy, ModelSpec, Turn, episode_records

from ..run import CheckpointError, make_env, run_info

Message = dict[str, Any]
STATE_FILE = "apo_state.json"  # a prompt-optimisation run's checkpoint: its state, the agent and the best prompt


@dataclass(frozen=True)
class Prompt:
    """A system prompt: ``instructions`` and rendered ``demos`` (solved examples), in that order."""

    instructions: str
    demos: tuple[str, ...] = ()

    def render(self) -> str:
        """The system message's text."""
        if not self.demos:
            return self.instructions
        examples = "\n\n".join(f"Example {number}:\n{demo}" for number, demo in enumerate(self.demos, start=1))
        return f"{self.instructions}\n\nSolved examples:\n{examples}".strip()


def render_demo(messages: Sequence[Message], max_chars: int = 1200) -> str:
    """One episode's conversation as a compact demonstration: the task, then each tool call and
    its result (``name(arg=value) -> result``), at most ``max_chars`` characters."""
    lines = []
    for message in messages:
        role = message.get("role")
        if role == "user" and not lines:
            lines.append(f"Task: {message.get('content', '')}")
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                function = call.get("function", {})
                lines.append(f"Call: {function.get('name')}({_arguments(function.get('arguments'))})")
            if not calls and message.get("content"):
                lines.append(f"Call: {message['content']}")
        elif role in ("tool", "user"):
            lines.append(f"Result: {message.get('content', '')}")
    return "\n".join(lines)[:max_chars]


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    if not isinstance(arguments, dict):
        return str(arguments)
    return ", ".join(f"{name}={json.dumps(value)}" for name, value in arguments.items())


def with_system_prompt(messages: Sequence[Message], text: str) -> list[Message]:
    """``messages`` with their system message replaced by ``text`` (inserted where there was
    none; removed where ``text`` is empty)."""
    rest = list(messages[1:] if messages and messages[0].get("role") == "system" else messages)
    return ([{"role": "system", "content": text}] if text else []) + rest


class PromptedPolicy:
    """A batch policy that answers with ``policy`` under the system prompt ``system_prompt``."""

    def __init__(self, policy: BatchPolicy, system_prompt: str) -> None:
        self.policy, self.system_prompt = policy, system_prompt
        self.settings = {**getattr(policy, "settings", {"name": type(policy).__name__}), "system_prompt": system_prompt}

    def respond(self, conversations: Sequence[Sequence[Message]], tools: list[dict[str, Any]] | None) -> list[Turn]:
        return self.policy.respond([with_system_prompt(messages, self.system_prompt) for messages in conversations], tools)


def agent_spec(model: str, base_url: str | None, *, api_key: str | None = None, device: str = "cpu",
               timeout: float = 60.0, max_retries: int = 3, temperature: float | None = 0.0,
               max_tokens: int = 256) -> ModelSpec:
    """The agent: ``model`` at the OpenAI-compatible ``base_url``, or (``base_url`` None) the
    local Hugging Face model ``model`` on ``device``."""
    if base_url:
        return ModelSpec("openai", model, {"base_url": base_url, "api_key": api_key, "timeout": timeout,
                                           "max_retries": max_retries, "temperature": temperature, "max_tokens": max_tokens})
    return ModelSpec("hf", model, {"device": device, "temperature": temperature, "max_tokens": max_tokens})


def play_prompt(policy: BatchPolicy, system_prompt: str, env_id: str, split: str, seeds: Sequence[int],
                env_kwargs: dict[str, Any], concurrency: int) -> list[dict[str, Any]]:
    """One record per seed, in order (:func:`~agentgym_envs.evaluation.episode_records`, with the
    conversation), of ``policy`` under ``system_prompt`` on ``split`` in text mode; an endpoint
    error ends its episode as a failure with the error recorded. Each run of consecutive seeds
    plays ``concurrency`` episodes at once."""
    prompted, records = PromptedPolicy(policy, system_prompt), []
    for run in consecutive_runs(seeds):
        records += episode_records(env_id, prompted, episodes=len(run), split=split, seed=run[0],
                                   concurrency=min(concurrency, len(run)), keep_messages=True,
                                   **{**env_kwargs, "action_mode": "text"})
    return records


def consecutive_runs(seeds: Sequence[int]) -> list[list[int]]:
    """``[3, 4, 5, 9, 1, 2]`` -> ``[[3, 4, 5], [9], [1, 2]]``."""
    runs: list[list[int]] = []
    for seed in seeds:
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return runs


class PromptPolicy:
    """An optimised prompt as the lifecycle and ``agentgym eval`` use it: the env in text mode and
    the agent of ``spec`` under ``system_prompt``."""

    def __init__(self, env_id: str, spec: ModelSpec, system_prompt: str, env_kwargs: dict[str, Any] | None = None) -> None:
        self.env_id, self.spec, self.system_prompt = env_id, spec, system_prompt
        self.env_kwargs = {**(env_kwargs or {}), "action_mode": "text"}

    def make_env(self, split: str) -> Any:
        return make_env(self.env_id, split, self.env_kwargs)

    def agent(self, env: Any) -> PromptedPolicy:
        return PromptedPolicy(self.spec.build(1), self.system_prompt)


def load_policy(checkpoint: str | Path, device: str = "auto") -> PromptPolicy:
    """The best prompt of the run whose checkpoint (``apo_state.json``) this is, with its agent,
    on the env and env arguments its ``run.json`` records (``device``: a local agent's)."""
    path = Path(checkpoint)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        spec, prompt = state["agent"], state["prompts"][state["best"]]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{path} is not a readable prompt-optimisation checkpoint: {exc}") from exc
    options = {**spec["options"], "device": device} if spec["name"] == "hf" else spec["options"]
    info = run_info(path)
    return PromptPolicy(info["env_id"], ModelSpec(spec["name"], spec["model"], options), prompt["text"],
                        info.get("env_kwargs"))
