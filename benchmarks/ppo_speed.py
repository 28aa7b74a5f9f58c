"""Our PPO's training speed against SB3 PPO's, same env, same machine, one run.

Both train on CustomerSupport-v0 with the same rollout and update schedule (our PPO Config's:
16 envs x 32 steps, 2 epochs, minibatches of 128, same learning rate and entropy coefficient) for ``--steps`` env steps each, interleaved in
``--rounds`` rounds (ours, SB3, ours, SB3, ...) so that both see the same machine load. SB3
PPO uses ``MlpPolicy`` on ``BagOfTokensObservation`` (its standard way to read the text
observation here, 1024 hashed token counts + entity-row flags) over a ``DummyVecEnv``; ours
the token policy on ``TokenIdsObservation``. SPS = env steps / wall time of training
(rollouts + updates, no evaluation). Writes ``benchmarks/results/ppo_speed.md``.

    nice -n 10 python benchmarks/ppo_speed.py --steps 4096 --rounds 3
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from agentgym_envs.wrappers import BagOfTokensObservation  # noqa: E402
from trainers.ppo import Config, train  # noqa: E402

ENV = "AgentGym/CustomerSupport-v0"
RESULTS = Path(__file__).resolve().parent / "results"


def ours_sps(steps: int, seed: int, device: str) -> tuple[float, dict[str, float]]:
    """Our PPO's SPS and where its time went: seconds of env stepping, of the rest of the
    rollouts (policy forward, storage) and of the updates, summed from its ``perf/*`` scalars."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tempfile.TemporaryDirectory() as run_dir:
        config = Config(env_id=ENV, seed=seed, total_steps=steps, device=device, run_dir=run_dir, eval_every_steps=0,
                        eval_episodes=1, checkpoint_every=10**9, progress=False)
        result = train(config)
        events = EventAccumulator(run_dir)
        events.Reload()
        seconds = {tag: sum(e.value for e in events.Scalars(f"perf/{tag}")) for tag in ("env_step_s", "rollout_s", "update_s")}
    split = {"env": seconds["env_step_s"], "rollout_policy": seconds["rollout_s"] - seconds["env_step_s"], "update": seconds["update_s"]}
    return (result.total_steps / result.wall_time_s if result.wall_time_s else float("nan")), split


def sb3_sps(steps: int, seed: int, device: str) -> float:
    from stable_baselines3 import PPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    ours = Config()  # the same rollout and update schedule as our PPO's defaults
    envs = DummyVecEnv([lambda: Monitor(BagOfTokensObservation(gym.make(ENV)))] * ours.num_envs)
    envs.seed(seed)
    model = PPO("MlpPolicy", envs, n_steps=ours.num_steps, batch_size=ours.minibatch_size, n_epochs=ours.update_epochs,
                learning_rate=ours.learning_rate, ent_coef=ours.ent_coef, seed=seed, device=device, verbose=0)
    start = time.time()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.time() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    ours, sb3, splits = [], [], []
    for round_ in range(args.rounds):
        sps, split = ours_sps(args.steps, round_, args.device)
        ours.append(sps)
        splits.append(split)
        sb3.append(sb3_sps(args.steps, round_, args.device))
        print(f"round {round_}: ours {ours[-1]:.1f} SPS, SB3 PPO {sb3[-1]:.1f} SPS", flush=True)
    ratio = float(np.mean(ours) / np.mean(sb3))
    command = "python benchmarks/ppo_speed.py " + shlex.join(sys.argv[1:])
    lines = ["# PPO speed: ours / SB3 PPO on CustomerSupport-v0 (target >= 2)", "", f"Command: `{command}`", "",
             f"Machine: {os.cpu_count()} CPU cores (shared), device {args.device}, torch threads 1, load average at the "
             f"end {os.getloadavg()[0]:.1f}; measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             "| round | ours SPS | SB3 PPO SPS | ours: env stepping | ours: policy in rollouts | ours: updates |", "|-|-|-|-|-|-|"]
    for i, (a, b, split) in enumerate(zip(ours, sb3, splits)):
        total = sum(split.values())
        shares = " | ".join(f"{split[key]:.1f} s ({split[key] / total:.0%})" for key in ("env", "rollout_policy", "update"))
        lines.append(f"| {i} | {a:.1f} | {b:.1f} | {shares} |")
    lines += ["", f"Mean: ours {np.mean(ours):.1f}, SB3 PPO {np.mean(sb3):.1f}; ratio **{ratio:.2f}** "
              f"(target >= 2: {'met' if ratio >= 2 else 'NOT met'}).",
              "", "Ours: seconds of env stepping (`perf/env_step_s`), of the rest of the rollouts (policy forward, "
              "storage: `perf/rollout_s` minus env) and of the PPO updates (`perf/update_s`), summed over the run."]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ppo_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
