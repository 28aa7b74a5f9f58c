"""agentgym environments as TRL ``GRPOTrainer`` environments (its ``environment_factory``).

TRL's environment mode plays multi-turn tool-calling episodes with the model being trained:
it renders the prompt and the environment's tools with the tokenizer's chat template,
generates, parses the reply's tool calls (``tokenizer.response_template``), calls the
environment's public methods of the same names, appends their results as ``tool`` messages
and generates again, until a reply calls no tool. This module makes any agentgym env id
(Math, CustomerSupport, Coding, tau2, ...) such an environment:

- **Tools.** :func:`environment_class` builds a class with one method per entry of the env's
  ``tool_schemas``: a real signature (JSON types as Python type hints, enums as ``Literal``,
  optional arguments defaulting to ``None``) and a Google-style docstring, so that TRL renders
  the same tool list the env declares. A call is forwarded to ``env.step`` as one OpenAI tool
  call and returns the env's reply text; wrong or missing arguments reach the env too, which
  answers them as an invalid call (an error text and its penalty), as for any agent.
- **Tasks.** :func:`task_dataset` holds one row per task of the env's train split: the env's
  opening messages as the ``prompt``, the ``seed`` that draws the task and its ``task_id``.
  TRL resets one instance per rollout with the row (``reset(seed=...)``), so the
  ``num_generations`` rollouts of a row play the same task and a run is reproducible.
- **Reward.** :func:`env_return` gives each rollout the env's own return: the sum of the
  rewards of its steps (the env's ``reward_config``). A final reply that called no tool is
  one more action for the env, as in agentgym's text mode: it is forwarded to ``env.step``
  (the env reads the forms TRL's parser does not, or scores an invalid call). The share of
  successful and finished episodes and the env steps are logged beside TRL's own metrics.

    from trl import GRPOConfig, GRPOTrainer
    from agentgym_envs.external_trainers.trl_env import environment_class, env_return, task_dataset

    trainer = GRPOTrainer(model="models/agentgym-tiny", reward_funcs=env_return,
                          train_dataset=task_dataset("math", 256),
                          environment_factory=environment_class("math"), args=GRPOConfig(...))

``python -m trainers.llm.trl_grpo`` is the runnable example. The adapter is the env side only:
it needs nothing of the project's trainers (TRL tokenizes, generates and trains), so it lives
with the other external trainers' adapters; giving the project's own tokenizer its response
template (``ensure_response_template``) is the trainer's part and lives in that example.

- **Served envs.** With ``base_url=`` (``environment_class("math", base_url="http://127.0.0.1:8765")``,
  the same for ``task_dataset``), each instance plays in a session of an env served by
  ``agentgym serve`` (OpenEnv, :mod:`agentgym_envs.external_trainers.openenv`) instead of an env in this process; the server
  decides the env and its arguments, and must allow as many sessions as TRL makes instances.
  ``token=`` (default: ``AGENTGYM_SERVE_TOKEN``'s value) is the server's bearer token.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Union

import gymnasium as gym

from agentgym_envs.core.runners import episode_tool_schemas

from .episode import canonical_id, chat_message

ONE_LINE = re.compile(r"\s*\n+\s*")
ENDED = "Error: the episode has ended; no further tool call is run."
RESERVED = ("reset", "get_reward")  # method names TRL gives a meaning of its own
JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                              "array": list, "object": dict, "null": type(None)}


def python_type(spec: dict[str, Any]) -> Any:
    """The type hint of a JSON-schema property that transformers' ``get_json_schema`` turns
    back into the same schema (``enum`` -> ``Literal``, ``array`` -> ``list[...]``)."""
    if "enum" in spec:
        return Literal[tuple(spec["enum"])]
    kind = spec.get("type")
    if isinstance(kind, list):
        return Union[tuple(python_type({**spec, "type": one}) for one in kind)]  # noqa: UP007 (built from a list)
    if kind == "array" and isinstance(spec.get("items"), dict):
        return list[python_type(spec["items"])]
    return JSON_TYPES.get(kind, Any)


def tool_method(schema: dict[str, Any]) -> Callable[..., str]:
    """A method for one OpenAI tool schema: its name, signature and Google-style docstring
    describe the tool; calling it runs the tool in the instance's env."""
    function = schema.get("function", schema)
    name = function["name"]
    if not name.isidentifier() or name.startswith("_") or name in RESERVED:
        raise ValueError(f"tool {name!r} cannot be a method of a TRL environment (a Python identifier, "
                         f"not private and none of {RESERVED})")
    properties = function.get("parameters", {}).get("properties", {})
    required = set(function.get("parameters", {}).get("required", []))

    def tool(self: AgentGymEnvironment, **arguments: Any):  # its signature for TRL is set below
        return self._call(name, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for arg, spec in properties.items():
        parameters.append(inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, annotation=python_type(spec),
                                            default=inspect.Parameter.empty if arg in required else None))
    # No return annotation: transformers would add a "return" entry the env's schema lacks.
    tool.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters[1:]}
    tool.__name__ = tool.__qualname__ = name
    # transformers reads the description verbatim and each argument's on one line
    lines = [function.get("description", name).strip(), "", "Args:"]
    lines += [f"    {arg}: " + ONE_LINE.sub(" ", spec.get("description", arg).strip()) for arg, spec in properties.items()]
    lines += ["", "Returns:", "    The environment's reply to the call."]
    tool.__doc__ = "\n".join(lines if properties else lines[:1] + lines[3:])
    return tool


