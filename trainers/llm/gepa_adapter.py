"""GEPA (``pip install "agentgym-envs[apo]"``, https://github.com/gepa-ai/gepa) on an agentgym env: an
adapter that plays a candidate system prompt with the agent on train-split tasks (a task is its
reset seed) and turns the episodes into GEPA's reflective dataset, and :func:`optimize`, one GEPA
run with the same agent, optimiser model, validation slice and episode budget as APO
(:mod:`trainers.llm.apo`), for side-by-side comparisons (``benchmarks/apo_vs_gepa.py``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_envs.evaluation import BatchPolicy
from agentgym_envs.inference import ChatClient, EndpointError

from .prompting import play_prompt, render_demo

COMPONENT = "system_prompt"  # the one text component GEPA evolves


@dataclass
class AgentGymAdapter:
    """GEPA's ``GEPAAdapter`` for an agentgym env. A data instance is a train-split reset seed;
    a candidate's score on it is the episode's success (0 or 1). ``episodes``, ``env_steps`` and
    ``errors`` count what the optimisation spent and the endpoint errors it met."""

    policy: BatchPolicy
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 4
    episodes: int = 0
    env_steps: int = 0
    errors: list[str] = field(default_factory=list)

    def evaluate(self, batch: list[int], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        from gepa import EvaluationBatch

        records = play_prompt(self.policy, candidate[COMPONENT], self.env_id, "train", batch, self.env_kwargs,
                              self.concurrency)
        self.episodes += len(records)
        self.env_steps += int(sum(record["metrics"].get("turns", 0) for record in records))
        self.errors += [record["error"] for record in records if record["error"] is not None]
        scores = [float(record["metrics"].get("success", 0.0)) for record in records]
        outputs = [verdict(record) for record in records]
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=records if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Per episode: the task, the agent's calls and their results, and the grader's verdict."""
        items = [{"Inputs": {"task": task_text(record["messages"])},
                  "Generated Outputs": render_demo(record["messages"]),
                  "Feedback": verdict(record)}
                 for record in eval_batch.trajectories]
        return {name: items for name in components_to_update}


def task_text(messages: Sequence[dict[str, Any]]) -> str:
    return next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")


def verdict(record: dict[str, Any]) -> str:
    """Success, or why the episode failed (the grader's reason or the endpoint error)."""
    if record["error"] is not None:
        return f"failed: the agent's endpoint gave no answer ({record['error']})"
    outcome = record.get("outcome") or {}
    status = "solved" if record["metrics"].get("success", 0.0) >= 1.0 else "failed"
    return f"{status}: {outcome.get('reason', 'no verdict')}"


@dataclass
class ReflectionModel:
    """GEPA's reflection LM on an OpenAI-compatible endpoint; a request that fails for good (the
    client retries first) is recorded in ``errors`` and raised, which GEPA logs and skips."""

    client: ChatClient
    errors: list[str] = field(default_factory=list)

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        try:
            return self.client.chat(messages).message.get("content") or ""
        except EndpointError as exc:
            self.errors.append(str(exc))
            raise


def optimize(policy: BatchPolicy, env_id: str, seed_prompt: str, trainset: Sequence[int], valset: Sequence[int],
             reflection: ChatClient, max_metric_calls: int, *, env_kwargs: dict[str, Any] | None = None,
             concurrency: int = 4, minibatch_size: int = 3, seed: int = 0, run_dir: str | None = None) -> dict[str, Any]:
    """One GEPA run from ``seed_prompt``: ``{"best_prompt", "val_success", "candidates",
    "episodes", "env_steps", "metric_calls", "errors", "seconds"}``."""
    import gepa

    adapter = AgentGymAdapter(policy, env_id, dict(env_kwargs or {}), concurrency)
    reflection_lm = ReflectionModel(reflection)
    started = time.perf_counter()
    result = gepa.optimize(seed_candidate={COMPONENT: seed_prompt}, trainset=list(trainset), valset=list(valset),
                           adapter=adapter, reflection_lm=reflection_lm, max_metric_calls=max_metric_calls,
                           reflection_minibatch_size=minibatch_size, seed=seed, run_dir=run_dir,
                           raise_on_exception=False, display_progress_bar=False)
    return {"best_prompt": result.best_candidate[COMPONENT], "val_success": result.val_aggregate_scores[result.best_idx],
            "candidates": len(result.candidates), "episodes": adapter.episodes, "env_steps": adapter.env_steps,
            "metric_calls": result.total_metric_calls, "errors": len(adapter.errors) + len(reflection_lm.errors),
            "seconds": time.perf_counter() - started}
