"""Our PPO's training speed against SB3 PPO's: same network, same observation, same schedule,
same env, same machine, one process run.

Five trainers train for ``--steps`` env steps each, interleaved in ``--rounds`` rounds so that
all see the same machine load. On CustomerSupport-v0, on a bag of tokens:

- **ours, MLP**: our PPO (``agentgym train --algo ppo --set observation=bag``) with CleanRL's
  MLP actor-critic (2 x 64 tanh, separate actor and critic, one categorical per action
  dimension, masks unused) on ``BagOfTokensObservation``;
- **SB3 PPO, MLP**: SB3's ``PPO("MlpPolicy")`` (the same 2 x 64 tanh actor and critic) on the
  same observation over a ``DummyVecEnv``;
- **ours, token policy**: our PPO with its default transformer token policy on token ids (a
  bigger network: shown beside, not compared).

On CustomerSupport-L1-v0 (the main job's env), on the env's features observation with the flat
masked actions (``FlatDiscreteAction``, admissible layout, capacity 64, repeated calls masked):

- **ours, MLP on features**: our PPO with ``--set observation=features`` (the same 2 x 64 tanh
  MLP, reading the joint mask ``info["action_mask"]``);
- **SB3 MaskablePPO, MLP on features**: sb3-contrib's ``MaskablePPO("MlpPolicy")`` (2 x 64 tanh)
  on the same env over a ``DummyVecEnv``, masks from ``get_action_masks`` (``action_masks()``).

All five use our PPO Config's schedule: 16 envs x 32 steps per rollout, 2 epochs, 4
minibatches of 128, the same learning rate and entropy coefficient, one torch thread. SPS =
env steps / seconds of training (rollouts + updates; no evaluation, no checkpoint). Each
trainer starts with empty token caches (the same tasks would otherwise come pre-tokenized to
whichever runs second). Before the rounds, each MLP trainer runs once untimed
(``WARMUP_STEPS``), so that the first timed round pays for no first use (imports, kernels). The
ratios are taken within each round; the page gives their median. On a machine shared with
other jobs wall-clock SPS moves with their load, so the ratio is also given in CPU time (env
steps per CPU second of the training process: ``perf/cpu_s`` for ours, the process's CPU time
around ``learn`` for SB3), which that load inflates less. Where our PPO's time goes comes from
its ``perf/*`` scalars (env stepping, the rest of the rollout, the update). Writes
``benchmarks/results/ppo_speed.md``.

    nice -n 10 python benchmarks/ppo_speed.py --steps 8192 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs.core import tokens as core_tokens
from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction, tokens
from trainers.lifecycle import train
from trainers.ppo import Config
from trainers.run import TrainRequest

ENV = "AgentGym/CustomerSupport-v0"
FEATURES_ENV = "AgentGym/CustomerSupport-L1-v0"  # the main job's env
RESULTS = Path(__file__).resolve().parent / "results"
PARTS = ("env", "rollout_policy", "update")
WARMUP_STEPS = 1024  # one untimed run of each MLP trainer first, so that no timed round pays for first uses
FEATURES_GOAL, BAG_GOAL = 1.6, 1.5  # ours / SB3, the median of the rounds
RUN_COST_SECTION = "## What a suite run costs"  # written by run_cost.py


def empty_token_caches() -> None:
    """Forget every tokenized text, so that a trainer pays for tokenizing its own episodes."""
    core_tokens.clear_caches()
    tokens.clear_caches()


def ours_sps(steps: int, seed: int, device: str, observation: str, env_id: str = ENV) -> tuple[float, float, dict[str, float]]:
    """Our PPO's SPS, its env steps per CPU second, and where its time went: seconds of env
    stepping, of the rest of the rollouts (policy forward, storage) and of the updates, summed
    from its ``perf/*`` scalars."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    empty_token_caches()
    with tempfile.TemporaryDirectory() as root:
        result = train(TrainRequest(env_id, algo="ppo", seed=seed, total_steps=steps, device=device, run_root=root,
                                    eval_episodes=1, progress=False,
                                    overrides={"observation": observation, "eval_every_steps": 0, "checkpoint_every": 10**9}))
        events = EventAccumulator(result.run_dir)
        events.Reload()
        seconds = {tag: sum(e.value for e in events.Scalars(f"perf/{tag}")) for tag in ("env_step_s", "rollout_s", "update_s", "cpu_s")}
    split = {"env": seconds["env_step_s"], "rollout_policy": seconds["rollout_s"] - seconds["env_step_s"], "update": seconds["update_s"]}
    return result.sps, result.total_steps / seconds["cpu_s"], split


def sb3_sps(steps: int, seed: int, device: str) -> tuple[float, float]:
    """SB3 PPO's SPS and its env steps per CPU second."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    empty_token_caches()
    ours = Config()  # the same rollout and update schedule as our PPO's defaults
    envs = DummyVecEnv([lambda: Monitor(BagOfTokensObservation(gym.make(ENV)))] * ours.num_envs)
    envs.seed(seed)
    model = PPO("MlpPolicy", envs, n_steps=ours.num_steps, batch_size=ours.minibatch_size, n_epochs=ours.update_epochs,
                learning_rate=ours.learning_rate, ent_coef=ours.ent_coef, seed=seed, device=device, verbose=0)
    start, cpu_start = time.time(), time.process_time()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.time() - start), model.num_timesteps / (time.process_time() - cpu_start)


def maskable_sps(steps: int, seed: int, device: str) -> tuple[float, float]:
    """SB3 MaskablePPO's SPS and its env steps per CPU second, on the features observation with
    the flat masked actions our PPO's ``observation=features`` acts through."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from trainers.torch_policy import FEATURES_ACTIONS, FEATURES_MASK_REPEATS

    torch.set_num_threads(1)
    ours = Config()
    make = lambda: Monitor(FlatDiscreteAction(gym.make(FEATURES_ENV, split="train", observation="features",  # noqa: E731
                                                       mask_repeats=FEATURES_MASK_REPEATS), **FEATURES_ACTIONS))
    envs = DummyVecEnv([make] * ours.num_envs)
    envs.seed(seed)
    model = MaskablePPO("MlpPolicy", envs, n_steps=ours.num_steps, batch_size=ours.minibatch_size, n_epochs=ours.update_epochs,
                        learning_rate=ours.learning_rate, ent_coef=ours.ent_coef, policy_kwargs={"net_arch": [64, 64]},
                        seed=seed, device=device, verbose=0)
    start, cpu_start = time.time(), time.process_time()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.time() - start), model.num_timesteps / (time.process_time() - cpu_start)


def shares(split: dict[str, float]) -> str:
    total = sum(split.values())
    return " | ".join(f"{split[key]:.1f} s ({split[key] / total:.0%})" for key in PARTS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    ours_sps(WARMUP_STEPS, 0, args.device, "bag")  # first uses (imports, kernels, lazy caches) before any timed run
    sb3_sps(WARMUP_STEPS, 0, args.device)
    ours_sps(WARMUP_STEPS, 0, args.device, "features", FEATURES_ENV)
    maskable_sps(WARMUP_STEPS, 0, args.device)
    rows, feature_rows = [], []
    for round_ in range(args.rounds):
        mlp, mlp_cpu, mlp_split = ours_sps(args.steps, round_, args.device, "bag")
        sb3, sb3_cpu = sb3_sps(args.steps, round_, args.device)
        features, features_cpu, features_split = ours_sps(args.steps, round_, args.device, "features", FEATURES_ENV)
        maskable, maskable_cpu = maskable_sps(args.steps, round_, args.device)
        token, _, token_split = ours_sps(args.steps, round_, args.device, "tokens")
        rows.append((mlp, sb3, token, mlp_cpu, sb3_cpu, mlp_split, token_split))
        feature_rows.append((features, maskable, features_cpu, maskable_cpu, features_split))
        print(f"round {round_}: ours MLP {mlp:.0f} SPS ({mlp_cpu:.0f} per CPU s), SB3 PPO MLP {sb3:.0f} SPS ({sb3_cpu:.0f} per CPU s), "
              f"ours MLP on features {features:.0f} SPS ({features_cpu:.0f} per CPU s), SB3 MaskablePPO on features "
              f"{maskable:.0f} SPS ({maskable_cpu:.0f} per CPU s), ours token policy {token:.0f} SPS", flush=True)
    ratio = float(np.median([mlp / sb3 for mlp, sb3, *_ in rows]))
    cpu_ratio = float(np.median([mlp_cpu / sb3_cpu for _, _, _, mlp_cpu, sb3_cpu, *_ in rows]))
    token_ratio = float(np.median([token / sb3 for _, sb3, token, *_ in rows]))
    features_ratio = float(np.median([ours / sb3 for ours, sb3, *_ in feature_rows]))
    features_cpu_ratio = float(np.median([ours_cpu / sb3_cpu for _, _, ours_cpu, sb3_cpu, _ in feature_rows]))
    command = "python benchmarks/ppo_speed.py " + shlex.join(sys.argv[1:])
    met = lambda r, goal: f"goal >= {goal}: {'met' if r >= goal else 'NOT met'}"  # noqa: E731
    lines = ["# PPO speed: ours / SB3 with the same MLP, the same observation and actions, the same schedule", "",
             f"Command: `{command}`", "",
             f"Machine: {os.cpu_count()} CPU cores (shared with other jobs), device {args.device}, torch threads 1, load "
             f"average {load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end; "
             f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
             f"{args.steps} env steps per trainer per round; the five trainers take turns within each round.", "",
             "## Features observation, flat masked actions: CustomerSupport-L1-v0", "",
             "Ours: our PPO with `--set observation=features`; SB3: sb3-contrib's `MaskablePPO(\"MlpPolicy\")`, 2 x 64 tanh, "
             "on the same `FlatDiscreteAction` env (admissible layout, capacity 64, repeated calls masked), masks from `get_action_masks`.", "",
             "| round | ours, MLP on features SPS | SB3 MaskablePPO, MLP SPS | ours / SB3 | ours / SB3 in CPU time |", "|-|-|-|-|-|"]
    lines += [f"| {i} | {ours:.0f} | {sb3:.0f} | {ours / sb3:.2f} | {ours_cpu / sb3_cpu:.2f} |"
              for i, (ours, sb3, ours_cpu, sb3_cpu, _) in enumerate(feature_rows)]
    lines += ["", f"Median ratio on features: **{features_ratio:.3f}** ({met(features_ratio, FEATURES_GOAL)}); in CPU time: "
              f"{features_cpu_ratio:.2f}.", "",
              "## Bag of tokens, per-dimension actions: CustomerSupport-v0", "",
              "Ours: our PPO with `--set observation=bag` (masks unused); SB3: `PPO(\"MlpPolicy\")`; both on `BagOfTokensObservation`. "
              "The token policy (our PPO's default, a transformer on token ids) is a bigger network, shown for reference.", "",
              "| round | ours, MLP SPS | SB3 PPO, MLP SPS | ours / SB3 | ours / SB3 in CPU time | ours, token policy SPS | token policy / SB3 |",
              "|-|-|-|-|-|-|-|"]
    lines += [f"| {i} | {mlp:.0f} | {sb3:.0f} | {mlp / sb3:.2f} | {mlp_cpu / sb3_cpu:.2f} | {token:.0f} | {token / sb3:.2f} |"
              for i, (mlp, sb3, token, mlp_cpu, sb3_cpu, *_) in enumerate(rows)]
    lines += ["", f"Median ratio, same MLP: **{ratio:.3f}** ({met(ratio, BAG_GOAL)}); in CPU time "
              f"(env steps per CPU second of each training process, which other jobs' load inflates less): {cpu_ratio:.2f}; "
              f"token policy / SB3 MLP: {token_ratio:.2f} (a bigger network, shown for reference).", "",
              "## Where our PPO's training time goes", "",
              "Summed over each run: env stepping `perf/env_step_s` (with the features observation it includes "
              "`FlatDiscreteAction`'s joint mask, computed every step); the rest of the rollout, policy forward and storage: "
              "`perf/rollout_s` minus env; the update: `perf/update_s`.", "",
              "| round | policy | env stepping | policy in rollouts | updates |", "|-|-|-|-|-|"]
    for i, ((*_, mlp_split, token_split), (*_, features_split)) in enumerate(zip(rows, feature_rows)):
        lines += [f"| {i} | MLP on features | {shares(features_split)} |", f"| {i} | MLP on bag | {shares(mlp_split)} |",
                  f"| {i} | token policy | {shares(token_split)} |"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    page = RESULTS / "ppo_speed.md"
    kept = page.read_text().partition(RUN_COST_SECTION)[2] if page.exists() else ""  # run_cost.py's section stays
    page.write_text("\n".join(lines) + "\n" + (f"\n{RUN_COST_SECTION}{kept}" if kept else ""))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
