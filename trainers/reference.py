"""Reference "runs" with no training: the random policy (the floor) and the scripted expert
(the ceiling), through the same lifecycle as every trainer so the benchmarks can table them
beside the learners. Their checkpoint, ``policy.json``, names the policy and its seed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs.evaluation import Agent, ExpertPolicy, RandomPolicy
from agentgym_envs.multiagent.policies import TEAMS
from agentgym_envs.multiagent.wrappers import ActiveAgentEnv

from .run import CheckpointError, Run, Trained, make_env, write_json_atomic


@dataclass
class ReferencePolicy:
    """``"random"`` (uniformly random mask-respecting calls, seeded) or ``"expert"`` (the
    scenario's scripted oracle) as a :class:`~trainers.run.TrainedPolicy`."""

    env_id: str
    kind: str
    seed: int = 0
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    def make_env(self, split: str) -> gym.Env:
        return make_env(self.env_id, split, self.env_kwargs)

    def agent(self, env: gym.Env) -> Agent:
        adapter = env.unwrapped
        if isinstance(adapter, ActiveAgentEnv):  # the team as one env: the team's own policy, for the agent holding the ticket
            team = TEAMS[self.kind](adapter.base, self.seed)
            return lambda observation, info: team(adapter.base.holder, observation, info)
        try:
            return RandomPolicy(env, seed=self.seed) if self.kind == "random" else ExpertPolicy(env)
        except TypeError as exc:
            raise ValueError(f"the {self.kind} policy needs an agentgym tool-use env: {exc}") from exc


def train(run: Run) -> Trained:
    """Nothing to train: write ``policy.json`` and hand the policy to the final evaluation."""
    policy = ReferencePolicy(run.env_id, run.algo, run.seed, run.env_kwargs)
    policy.agent(policy.make_env("test"))  # an env it cannot act in fails before the evaluation
    write_json_atomic(run.checkpoint_path, {"policy": policy.kind, "env_id": policy.env_id, "seed": policy.seed,
                                            "env_kwargs": policy.env_kwargs})
    return Trained(policy, 0, [], 0.0)


def load_policy(checkpoint: str | Path, device: str) -> ReferencePolicy:
    """The registry's loader for ``policy.json``."""
    try:
        data = json.loads(Path(checkpoint).read_text(encoding="utf-8"))
        return ReferencePolicy(data["env_id"], data["policy"], data["seed"], data["env_kwargs"])
    except (OSError, ValueError, KeyError) as exc:
        raise CheckpointError(f"{checkpoint} is not a reference policy file: {exc}") from exc
