"""The project's chat model, SFT then GRPO, in text mode: success, tool reliability and
parse-error rate on both splits before and after GRPO, and tokens per second of rollouts and
updates.

    agentgym llm-build-model --out models/agentgym-tiny          # SFT warm start (the "before")
    python benchmarks/llm_grpo.py --model models/agentgym-tiny --env math --seeds 0 1 2

"Before" is the SFT model under greedy decoding on the evaluation episodes (seeded
``EVAL_SEED, EVAL_SEED + 1, ...`` as every benchmark): one evaluation serves all seeds, since
greedy decoding from the same weights on the same episodes is the same. "After" is each
seed's GRPO run (``trainers.llm.grpo``), evaluated the same way. Goals: in every seed, GRPO
raises test success by >= 0.10 over its SFT start or reaches >= 0.95, and its train success is
not below the start by more than one standard error of the start's estimate. Any field of
``grpo.Config`` can be set with ``--set name=value`` (a JSON value: ``--set dynamic_sampling=true``).
Writes ``<out>/llm_grpo_<Env>.csv`` and ``.md`` (with this command line), and each seed's
learning curve (per update: return, success and parse errors of the sampled episodes) to
``<out>/llm_grpo_<Env>_curves.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import platform
import shlex
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch

from agentgym_envs import resolve_env_id
from trainers.checkpoints import seed_everything
from trainers.llm import grpo, runtime
from trainers.llm.chat import ChatFormat
from trainers.llm.rollout import evaluate_model
from trainers.run import EVAL_SEED, resolve_device

COLUMNS = ("success", "tool_reliability", "parse_error_rate", "response_length", "context_overflow")


def tensorboard_scalars(run_dir: str) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of a run's TensorBoard events: ``{tag: [(step, value), ...]}``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(run_dir)
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def mean_of(scalars: dict[str, list[tuple[int, float]]], tag: str) -> float:
    """The mean of one logged scalar (NaN when never logged)."""
    return float(np.mean([value for _, value in scalars[tag]])) if tag in scalars else float("nan")


def rows_for(stage: str, seed: int | str, metrics: dict[str, dict[str, float]], extra: dict[str, float]) -> list[dict]:
    return [{"stage": stage, "seed": seed, "split": split, **{c: metrics[split].get(c, float("nan")) for c in COLUMNS},
             "generated_tokens_per_s": metrics[split]["generated_tokens_per_s"], **extra} for split in ("train", "test")]


CURVE_TAGS = {"charts/episodic_return": "train_return", "metrics/success": "train_success",
              "llm/parse_error_rate": "parse_error_rate", "charts/learning_groups": "learning_groups"}


def grpo_seed(args: argparse.Namespace, seed: int) -> tuple[list[dict], list[dict]]:
    """One seed's GRPO run from the SFT model, evaluated on both splits: its two rows, and its
    learning curve (one row per update: the sampled episodes' return, success, parse errors)."""
    env_id = resolve_env_id(args.env)
    run_dir = Path(args.runs_dir or Path(args.out) / "runs") / "llm_grpo" / f"{env_id.split('/')[1]}__seed{seed}"
    reward = {"mode": args.reward_mode} if args.reward_mode == "outcome" else None
    settings = dict(model=args.model, env_id=env_id, seed=seed, total_steps=args.total_steps, device=args.device,
                    run_dir=str(run_dir), group_size=args.group_size, tasks_per_update=args.tasks_per_update,
                    learning_rate=args.learning_rate, kl_coef=args.kl_coef, training_reward=reward,
                    eval_episodes=args.eval_episodes, checkpoint_every=1_000, threads=args.threads)
    result = grpo.train_and_evaluate(grpo.Config(**{**settings, **dict(args.set)}), resume=args.resume)  # --set wins
    scalars = tensorboard_scalars(str(run_dir))
    speed = {"env_steps": result["env_steps"], "wall_time_s": result["wall_time_s"],
             "rollout_tokens_per_s": mean_of(scalars, "llm/rollout_tokens_per_s"),
             "update_tokens_per_s": mean_of(scalars, "llm/update_tokens_per_s")}
    steps = [step for step, _ in scalars.get("charts/episodic_return", [])]
    curve = [{"seed": seed, "env_steps": step,
              **{name: dict(scalars.get(tag, [])).get(step, float("nan")) for tag, name in CURVE_TAGS.items()}}
             for step in steps]
    return rows_for("grpo", seed, {"train": result["train_metrics"], "test": result["test_metrics"]}, speed), curve


def setting(text: str) -> tuple[str, object]:
    """``name=value`` -> ``(name, value)``, the value read as JSON (a bare word as a string)."""
    name, _, value = text.partition("=")
    if name not in grpo.Config.__dataclass_fields__:
        raise argparse.ArgumentTypeError(f"{name!r} is no grpo.Config field")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--env", default="math")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--total-steps", type=int, default=200, help="GRPO env steps per seed")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--tasks-per-update", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=grpo.Config.learning_rate)
    parser.add_argument("--kl-coef", type=float, default=grpo.Config.kl_coef)
    parser.add_argument("--reward-mode", choices=("env", "outcome"), default="env",
                        help="GRPO's return: the env's own reward, or the outcome score alone (0..1 at the end)")
    parser.add_argument("--set", action="append", type=setting, default=[], metavar="NAME=VALUE",
                        help="any grpo.Config field, a JSON value (repeatable; over the options above)")
    parser.add_argument("--eval-episodes", type=int, default=400,
                        help="greedy episodes per split before and after GRPO (400: one standard error about "
                             "0.025 at success 0.5; two sets of 100 test tickets put one model 0.1 apart)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds trained at once, each in its own process (the SFT evaluation runs beside them)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--runs-dir", default=None, help="where the GRPO runs go (default: <out>/runs)")
    parser.add_argument("--resume", action="store_true",
                        help="continue each seed's run from its checkpoint in --runs-dir up to --total-steps")
    args = parser.parse_args()
    env_id = resolve_env_id(args.env)
    name = env_id.split("/")[1]
    out = Path(args.out)
    device = torch.device(resolve_device(args.device))
    pool = ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) if args.jobs > 1 else None
    pending = [pool.submit(grpo_seed, args, seed) for seed in args.seeds] if pool else []
    seed_everything(0, args.threads)

    network, tokenizer = runtime.load_for_training(args.model, device)
    fmt = ChatFormat(tokenizer)
    window = runtime.window(network, tokenizer)
    before = {split: evaluate_model(network, fmt, env_id, split, args.eval_episodes, device, window, EVAL_SEED)
              for split in ("train", "test")}
    rows, curves = rows_for("sft", "all", before, {}), []
    write(out, name, rows, args)  # after every stage, so that a stopped run keeps what it measured
    print(rows)
    for index, seed in enumerate(args.seeds):
        seed_rows, curve = pending[index].result() if pool else grpo_seed(args, seed)
        rows += seed_rows
        curves += curve
        write(out, name, rows, args)
        write_csv(out / f"llm_grpo_{name}_curves.csv", curves)
        plot_curves(out / f"llm_grpo_{name}_curves.png", name, curves)
        print(seed_rows)
    if pool:
        pool.shutdown()


