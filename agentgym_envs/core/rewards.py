"""Reward configuration shared by every tool-use environment."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

MODES = ("shaped", "outcome", "potential")


@dataclass(frozen=True)
class RewardConfig:
    """How a :class:`~agentgym_envs.core.env.ToolUseEnv` turns events into reward.

    ``mode="shaped"`` (default): every tool call earns ``correct_call`` or
    ``incorrect_call`` (invalid, failing, irrelevant and repeated calls are incorrect); the
    episode's end adds ``success * score`` (score in (0, 1]) or ``failure`` (score 0), and
    on success up to ``token_efficiency`` (fraction of the baseline tokens saved) and up to
    ``speed`` (fraction of the baseline time saved).

    ``mode="outcome"``: 0 on every step, the outcome score in [0, 1] at the episode's end
    (for GRPO-style research).

    ``mode="potential"``: potential-based shaping (Ng, Harada and Russell, "Policy invariance
    under reward transformations: theory and application to reward shaping", ICML 1999): each
    step earns ``shaping * (gamma * Phi(s') - Phi(s))``, with ``Phi`` the task's progress in
    [0, 1] (:meth:`~agentgym_envs.core.scenario.Scenario.progress`) and ``Phi = 0`` once the
    episode ends (terminated or truncated); the end adds the outcome score plus
    ``success_bonus`` on success. The shaping terms telescope, so with ``gamma`` equal to the
    learner's discount it does not change the optimal policy, and closing early earns back
    nothing of the progress made (with ``gamma=1`` an episode's return is its outcome reward
    minus ``shaping * Phi`` of its first state).
    """

    mode: Literal["shaped", "outcome", "potential"] = "shaped"
    success: float = 10.0
    failure: float = -5.0
    correct_call: float = 10.0
    incorrect_call: float = -20.0
    token_efficiency: float = 5.0
    speed: float = 3.0
    gamma: float = 0.99
    shaping: float = 1.0
    success_bonus: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"reward mode must be one of {MODES}, got {self.mode!r}")
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name != "mode" and not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)):
                raise ValueError(f"reward_config field {name} must be a finite number, got {value!r}")

    def step_reward(self, correct: bool) -> float:
        if self.mode != "shaped":
            return 0.0
        return self.correct_call if correct else self.incorrect_call

    def potential_reward(self, before: float, after: float) -> float:
        """The shaping term of one step in ``"potential"`` mode (0 in the other modes)."""
        if self.mode != "potential":
            return 0.0
        return self.shaping * (self.gamma * after - before)

    def final_reward(self, score: float, success: bool, token_saving: float, time_saving: float) -> float:
        """Reward added when the episode ends; savings are fractions of the baselines."""
        if self.mode == "outcome":
            return score
        if self.mode == "potential":
            return score + self.success_bonus * success
        if score <= 0.0:
            return self.failure
        reward = self.success * score
        if success:
            reward += self.token_efficiency * max(0.0, token_saving) + self.speed * max(0.0, time_saving)
        return reward
