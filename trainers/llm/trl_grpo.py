"""Train a language model with TRL's ``GRPOTrainer`` on an agentgym environment.

The env plugs in through TRL's environment mode (:mod:`agentgym_envs.external_trainers.trl_env`): the env's tools
are the environment's methods, the env's return is the reward, and each dataset row is a task
of the env's train split. Generation is TRL's own (plain ``transformers`` ``generate``, CPU or
CUDA; no vLLM needed).

    python -m trainers.llm.trl_grpo --model models/agentgym-tiny --env math --max-steps 50 --output-dir runs/trl-math
    python -m trainers.llm.trl_grpo --model Qwen/Qwen2.5-0.5B-Instruct --env customer_support --max-steps 200 \\
        --output-dir runs/trl-support --learning-rate 1e-6

``<output-dir>`` receives TensorBoard events (``runs/``), TRL's checkpoints and the final model
and tokenizer (``save_pretrained``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ..run import canonical_env_id
from .model import CHAT_TEMPLATE, RESPONSE_TEMPLATE


@dataclass
class Config:
    """Every setting of a TRL GRPO run on an agentgym env."""

    model: str = "models/agentgym-tiny"  # a local path or a Hugging Face hub id
    env: str = "math"  # an agentgym name or env id
    output_dir: str = "runs/trl-grpo"
    max_steps: int = 50  # optimizer steps
    seed: int = 0
    tasks: int = 256  # dataset rows: train-split tasks seeded seed, seed + 1, ...
    tasks_per_step: int = 2  # tasks in one optimizer step
    num_generations: int = 4  # rollouts per task (the GRPO group)
    max_completion_length: int = 512  # tokens of a whole rollout: replies and tool results
    temperature: float = 1.0
    learning_rate: float = 1e-5
    beta: float = 0.0  # KL coefficient to the starting model
    logging_steps: int = 1
    save_steps: int = 500
    device: str = "auto"  # auto, cpu or cuda
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # gym.make arguments (reward_config, max_turns, ...)


def grpo_config(config: Config, max_turns: int | None) -> Any:
    """TRL's ``GRPOConfig`` for ``config``: TensorBoard logging, bf16 on CUDA, at most
    ``max_turns`` tool calls per rollout (the env's own limit)."""
    import torch
    from trl import GRPOConfig

    cuda = config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available())
    return GRPOConfig(
        output_dir=config.output_dir, max_steps=config.max_steps, seed=config.seed,
        per_device_train_batch_size=config.tasks_per_step * config.num_generations,
        num_generations=config.num_generations, max_completion_length=config.max_completion_length,
        temperature=config.temperature, learning_rate=config.learning_rate, beta=config.beta,
        max_tool_calling_iterations=max_turns, logging_steps=config.logging_steps, save_steps=config.save_steps,
        report_to=["tensorboard"], use_cpu=not cuda, bf16=cuda,
    )


def ensure_response_template(tokenizer: Any) -> Any:
    """Give a tokenizer of the project's chat template its response template, so that TRL can
    parse its tool calls (models built before it was saved with them lack it); other
    tokenizers are left to TRL, which knows the common templates."""
    if getattr(tokenizer, "response_template", None) is None and tokenizer.chat_template == CHAT_TEMPLATE:
        tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer


def train(config: Config) -> dict[str, Any]:
    """Run GRPO with TRL on ``config.env``, save the model to ``config.output_dir`` and return
    the trainer's last logged metrics with ``train_seconds``."""
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from agentgym_envs.external_trainers.trl_env import env_return, environment_class, task_dataset

    environment = environment_class(config.env, **config.env_kwargs)
    probe = environment()
    max_turns = getattr(probe.env.unwrapped, "max_turns", None)
    probe.env.close()
    tokenizer = ensure_response_template(AutoTokenizer.from_pretrained(config.model))
    trainer = GRPOTrainer(
        model=config.model, reward_funcs=env_return, processing_class=tokenizer,
        train_dataset=task_dataset(config.env, config.tasks, config.seed, **config.env_kwargs),
        environment_factory=environment, args=grpo_config(config, max_turns),
    )
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    trainer.save_model(config.output_dir)
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    return {**(logged[-1] if logged else {}), "train_seconds": seconds}


def parse_args(argv: Sequence[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = Config()
    for item in fields(Config):
        flag = "--" + item.name.replace("_", "-")
        if item.name == "env_kwargs":
            parser.add_argument(flag, type=json.loads, default={}, help="gym.make arguments as JSON, e.g. "
                                '\'{"reward_config": {"mode": "outcome"}}\'')
        else:
            parser.add_argument(flag, type=type(getattr(defaults, item.name)), default=getattr(defaults, item.name))
    config = Config(**vars(parser.parse_args(argv)))
    try:
        canonical_env_id(config.env)
    except ValueError as exc:
        parser.error(str(exc))
    return config


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(argv)
    result = train(config)
    print(f"trained {config.model} on {config.env} for {config.max_steps} steps in {result['train_seconds']:.1f} s; "
          f"last reward {result.get('reward', float('nan')):.3f}; model and TensorBoard events in {config.output_dir}")


if __name__ == "__main__":
    main()
