"""An agentgym episode as a verl agent loop (``agent_name: agentgym``).

verl's ``ToolAgentLoop`` makes a fresh tool object per call, which cannot hold an episode's
state. :class:`AgentGymAgentLoop` keeps one env for the whole trajectory instead:

1. the dataset row (:func:`agentgym_envs.external_trainers.data.verl_rows`) names the env, split and
   seed in ``extra_info``; the env is reset to that task and the row's ``prompt`` (the env's
   opening messages) is tokenized with the env's tools (``tool_schemas``) by verl's Continuous
   Token builder;
2. each turn generates through verl's LLM server client (``server_manager.generate``); the
   sampled tokens join the response with ``response_mask`` 1 and their log-probs;
3. the decoded reply goes to the env as it was written (``action_mode="text"``: the env's own
   parser); the env's replies (tool results, errors, a simulated user) are appended as context
   tokens with ``response_mask`` 0 (log-prob 0);
4. the loop ends when the env ends the episode, at ``max_turns`` or when the response reaches
   ``rollout.response_length``. The replies to the last turn are not appended (nothing is
   generated after them).

``reward_score`` is the env's return (the sum of its rewards, placed by verl on the last response
token), so verl needs no reward function for these rows. ``extra_fields["reward_extra_info"]``
carries the episode metrics verl logs beside the reward: ``success``, ``tool_reliability``,
``invalid_calls``, ``turns``, ``tokens_used``, ``cost_reduction`` (0 while unfinished), ``return`` and
``finished``; ``extra_fields["turn_scores"]`` the per-step rewards.

Register it with verl through ``actor_rollout_ref.rollout.agent.agent_loop_config_path``
pointing at ``verl_agent_loop.yaml`` beside this module (or import this module: ``@register``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
from verl.utils.profiler import simple_timer

from .episode import TextEpisode

logger = logging.getLogger(__name__)

AGENT_NAME = "agentgym"
REWARD_EXTRA_KEYS = ("success", "tool_reliability", "invalid_calls", "turns", "tokens_used", "cost_reduction",
                     "return", "finished")


def _value(item: Any) -> Any:
    """A numpy scalar or 0-d array from verl's non-tensor batch as a Python value."""
    return item.item() if hasattr(item, "item") and getattr(item, "ndim", 0) == 0 else item


