"""How often a chat model solves each task of a task file when it samples, and the tasks in
a band of that success written to a new task file: the tasks GRPO can learn from (a task the
model always or never solves gives every episode of its group the same return, so no
advantage; DAPO filters its prompts the same way).

    python benchmarks/llm_task_difficulty.py --model models/agentgym-tiny --env math \\
        --task-file math_grpo_tasks.jsonl --first 48 --episodes 12 --band 0.2 0.6 --keep 4 --out math_band.jsonl

Plays ``--episodes`` episodes of each of the file's first ``--first`` tasks in text mode at
``--temperature`` (the outcome score as the return), prints each task's sampled success, and
writes the first ``--keep`` tasks whose success lies in ``--band`` (both ends included), as the
task file's own lines, to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from agentgym_envs import resolve_env_id  # noqa: E402
from trainers.checkpoints import seed_everything  # noqa: E402
from trainers.lifecycle import resolve_device  # noqa: E402
from trainers.llm import runtime  # noqa: E402
from trainers.llm.chat import ChatFormat  # noqa: E402
from trainers.llm.rollout import Sampling, play  # noqa: E402


def sampled_success(model: str, env_id: str, resets: list[dict], temperature: float, device: torch.device,
                    batch: int = 64, **env_kwargs) -> np.ndarray:
    """The success of one episode per entry of ``resets`` (the keyword arguments of its
    ``reset``), played in text mode at ``temperature`` (0: greedy) on envs made with
    ``env_kwargs``, the outcome score as the return."""
    network, tokenizer = runtime.load(model, device)
    fmt, window = ChatFormat(tokenizer), runtime.window(network, tokenizer)
    envs = [gym.make(env_id, action_mode="text", reward_config={"mode": "outcome"}, **env_kwargs)
            for _ in range(min(batch, len(resets)))]
    trajectories, _ = play(network.eval(), fmt, envs, resets, Sampling(temperature), device, window)
    for env in envs:
        env.close()
    return np.array([t.metrics.get("success", 0.0) for t in trajectories])


def task_file_success(model: str, env_id: str, lines: list[str], episodes: int, temperature: float,
                      device: torch.device) -> np.ndarray:
    """The mean success of ``episodes`` sampled episodes of each task line's task."""
    resets = [{"seed": k, "options": {"task_id": json.loads(line)["task_id"]}} for line in lines for k in range(episodes)]
    with tempfile.TemporaryDirectory() as folder:
        task_file = Path(folder) / "tasks.jsonl"
        task_file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        success = sampled_success(model, env_id, resets, temperature, device, task_file=str(task_file))
    return success.reshape(len(lines), episodes).mean(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--env", default="math")
    parser.add_argument("--task-file", required=True, help="a task file (JSONL) of the env")
    parser.add_argument("--first", type=int, default=48, help="how many of its first tasks to play")
    parser.add_argument("--episodes", type=int, default=12, help="sampled episodes per task")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--band", type=float, nargs=2, default=(0.2, 0.6), metavar=("LOW", "HIGH"))
    parser.add_argument("--keep", type=int, default=4, help="how many tasks of the band to write")
    parser.add_argument("--out", required=True, help="the task file to write")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    seed_everything(args.seed, 0)
    lines = [line for line in Path(args.task_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = lines[: args.first]
    success = task_file_success(args.model, resolve_env_id(args.env), lines, args.episodes, args.temperature,
                                torch.device(resolve_device(args.device)))
    low, high = args.band
    kept = [line for line, value in zip(lines, success) if low <= value <= high][: args.keep]
    for line, value in zip(lines, success):
        print(f"{json.loads(line)['task_id']}\t{value:.2f}")
    if len(kept) < args.keep:
        raise SystemExit(f"only {len(kept)} of the first {len(lines)} tasks lie in the band {low}-{high}")
    Path(args.out).write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    print(f"wrote {len(kept)} tasks to {args.out}: " + ", ".join(json.loads(line)["task_id"] for line in kept))


if __name__ == "__main__":
    main()