def write_csv(path: Path, rows: list[dict]) -> list[str]:
    """Write ``rows`` (their keys in first-seen order) to ``path``; return the keys."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    return keys


def write(out: Path, name: str, rows: list[dict], args: argparse.Namespace) -> None:
    """``llm_grpo_<name>.csv`` and a markdown table with the goals checked."""
    out.mkdir(parents=True, exist_ok=True)
    keys = write_csv(out / f"llm_grpo_{name}.csv", rows)
    def fmt(v):
        return f"{v:.3f}" if isinstance(v, float) else str(v)
    lines = [f"# LLM SFT -> GRPO on {name} (text mode)", "",
             f"`python benchmarks/llm_grpo.py {shlex.join(sys.argv[1:])}` on {platform.machine()} "
             f"({platform.processor() or 'cpu'}), device {args.device}", "",
             "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(row.get(k, "")) for k in keys) + " |" for row in rows]
    lines += ["", *goal_lines(rows, args.eval_episodes)]
    (out / f"llm_grpo_{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def goal_lines(rows: list[dict], episodes: int) -> list[str]:
    """The goals, checked per seed: test gain >= 0.10 or test success >= 0.95; train success
    not below the SFT start by more than one standard error (``sqrt(p (1 - p) / episodes)``)."""
    start = {r["split"]: r["success"] for r in rows if r["stage"] == "sft"}
    after = [r for r in rows if r["stage"] == "grpo"]
    test = [r["success"] for r in after if r["split"] == "test"]
    train = [r["success"] for r in after if r["split"] == "train"]
    if not test:
        return ["- goals: not measured yet"]
    error = (start["train"] * (1 - start["train"]) / episodes) ** 0.5
    gains = ", ".join(f"{s - start['test']:+.3f}" for s in test)
    improves = all(s - start["test"] >= 0.10 or s >= 0.95 for s in test)
    keeps = all(s >= start["train"] - error for s in train)
    return [f"- test success +0.10 over SFT or >= 0.95 in every seed: {'yes' if improves else 'no'} "
            f"(SFT {start['test']:.3f}; GRPO {', '.join(f'{s:.3f}' for s in test)}; gains {gains})",
            f"- train success never below the SFT start by more than one standard error ({error:.3f}): "
            f"{'yes' if keeps else 'no'} (SFT {start['train']:.3f}; GRPO {', '.join(f'{s:.3f}' for s in train)})"]


def plot_curves(path: Path, name: str, curves: list[dict]) -> None:
    """Success and return of the sampled training episodes against env steps, one line per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for seed in sorted({row["seed"] for row in curves}):
        points = [row for row in curves if row["seed"] == seed]
        steps = [row["env_steps"] for row in points]
        axes[0].plot(steps, [row["train_success"] for row in points], label=f"seed {seed}")
        axes[1].plot(steps, [row["train_return"] for row in points], label=f"seed {seed}")
    for axis, label in zip(axes, ("success (sampled train episodes)", "return (training reward)")):
        axis.set_xlabel("env steps")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[0].legend()
    figure.suptitle(f"llm-grpo on {name}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


if __name__ == "__main__":
    main()
