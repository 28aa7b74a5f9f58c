"""``RewardConfig(mode="potential")``: shaping by the task's progress that telescopes away
(Ng, Harada and Russell 1999), so the expert's return equals its outcome return."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import gymnasium as gym
import pytest

from agentgym_envs.core import RewardConfig
from agentgym_envs.evaluation import ExpertPolicy
from agentgym_envs.scenarios.tau2.upstream.files import installed_package_data

CS = "AgentGym/CustomerSupport-v0"
SHARED_TAU2 = Path(__file__).resolve().parents[1].parent / "shared" / "tau2"
# the retail and airline data: $TAU2_DATA_DIR, else the reference copy ../shared/tau2, else the installed tau2 package's
TAU2_DATA = Path(os.environ.get("TAU2_DATA_DIR") or (SHARED_TAU2 if SHARED_TAU2.is_dir() else installed_package_data() or SHARED_TAU2))
FAMILIES = {
    "customer_support": (CS, {}),
    "math": ("AgentGym/Math-v0", {}),
    "coding": ("AgentGym/Coding-v0", {}),
    "tau2_retail": ("AgentGym/Tau2Retail-v0", {"data_dir": str(TAU2_DATA)}),
    "tau2_airline": ("AgentGym/Tau2Airline-v0", {"data_dir": str(TAU2_DATA)}),
    "tau2_telecom": ("AgentGym/Tau2Telecom-v0", {}),
}
HAVE_DATA = {"tau2_retail": TAU2_DATA.is_dir(), "tau2_airline": TAU2_DATA.is_dir(),
             "tau2_telecom": importlib.util.find_spec("tau2") is not None}


def expert_episode(env: gym.Env, seed: int) -> tuple[list[float], dict]:
    """The rewards of the expert's episode on ``seed`` and its last info."""
    _, info = env.reset(seed=seed)
    expert, rewards, done = ExpertPolicy(env), [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(expert(None, info))
        rewards.append(reward)
        done = terminated or truncated
    return rewards, info


@pytest.mark.parametrize("family", list(FAMILIES))
def test_potential_shaped_expert_return_equals_its_outcome_return(family):
    env_id, kwargs = FAMILIES[family]
    if not HAVE_DATA.get(family, True):
        pytest.skip(f"{family} needs data that is not here")
    config = RewardConfig(mode="potential", gamma=1.0, success_bonus=2.0)
    potential = gym.make(env_id, reward_config=config, **kwargs)
    outcome = gym.make(env_id, reward_config={"mode": "outcome"}, **kwargs)
    for seed in range(3):
        _, first_info = potential.reset(seed=seed)
        start = potential.unwrapped.episode.progress()
        shaped, info = expert_episode(potential, seed)
        plain, plain_info = expert_episode(outcome, seed)
        assert info["outcome"] == plain_info["outcome"]
        bonus = config.success_bonus * info["outcome"]["success"]
        assert sum(shaped) == pytest.approx(sum(plain) + bonus - start)
        assert any(r > 0 for r in shaped[:-1]) or len(shaped) == 1  # progress is paid along the way


def test_potential_steps_pay_progress_made_and_closing_early_earns_none_of_it():
    config = RewardConfig(mode="potential", gamma=1.0)
    env = gym.make(CS, reward_config=config)
    base = env.unwrapped
    env.reset(seed=0)
    expert, paid = ExpertPolicy(env), []
    while not paid or paid[-1] == 0.0:  # read-only calls add no effect, hence no progress
        _, reward, terminated, *_ = env.step(expert(None, {}))
        assert not terminated
        paid.append(reward)
    first = sum(paid)
    assert first == pytest.approx(base.episode.progress()) and first > 0
    close = base.tool_names.index("close_ticket")
    resolution = next(i for i, row in enumerate(base.episode.entities.rows) if row.kind == "resolution")
    _, last, terminated, _, info = env.step([close, resolution, 0])
    assert terminated
    assert first + last == pytest.approx(info["outcome"]["score"])  # the progress paid is taken back at the end


def test_default_and_outcome_rewards_are_unchanged_and_unknown_modes_refused():
    assert RewardConfig().mode == "shaped" and RewardConfig().step_reward(True) == 10.0
    assert RewardConfig(mode="outcome").potential_reward(0.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="potential"):
        RewardConfig(mode="dense")


@pytest.mark.parametrize("gamma, shaping", [(0.9, 1.0), (0.5, 2.0)])
def test_discounted_shaped_return_is_the_unshaped_one_plus_the_potentials_difference(gamma, shaping):
    """Ng et al.'s identity at gamma < 1, where a term written ``after - gamma * before`` breaks it:
    the shaped return discounted by gamma equals the unshaped one plus
    ``shaping * (gamma**T * Phi(s_T) - Phi(s_0))``, with ``Phi(s_T) = 0`` once the episode ends."""
    config = RewardConfig(mode="potential", gamma=gamma, shaping=shaping)
    potential = gym.make(CS, reward_config=config)
    outcome = gym.make(CS, reward_config={"mode": "outcome"})
    for seed in range(3):
        potential.reset(seed=seed)
        start = potential.unwrapped.episode.progress()
        shaped, _ = expert_episode(potential, seed)
        plain, _ = expert_episode(outcome, seed)
        assert len(shaped) == len(plain) >= 2 and any(r > 0 for r in shaped[:-1])  # progress paid along the way
        discounted = lambda rewards: sum(gamma**t * r for t, r in enumerate(rewards))  # noqa: E731
        end = 0.0  # Phi(s_T): the env's potential once the episode has ended
        assert discounted(shaped) == pytest.approx(discounted(plain) + shaping * (gamma ** len(shaped) * end - start))
