"""RLlib's PPO on an agentgym environment through the documented wrappers.

The environment is made with ``gym.make`` and wrapped in ``BagOfTokensObservation`` (a ``Box``
that RLlib's default MLP encoder reads); the structured ``MultiDiscrete`` action space is used
as is (RLlib's default catalog has a distribution for it; invalid calls cost their penalty, as
for SB3's plain PPO). The script registers the env with ``ray.tune``, trains PPO for
``--iterations`` and writes the mean episode return of each iteration (RLlib's
``env_runners/episode_return_mean``) beside two random policies' mean returns on the same
environment (``agentgym_envs.evaluation.evaluate``, same split and reward): uniform over the whole
action space (what PPO's first, untrained policy is close to) and uniform within the action
masks (``RandomPolicy``).

Needs ``pip install 'agentgym-envs[rllib]'`` (RLlib pins its gymnasium; see docs/ray.md).

    python benchmarks/rllib_ppo.py [--env AgentGym/CustomerSupport-v0] [--iterations 10]
        [--batch 1000] [--name rllib_ppo]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import gymnasium as gym

from agentgym_envs.evaluation import evaluate
from agentgym_envs.scale.rllib import ppo_config

RESULTS = Path(__file__).resolve().parent / "results"


def random_returns(env_id: str, seed: int) -> dict[str, float]:
    """Mean returns over 100 train episodes of uniformly random actions, unmasked and masked."""
    env = gym.make(env_id, split="train")
    env.action_space.seed(seed)
    uniform = evaluate(env, lambda observation, info: env.action_space.sample(), episodes=100, seed=seed)["return"]
    masked = evaluate(env_id, "random", episodes=100, split="train", seed=seed)["return"]
    return {"uniform": uniform, "masked": masked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="AgentGym/CustomerSupport-v0")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1000, help="env steps per PPO iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="rllib_ppo")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    command = "python benchmarks/rllib_ppo.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    import ray

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False)
    algo = ppo_config(args.env, args.batch, seed=args.seed).build_algo()
    rows, start = [], time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        result = algo.train()
        runners = result["env_runners"]
        rows.append({"iteration": iteration, "env_steps": int(runners["num_env_steps_sampled_lifetime"]),
                     "episode_return_mean": round(float(runners["episode_return_mean"]), 2),
                     "wall_s": round(time.perf_counter() - start, 1)})
        print(rows[-1], flush=True)
    algo.stop()
    ray.shutdown()
    baselines = random_returns(args.env, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / f"{args.name}.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    import ray.rllib  # noqa: F401  (versions for the header)

    lines = [f"# RLlib PPO on {args.env}", "",
             f"`{command.strip()}` on {platform.machine()}, {os.cpu_count()} CPU cores, ray {ray.__version__}, "
             f"gymnasium {gym.__version__}; load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}. "
             f"Observation `BagOfTokensObservation`, structured `MultiDiscrete` actions, train split, the env's "
             f"default reward. Mean return of random policies on the same env (100 episodes each): uniform over the "
             f"action space {baselines['uniform']:.1f}, uniform within the action masks {baselines['masked']:.1f}.", "",
             "| iteration | env steps | episode return mean | wall s |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['iteration']} | {r['env_steps']} | {r['episode_return_mean']} | {r['wall_s']} |" for r in rows]
    text = "\n".join(lines) + "\n"
    (args.out / f"{args.name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
