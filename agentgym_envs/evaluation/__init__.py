"""The evaluation harness (:mod:`.harness`: ``evaluate``, the policies ``agentgym eval`` knows;
:mod:`.results`: the results file, pass^k) and the agents it evaluates: the reference agents
(scripted expert, random; :mod:`.agents`, :mod:`.vector_random`) and LLM agents for an endpoint
or a local model (:mod:`.openai_agent`, :mod:`.hf_agent`; the chat client they call is
:mod:`agentgym_envs.inference`'s).

The LLM agents need the ``llm`` extra (``openai``, ``transformers``), imported when one is made.
"""

from .agents import Agent, BatchPolicy, ExpertPolicy, RandomPolicy, Turn, run_episode, tool_env
from .harness import (
    MODEL_POLICIES,
    POLICIES,
    ModelSpec,
    ReferenceSpec,
    episode_records,
    evaluate,
    is_model_policy,
    model_policy,
    runner_for,
)
from .hf_agent import TransformersAgent
from .openai_agent import OpenAIChatAgent
from .results import default_results_path, pass_at_k, pass_hat_k

__all__ = ["Agent", "BatchPolicy", "episode_records", "ExpertPolicy", "MODEL_POLICIES", "ModelSpec",
           "OpenAIChatAgent", "POLICIES", "RandomPolicy", "ReferenceSpec", "TransformersAgent", "Turn", "default_results_path", "evaluate",
           "is_model_policy", "model_policy", "pass_at_k", "pass_hat_k", "run_episode", "runner_for", "tool_env"]
