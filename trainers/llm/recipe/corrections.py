"""Expert corrections of a local model's own episodes, as SFT data (``llm-corrections``: DAgger).

The model plays fresh augmented tasks (:mod:`trainers.llm.recipe.corpus`, drawn from the train
templates with ``seed``) in text mode, sampled at ``temperature``, every episode through
:class:`~agentgym_envs.wrappers.ExpertCorrections`: from the model's first slip on, each state
it reaches is written with the scripted expert's next call as the assistant turn to learn.
SFT on them (``llm-sft``, mixed with expert episodes so that the rest is kept) teaches what
the expert's episodes never show: how to go on after one's own mistake.

    agentgym llm-corrections --model models/agentgym-tiny --env customer_support --tasks 2000 --out corrections.jsonl
    python -m trainers.llm.recipe.corrections --model models/agentgym-tiny --env math --tasks 2000 --out corrections.jsonl
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_envs import resolve_env_id
from agentgym_envs.wrappers.corrections import ExpertCorrections

from ...run import canonical_env_id, resolve_device
from .corpus import TASKS, Augment, write_tasks


@dataclass
class Config:
    """Every setting of a corrections run."""

    model: str
    env_id: str
    out: str  # the chat JSONL the corrections are appended to
    tasks: int = 1000  # fresh augmented tasks, each played once
    seed: int = 1  # of the tasks and of the sampling (the model's own corpus is drawn with its build seed, 0 by default)
    temperature: float = 1.0  # 0: greedy
    max_new_tokens: int = 96
    batch: int = 64  # episodes decoded together
    all_states: bool = False  # label every state, not only those from the first slip on
    device: str = "auto"
    threads: int = 0


def collect(config: Config) -> dict[str, Any]:
    """Play ``config.tasks`` tasks and append their corrections to ``config.out``; return the
    episodes' summary (:func:`~trainers.llm.rollout.summarize`) plus ``records`` written,
    ``labelled_episodes`` (how many have at least one record) and ``seconds``."""
    env_id = canonical_env_id(config.env_id)
    if env_id not in TASKS:
        raise ValueError(f"no augmented tasks for {env_id}; choose from {sorted(TASKS)}")
    import torch  # torch and transformers load only when a model plays

    from ... import checkpoints
    from .. import runtime
    from ..chat import ChatFormat
    from ..rollout import Sampling, play, summarize

    started = time.time()
    checkpoints.seed_everything(config.seed, config.threads)
    device = torch.device(resolve_device(config.device))
    network, tokenizer = runtime.load(config.model, device)
    network.eval()
    out = Path(config.out)
    tasks = TASKS[env_id](config.tasks, config.seed, Augment())
    task_file = write_tasks(out.with_name(f"{out.stem}_tasks.jsonl"), tasks)
    envs = [ExpertCorrections(gym.make(env_id, action_mode="text", task_file=str(task_file)), out, config.all_states)
            for _ in range(min(config.batch, config.tasks))]
    resets = [{"seed": config.seed + k, "options": {"task_id": task["task_id"]}} for k, task in enumerate(tasks)]
    trajectories, _ = play(network, ChatFormat(tokenizer), envs, resets,
                           Sampling(config.temperature, config.max_new_tokens), device, runtime.window(network, tokenizer))
    for env in envs:
        env.close()
    summary = summarize(trajectories)
    summary["records"] = float(sum(env.records for env in envs))
    summary["labelled_episodes"] = float(sum(env.labelled_episodes for env in envs))
    summary["seconds"] = time.time() - started
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run_from_args(parser.parse_args())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="a local model directory or a Hugging Face hub id")
    parser.add_argument("--env", required=True, help="customer_support or math (names as agentgym list shows them)")
    parser.add_argument("--out", required=True, help="chat JSONL file the corrections are appended to")
    parser.add_argument("--tasks", type=int, default=Config.tasks, help="fresh augmented tasks, each played once")
    parser.add_argument("--seed", type=int, default=Config.seed, help="of the tasks and the sampling (a build's corpus "
                        "uses the build's seed, 0 by default)")
    parser.add_argument("--temperature", type=float, default=Config.temperature, help="0: greedy")
    parser.add_argument("--max-new-tokens", type=int, default=Config.max_new_tokens, help="per reply")
    parser.add_argument("--batch", type=int, default=Config.batch, help="episodes decoded together")
    parser.add_argument("--all-states", action="store_true", help="label every state, not only those after a slip")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=0)


def run_from_args(args: argparse.Namespace) -> dict[str, Any]:
    config = Config(model=args.model, env_id=resolve_env_id(args.env), out=args.out, tasks=args.tasks, seed=args.seed,
                    temperature=args.temperature, max_new_tokens=args.max_new_tokens, batch=args.batch,
                    all_states=args.all_states, device=args.device, threads=args.threads)
    summary = collect(config)
    print(f"{int(summary['records'])} corrections from {int(summary['labelled_episodes'])} of "
          f"{int(summary['episodes'])} episodes (success {summary['success']:.2f}) -> {config.out} "
          f"({summary['seconds']:.0f} s)")
    return summary


if __name__ == "__main__":
    main()