class AgentGymEnvironment:
    """One agentgym env in text mode, as TRL's ``environment_factory`` wants it: ``reset``
    starts the task a dataset row names; every other public method is one of the env's tools
    (added by :func:`environment_class`). Only properties and private methods may be added
    here: TRL offers every public method to the model as a tool."""

    env_id: ClassVar[str]
    split: ClassVar[str]
    make_kwargs: ClassVar[dict[str, Any]]
    base_url: ClassVar[str | None] = None
    token: ClassVar[str | None] = None  # the server's bearer token (None: AGENTGYM_SERVE_TOKEN's)

    def __init__(self) -> None:
        self._env = make_text_env(self.env_id, self.split, self.make_kwargs, self.base_url, self.token)
        self._return = 0.0
        self._steps = 0
        self._tool_steps = 0
        self._metrics: dict[str, float] = {}
        self._ended = True
        self._seen = 0  # messages of the episode so far (info["messages"])

    def reset(self, seed: int, task_id: str | None = None, **row: Any) -> None:
        """Start the task drawn by ``seed`` (a dataset row's columns arrive as keyword
        arguments; ``task_id``, when given, must be the task the seed draws). The prompt is the
        row's own, so nothing is appended to it."""
        _, info = self._env.reset(seed=int(seed), **({"split": self.split} if self.base_url else {}))
        if task_id is not None and info["task_id"] != task_id:
            raise RuntimeError(f"seed {seed} drew task {info['task_id']!r}, the dataset row says {task_id!r}: "
                               f"the dataset was built for other env arguments")
        self._return, self._steps, self._tool_steps = 0.0, 0, 0
        self._metrics, self._ended, self._seen = {}, False, len(info["messages"])

    @property
    def env(self) -> gym.Env:
        """The agentgym env this instance plays in (a ``RemoteEnv`` session with ``base_url``)."""
        return self._env

    @property
    def episode_return(self) -> float:
        """The sum of the env's rewards in the current episode."""
        return self._return

    @property
    def steps(self) -> int:
        """Env steps of the current episode (tool calls plus a forwarded final reply)."""
        return self._steps

    @property
    def tool_steps(self) -> int:
        """Env steps of the current episode that came from tool calls TRL parsed and ran."""
        return self._tool_steps

    @property
    def ended(self) -> bool:
        """Whether the env ended the episode (terminated or truncated)."""
        return self._ended

    @property
    def metrics(self) -> dict[str, float]:
        """The env's episode metrics (``success``, ``tool_reliability``, ...) once it ended; {} before."""
        return dict(self._metrics)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._ended:
            return ENDED
        self._tool_steps += 1
        return self._step({"type": "function", "function": {"name": name, "arguments": arguments}})

    def _finish(self, reply: dict[str, Any]) -> None:
        """Forward the rollout's last reply to the env if it called no tool and the episode runs."""
        if not self._ended and reply.get("role") == "assistant" and not reply.get("tool_calls"):
            self._step(reply.get("content") or "")

    def _step(self, action: Any) -> str:
        _, reward, terminated, truncated, info = self._env.step(action)
        self._return += float(reward)
        self._steps += 1
        if terminated or truncated:
            self._ended, self._metrics = True, dict(info["metrics"])
        replies = info["messages"][self._seen + 1:]  # the env's answer to the assistant turn it recorded
        self._seen = len(info["messages"])
        return "\n".join(chat_message(m)["content"] for m in replies)


