"""PPO's correctness gate: CleanRL's CartPole-v1 setting, 500k steps, 3 seeds.

CleanRL's published ppo.py result on CartPole-v1 is 490 +/- 6 (mean episodic return at the end
of 500k steps). Ours must reach a mean return of at least 490 over 3 seeds. Each seed's result
is stored in ``benchmarks/results/ppo_cartpole/seed<n>.json`` (so seeds can run in parallel
processes); ``benchmarks/results/ppo_cartpole.{csv,md}`` are rebuilt from all stored seeds.

    nice -n 10 python benchmarks/ppo_cartpole.py --seeds 1 2 3 [--total-steps 500000]
    python benchmarks/ppo_cartpole.py --report-only
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
from pathlib import Path

import numpy as np

from trainers.lifecycle import train
from trainers.run import TrainRequest
from trainers.torch_policy import TRAINING_RETURN_TAG

RESULTS = Path(__file__).resolve().parent / "results"
STORE = RESULTS / "ppo_cartpole"
GATE = 490.0

# CleanRL ppo.py defaults (classic control), https://docs.cleanrl.dev/rl-algorithms/ppo/
CLEANRL_CARTPOLE = dict(num_envs=4, num_steps=128, learning_rate=2.5e-4, anneal_lr=True, gamma=0.99, gae_lambda=0.95,
                        num_minibatches=4, update_epochs=4, norm_adv=True, clip_coef=0.2, clip_vloss=True,
                        ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5, reward_scale=1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--total-steps", type=int, default=500_000)
    parser.add_argument("--run-root", default="runs/benchmarks")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--resume", action="store_true", help="continue each seed's run from its checkpoint")
    args = parser.parse_args()
    command = "python benchmarks/ppo_cartpole.py " + shlex.join(sys.argv[1:])
    STORE.mkdir(parents=True, exist_ok=True)
    for seed in [] if args.report_only else args.seeds:
        result = train(TrainRequest("CartPole-v1", algo="ppo", seed=seed, total_steps=args.total_steps, device="cpu",
                                    run_root=args.run_root, eval_episodes=20, resume=args.resume, progress=False,
                                    overrides=dict(eval_every_steps=100_000, eval_curve_episodes=10, **CLEANRL_CARTPOLE)))
        # CleanRL reports the mean training episodic return over the final episodes
        final_train_return = _final_episodic_return(result.run_dir)
        row = {"seed": seed, "total_steps": result.total_steps, "final_episodic_return": final_train_return,
               "greedy_eval_return": result.test_metrics["return"], "sps": result.sps, "wall_time_s": result.wall_time_s,
               "command": command}
        (STORE / f"seed{seed}.json").write_text(json.dumps(row, indent=1))
        print(row, flush=True)
    rows = [json.loads(p.read_text()) for p in sorted(STORE.glob("seed*.json"))]
    if not rows:
        return 1
    mean = float(np.mean([r["final_episodic_return"] for r in rows]))
    std = float(np.std([r["final_episodic_return"] for r in rows]))
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "ppo_cartpole.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    verdict = "PASSED" if mean >= GATE else "FAILED"
    commands = sorted({r["command"] for r in rows})
    lines = [f"# PPO on CartPole-v1 (correctness gate: mean return >= {GATE:g})", "",
             "Commands: " + ", ".join(f"`{c}`" for c in commands), "",
             "Final episodic return: mean training return over the last 20 updates (the mean of their logged "
             "episode means; CleanRL's measure is the last 20 episodes, about one per update at this return); "
             "greedy eval: 20 seeded episodes of the argmax policy.", "",
             "| seed | final episodic return | greedy eval return | SPS | wall time (s) |", "|-|-|-|-|-|"]
    lines += [f"| {r['seed']} ({r['total_steps']} steps) | {r['final_episodic_return']:.1f} | "
              f"{r['greedy_eval_return']:.1f} | {r['sps']:.0f} | {r['wall_time_s']:.0f} |" for r in rows]
    lines += ["", f"Mean over {len(rows)} seeds: **{mean:.1f} +/- {std:.1f}** -> gate {verdict} (CleanRL: 490 +/- 6)."]
    (RESULTS / "ppo_cartpole.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if mean >= GATE else 1


def _final_episodic_return(run_dir: str, last: int = 20) -> float:
    """The mean of the last ``last`` logged training returns (each the mean of an update's finished episodes)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(run_dir, size_guidance={"scalars": 0})
    events.Reload()
    values = [e.value for e in events.Scalars(TRAINING_RETURN_TAG)]
    return float(np.mean(values[-last:]))


if __name__ == "__main__":
    sys.exit(main())