def merge_consecutive(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Continuous Token tokenizes one user or system message per append group: consecutive
    non-tool messages of one role are joined (newline-separated) into one; tool results stay apart."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and message["role"] != "tool" and merged[-1]["role"] == message["role"]:
            merged[-1] = {**merged[-1], "content": merged[-1]["content"] + "\n" + message["content"]}
        else:
            merged.append(dict(message))
    return merged


@register(AGENT_NAME)
class AgentGymAgentLoop(AgentLoopBase):
    """One agentgym episode per trajectory, generated through verl's server manager.

    Keyword arguments (from the agent-loop YAML): ``with_tools`` (default True: the chat
    template renders the env's ``tool_schemas``), ``max_turns`` (default None: the env's own
    limit, then ``rollout.multi_turn.max_assistant_turns`` when set), ``env_kwargs`` (``gym.make``
    arguments added to each row's)."""

    def __init__(self, *args: Any, with_tools: bool = True, max_turns: int | None = None,
                 env_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        kwargs.pop("name", None)  # the YAML entry's own name
        kwargs.pop("tools", None)  # verl's tool list: the env brings its own tools
        super().__init__(*args, **kwargs)
        self.prompt_length = self.rollout_config.prompt_length
        self.response_length = self.rollout_config.response_length
        self.with_tools = with_tools
        multi_turn = getattr(self.rollout_config, "multi_turn", None)
        self.max_turns = max_turns or (getattr(multi_turn, "max_assistant_turns", None) if multi_turn else None)
        self.env_kwargs = dict(env_kwargs or {})

    def _episode(self, extra_info: dict[str, Any]) -> TextEpisode:
        env_kwargs = extra_info.get("env_kwargs") or {}
        if isinstance(env_kwargs, str):  # parquet rows hold it as JSON
            env_kwargs = json.loads(env_kwargs)
        return TextEpisode(str(extra_info["env"]), str(extra_info.get("split") or "train"),
                           **{**self.env_kwargs, **env_kwargs})

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra_info = {k: _value(v) for k, v in dict(_value(kwargs.get("extra_info")) or {}).items()}
        for key in ("env", "seed"):
            if key not in extra_info:
                raise ValueError(f"an agentgym row needs extra_info[{key!r}] (rows of agentgym_envs.external_trainers.data)")
        loop = asyncio.get_running_loop()
        episode = await loop.run_in_executor(None, self._episode, extra_info)
        try:
            return await self._play(episode, extra_info, sampling_params, kwargs)
        finally:
            episode.close()

    async def _play(self, episode: TextEpisode, extra_info: dict[str, Any], sampling_params: dict[str, Any],
                    kwargs: dict[str, Any]) -> AgentLoopOutput:
        loop = asyncio.get_running_loop()
        opening = await loop.run_in_executor(None, episode.reset, int(extra_info["seed"]), extra_info.get("task_id"))
        raw_prompt = kwargs.get("raw_prompt")
        messages = [dict(m) for m in (list(raw_prompt) if raw_prompt is not None and len(raw_prompt) else opening)]
        tools = episode.tool_schemas if self.with_tools else None
        timing: dict[str, float] = {}
        generate_s = env_s = 0.0
        prompt_ids = await self.ct_build_initial_tokens(messages, tools=tools)
        response_mask: list[int] = []
        response_logprobs: list[float] | None = None
        # unique per trajectory (verl routes a trajectory's turns to one server by it); it names the task for tracing
        request_id = f"{uuid4().hex}:{episode.split}:{int(extra_info['seed'])}"
        turn_scores: list[float] = []
        num_preempted = -1
        while True:
            with simple_timer("generate_sequences", timing):
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids,
                                                            sampling_params=sampling_params)
            generate_s += timing["generate_sequences"]
            if output.num_preempted is not None:
                num_preempted = max(num_preempted, 0) + output.num_preempted
            if output.log_probs and response_logprobs is None:
                response_logprobs = [0.0] * len(response_mask)
            merged, response_mask, response_logprobs = await self.ct_merge_assistant_token(
                prompt_ids, output.token_ids, response_mask, response_logprobs,
                assistant_logprobs=output.log_probs if output.log_probs else None)
            prompt_ids = merged.token_ids
            reply = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            with simple_timer("tool_calls", timing):
                step = await loop.run_in_executor(None, episode.step, reply)
            env_s += timing["tool_calls"]
            turn_scores.append(step.reward)
            if step.done or len(response_mask) >= self.response_length:
                break
            if self.max_turns and episode.turns >= self.max_turns:
                break
            before = messages + [{"role": "assistant", "content": reply}]
            messages = before + merge_consecutive(step.replies)
            merged, response_mask, response_logprobs = await self.ct_merge_context_msg(
                before, messages, prompt_ids, response_mask, response_logprobs, tools=tools)
            prompt_ids = merged.token_ids
            if len(response_mask) >= self.response_length:
                break

        response_ids = prompt_ids[len(prompt_ids) - len(response_mask):]
        prompt_ids = prompt_ids[:len(prompt_ids) - len(response_mask)]
        metrics = episode.metrics
        reward_extra_info = {key: float(metrics.get(key, 0.0)) for key in REWARD_EXTRA_KEYS}
        reward_extra_info["return"] = float(episode.episode_return)
        reward_extra_info["finished"] = float(episode.ended)
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:self.response_length],
            response_mask=response_mask[:self.response_length],
            response_logprobs=response_logprobs[:self.response_length] if response_logprobs else None,
            reward_score=float(episode.episode_return),
            num_turns=len(messages) + 1,
            metrics=AgentLoopMetrics(generate_sequences=generate_s, tool_calls=env_s, num_preempted=num_preempted),
            extra_fields={"reward_extra_info": reward_extra_info, "turn_scores": turn_scores, "tool_rewards": [],
                          "agentgym": {"env_id": episode.env_id, "task_id": episode.task_id,
                                       "turns": episode.turns, "ended": episode.ended}},
        )