def make_text_env(env_id: str, split: str, make_kwargs: dict[str, Any], base_url: str | None = None,
                  token: str | None = None) -> Any:
    """The env in text mode on ``split``: in this process, or a session of the env served at
    ``base_url`` (with its bearer ``token``, default ``AGENTGYM_SERVE_TOKEN``'s)."""
    if base_url is not None:
        from .openenv.client import RemoteEnv

        return RemoteEnv(base_url, token=token)
    return gym.make(env_id, split=split, **{**make_kwargs, "action_mode": "text"})


def environment_class(env: str, split: str = "train", base_url: str | None = None, token: str | None = None,
                      **make_kwargs: Any) -> type[AgentGymEnvironment]:
    """A TRL environment class for an agentgym name or env id (made with ``make_kwargs``,
    e.g. ``reward_config``, ``max_turns``, ``data_dir``) on ``split``: one tool method per
    entry of the env's ``tool_schemas``. Pass the class as ``environment_factory``. With
    ``base_url``, the instances play the env served there (``make_kwargs`` are the server's),
    sending ``token`` (default: ``AGENTGYM_SERVE_TOKEN``'s) if the server wants one."""
    env_id = canonical_id(env)
    if base_url is not None:
        from .openenv.client import tool_schemas

        schemas = tool_schemas(base_url, token)
    else:
        probe = make_text_env(env_id, split, make_kwargs)
        try:
            schemas = list(episode_tool_schemas(probe))
        finally:
            probe.close()
    methods = {tool.__name__: tool for tool in map(tool_method, schemas)}
    return type(env_id.split("/")[-1].replace("-", "_"), (AgentGymEnvironment,),
                {**methods, "env_id": env_id, "split": split, "make_kwargs": dict(make_kwargs), "base_url": base_url,
                 "token": token,
                 "__doc__": f"{env_id} ({split} split) for TRL: tools {', '.join(methods)}."})


def task_dataset(env: str, tasks: int, seed: int = 0, split: str = "train", base_url: str | None = None,
                 token: str | None = None, **make_kwargs: Any) -> Any:
    """A ``datasets.Dataset`` of ``tasks`` rows seeded ``seed, seed + 1, ...`` on ``split``:
    ``prompt`` (the env's opening messages), ``seed`` and ``task_id`` (with ``base_url``, read
    from the env served there)."""
    from datasets import Dataset

    made = make_text_env(canonical_id(env), split, make_kwargs, base_url, token)
    rows = []
    try:
        for task_seed in range(seed, seed + tasks):
            _, info = made.reset(seed=task_seed, **({"split": split} if base_url else {}))
            prompt = [{"role": m["role"], "content": m["content"]} for m in info["messages"]]
            rows.append({"prompt": prompt, "seed": task_seed, "task_id": info["task_id"]})
    finally:
        made.close()
    return Dataset.from_list(rows)


def env_return(completions: list[list[dict[str, Any]]], environments: list[AgentGymEnvironment],
               log_metric: Callable[[str, float], None] | None = None, **_: Any) -> list[float]:
    """TRL reward function: each rollout's return in its env, after the env has read the
    rollout's final reply when that reply called no tool. Logs ``env/success`` (episodes the
    env ended successfully), ``env/finished`` (episodes the env ended) and ``env/steps``."""
    for completion, environment in zip(completions, environments, strict=True):
        if completion:
            environment._finish(completion[-1])
    if log_metric is not None and environments:
        count = len(environments)
        log_metric("env/success", sum(e.metrics.get("success", 0.0) for e in environments) / count)
        log_metric("env/finished", sum(e.ended for e in environments) / count)
        log_metric("env/steps", sum(e.steps for e in environments) / count)
    return [environment.episode_return for environment in environments]

