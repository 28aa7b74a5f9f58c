"""Tokens per second of a chat model on one device, in the shapes the LLM trainers use,
fixed so that a CPU and a GPU run the same work and their figures compare:

- update: ``llm-sft`` optimizer steps (the loss on assistant tokens, bf16 autocast on CUDA)
  on ``--batch`` expert conversations; tokens/s counts every token of the batch, as
  ``llm/update_tokens_per_s`` does;
- generation: ``--batch`` prompts (the openings of those conversations) each sampling exactly
  ``--new-tokens`` tokens (the end of turn does not stop them) at temperature 1, batched;
- rollout: ``--batch`` Math-v0 episodes of ``--turns`` turns in text mode played together
  (``trainers.llm.rollout.play``, as ``llm-grpo`` plays them), replies of at most
  ``--new-tokens`` tokens at temperature 1, each task played by ``--group-size`` episodes (a
  GRPO group; 1: every episode its own task); tokens/s counts sampled tokens per second of
  decoding (env steps excluded), as ``llm/rollout_tokens_per_s`` does.

Generation and rollout run on both rollout engines (``agentgym_envs.inference.engine``): ``generate``
(``transformers``' ``generate``, the path before the engine) and ``cached`` (the project's
engine), interleaved round by round so that both see the same machine load; the load
average before the run is recorded with the row.

    agentgym llm-build-model --out models/agentgym-small --size small --device cuda
    python benchmarks/llm_speed.py --model models/agentgym-small --device cuda
    python benchmarks/llm_speed.py --model models/agentgym-small --device cpu

Weights do not change the work, so an untrained model of the same size (``<model>/base``)
measures the same. Appends a row to ``<out>/llm_speed.csv`` and rewrites ``llm_speed.md``
with every row and, per model size, the speed-up of each device over the CPU, keeping the
notes below its ``## Notes`` heading.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import torch

import agentgym_envs  # noqa: E402,F401  (registers the env ids)
from agentgym_envs.inference.engine import CachedEngine, Sampling, complete, left_padded
from trainers.checkpoints import seed_everything
from trainers.llm import runtime, sft
from trainers.llm.chat import ChatFormat
from trainers.llm.model import read_trajectories, record_expert_trajectories
from trainers.llm.rollout import play
from trainers.run import resolve_device

ENGINES = ("generate", "cached")
NOTES = "## Notes"  # llm_speed.md keeps what follows this heading when the script rewrites it
FIELDS = ("model", "parameters", "device", "device_name", "threads", "load", "batch", "new_tokens", "group_size",
          "update_tokens_per_s", "generation_tokens_per_s", "engine_generation_tokens_per_s",
          "rollout_tokens_per_s", "engine_rollout_tokens_per_s", "command")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def update_speed(network, fmt: ChatFormat, records: list[dict], device: torch.device, steps: int) -> float:
    """Tokens per second of SFT optimizer steps on one batch of ``records`` (after one warm-up step)."""
    window = runtime.window(network, fmt.tokenizer)
    rows = [sft.encode(fmt, record, window)[:2] for record in records]
    batch = sft.collate(rows, fmt.tokenizer.pad_token_id, device)
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-5)
    network.train()
    seconds = 0.0
    for step in range(steps + 1):
        synchronize(device)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with runtime.autocast(device):
            loss, count = sft.assistant_loss(network, batch)
        (loss / count).backward()
        optimizer.step()
        synchronize(device)
        seconds += (time.perf_counter() - start) if step else 0.0
    return steps * int(batch["attention_mask"].sum()) / seconds


def generation_speed(network, fmt: ChatFormat, records: list[dict], device: torch.device, new_tokens: int,
                     rounds: int) -> dict[str, float]:
    """Sampled tokens per second of batched generation from the conversations' openings, per
    engine (rounds interleaved, after one warm-up round of each)."""
    from transformers import GenerationConfig

    prompts = [fmt.encode(fmt.prompt(record["messages"][:2], record.get("tools"))) for record in records]
    pad = fmt.tokenizer.pad_token_id
    ids, attention = left_padded(prompts, pad)
    config = GenerationConfig(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=True, temperature=1.0,
                              top_k=0, top_p=1.0, pad_token_id=pad, eos_token_id=fmt.end_of_turn_id)
    engine = CachedEngine(network, device)

    def run(name: str) -> None:
        if name == "generate":
            network.generate(input_ids=ids.to(device), attention_mask=attention.to(device), generation_config=config)
        else:
            complete(engine, prompts, Sampling(1.0, new_tokens), stop_ids=set())

    network.eval()
    seconds = dict.fromkeys(ENGINES, 0.0)
    with torch.no_grad():
        for round_ in range(rounds + 1):
            for name in ENGINES if round_ % 2 else ENGINES[::-1]:
                synchronize(device)
                start = time.perf_counter()
                run(name)
                synchronize(device)
                seconds[name] += (time.perf_counter() - start) if round_ else 0.0
    return {name: rounds * len(prompts) * new_tokens / seconds[name] for name in ENGINES}


def rollout_speed(network, fmt: ChatFormat, batch: int, turns: int, device: torch.device, new_tokens: int,
                  rounds: int, group_size: int) -> dict[str, float]:
    """Sampled tokens per second of decoding while playing ``batch`` Math-v0 episodes of
    ``turns`` turns together, ``group_size`` per task, per engine (rounds interleaved; tasks
    differ per round)."""
    envs = [gym.make("AgentGym/Math-v0", action_mode="text", max_turns=turns) for _ in range(batch)]
    window = runtime.window(network, fmt.tokenizer)
    totals = {name: [0.0, 0.0] for name in ENGINES}
    network.eval()
    for round_ in range(rounds):
        resets = [{"seed": round_ * batch + k // group_size} for k in range(batch)]
        for name in ENGINES if round_ % 2 else ENGINES[::-1]:
            _, speed = play(network, fmt, envs, resets, Sampling(1.0, new_tokens), device, window, engine=name)
            totals[name][0] += speed["generated_tokens"]
            totals[name][1] += speed["seconds"]
    for env in envs:
        env.close()
    return {name: tokens / seconds for name, (tokens, seconds) in totals.items()}


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{platform.machine()} CPU, {torch.get_num_threads()} threads"


def write(out: Path, row: dict) -> None:
    """Append ``row`` to ``llm_speed.csv`` and rewrite ``llm_speed.md`` from every row."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "llm_speed.csv"
    rows = [{f: r.get(f) or "" for f in FIELDS} for r in csv.DictReader(path.open(encoding="utf-8"))] \
        if path.exists() else []
    rows.append({k: str(v) for k, v in row.items()})
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    shown = [f for f in FIELDS if f != "command"]
    lines = ["# LLM tokens per second by device", "",
             "Command: `python benchmarks/llm_speed.py --model M --device D` appends a row (each row's full command is in "
             "`llm_speed.csv`). `generation` and "
             "`rollout` are the `generate` engine (`transformers`' `generate`), `engine_*` the project's `cached` "
             "engine, measured in the same run, interleaved; `load` is the machine's 1-minute load average before "
             "the run (a shared machine).", "",
             "| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    lines += ["| " + " | ".join(r[f] for f in shown) + " |" for r in rows]
    lines += ["", "## Speed-up over the CPU (latest row of each device, same model size and batch)", ""]
    for size in dict.fromkeys(r["parameters"] for r in rows):
        latest = {r["device"]: r for r in rows if r["parameters"] == size}
        cpu = latest.get("cpu")
        for name, r in latest.items():
            if cpu is not None and name != "cpu" and r["batch"] == cpu["batch"]:
                ratios = [float(r[k]) / float(cpu[k]) for k in ("update_tokens_per_s", "generation_tokens_per_s")]
                lines.append(f"- {size} parameters, {r['device_name']} / {cpu['device_name']}: "
                             f"update x{ratios[0]:.1f}, generation x{ratios[1]:.1f}")
    lines += ["", "## Speed-up of the cached engine over `generate` (same row: same run, machine and load)", ""]
    for r in rows:
        if r["engine_generation_tokens_per_s"]:
            ratios = [float(r[f"engine_{k}"]) / float(r[k]) for k in ("generation_tokens_per_s", "rollout_tokens_per_s")]
            groups = f" in groups of {r['group_size']}" if r["group_size"] not in ("", "1") else ""
            lines.append(f"- {r['model']} ({r['parameters']} parameters), {r['device_name']}, batch {r['batch']}, "
                         f"load {r['load']}: generation x{ratios[0]:.1f}, rollout{groups} x{ratios[1]:.1f}")
    path = out / "llm_speed.md"
    earlier = path.read_text(encoding="utf-8") if path.exists() else ""
    notes = earlier[earlier.index(NOTES):] if NOTES in earlier else ""  # written by hand below the tables
    path.write_text("\n".join(lines) + "\n" + ("\n" + notes if notes else ""), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a local model directory or a Hugging Face hub id")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, default=16, help="conversations per update and prompts per generation")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=5, help="timed update steps and generation rounds")
    parser.add_argument("--turns", type=int, default=4, help="turns per rollout episode")
    parser.add_argument("--group-size", type=int, default=1, help="rollout episodes per task (a GRPO group)")
    parser.add_argument("--rollout-rounds", type=int, default=2, help="timed rollout rounds per engine")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    device = torch.device(resolve_device(args.device))
    seed_everything(0, args.threads)
    network, tokenizer = runtime.load_for_training(args.model, device)
    fmt = ChatFormat(tokenizer)
    with tempfile.TemporaryDirectory() as tmp:
        per_env = (args.batch + 1) // 2
        records = read_trajectories(record_expert_trajectories(Path(tmp) / "expert.jsonl", episodes=per_env))
    records = records[: args.batch]
    load = os.getloadavg()[0]
    generation = generation_speed(network, fmt, records, device, args.new_tokens, args.steps)
    rollout = rollout_speed(network, fmt, args.batch, args.turns, device, args.new_tokens, args.rollout_rounds,
                            args.group_size)
    row = {"model": Path(args.model).name, "parameters": sum(p.numel() for p in network.parameters()),
           "device": device.type, "device_name": device_name(device), "threads": torch.get_num_threads(),
           "load": f"{load:.1f}", "batch": args.batch, "new_tokens": args.new_tokens, "group_size": args.group_size,
           "update_tokens_per_s": round(update_speed(network, fmt, records, device, args.steps)),
           "generation_tokens_per_s": round(generation["generate"]),
           "engine_generation_tokens_per_s": round(generation["cached"]),
           "rollout_tokens_per_s": round(rollout["generate"]), "engine_rollout_tokens_per_s": round(rollout["cached"]),
           "command": "python benchmarks/llm_speed.py " + shlex.join(sys.argv[1:])}
    print(row)
    write(Path(args.out), row)


if __name__ == "__main__":
    main()
