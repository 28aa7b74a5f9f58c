"""Tokens per second of a chat model on one device, in the two shapes the LLM trainers use,
fixed so that a CPU and a GPU run the same work and their figures compare:

- update: ``llm-sft`` optimizer steps (the loss on assistant tokens, bf16 autocast on CUDA)
  on ``--batch`` expert conversations; tokens/s counts every token of the batch, as
  ``llm/update_tokens_per_s`` does;
- generation: ``--batch`` prompts (the openings of those conversations) each sampling exactly
  ``--new-tokens`` tokens (the end of turn does not stop them) at temperature 1, batched.

    agentgym llm-build-model --out models/agentgym-small --size small --device cuda
    python benchmarks/llm_speed.py --model models/agentgym-small --device cuda
    python benchmarks/llm_speed.py --model models/agentgym-small --device cpu

Weights do not change the work, so an untrained model of the same size (``<model>/base``)
measures the same. Appends a row to ``<out>/llm_speed.csv`` and rewrites ``llm_speed.md``
with every row and, per model size, the speed-up of each device over the CPU.
"""

from __future__ import annotations

import argparse
import csv
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from trainers.checkpoints import seed_everything  # noqa: E402
from trainers.lifecycle import resolve_device  # noqa: E402
from trainers.llm import runtime, sft  # noqa: E402
from trainers.llm.chat import ChatFormat  # noqa: E402
from trainers.llm.model import read_trajectories, record_expert_trajectories  # noqa: E402
from trainers.llm.rollout import left_padded  # noqa: E402

FIELDS = ("model", "parameters", "device", "device_name", "threads", "batch", "new_tokens",
          "update_tokens_per_s", "generation_tokens_per_s", "command")


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
                     rounds: int) -> float:
    """Sampled tokens per second of batched generation from the conversations' openings."""
    from transformers import GenerationConfig

    prompts = [fmt.encode(fmt.prompt(record["messages"][:2], record.get("tools"))) for record in records]
    pad = fmt.tokenizer.pad_token_id
    ids, attention = left_padded(prompts, pad)
    config = GenerationConfig(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=True, temperature=1.0,
                              top_k=0, top_p=1.0, pad_token_id=pad, eos_token_id=fmt.end_of_turn_id)
    network.eval()
    seconds = 0.0
    with torch.no_grad():
        for round_ in range(rounds + 1):
            synchronize(device)
            start = time.perf_counter()
            network.generate(input_ids=ids.to(device), attention_mask=attention.to(device), generation_config=config)
            synchronize(device)
            seconds += (time.perf_counter() - start) if round_ else 0.0
    return rounds * len(prompts) * new_tokens / seconds


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{platform.machine()} CPU, {torch.get_num_threads()} threads"


def write(out: Path, row: dict) -> None:
    """Append ``row`` to ``llm_speed.csv`` and rewrite ``llm_speed.md`` from every row."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "llm_speed.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8"))) if path.exists() else []
    rows.append({k: str(v) for k, v in row.items()})
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    shown = [f for f in FIELDS if f != "command"]
    lines = ["# LLM tokens per second by device", "",
             "Rows from `benchmarks/llm_speed.py` (each row's command is in `llm_speed.csv`).", "",
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
    (out / "llm_speed.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a local model directory or a Hugging Face hub id")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, default=16, help="conversations per update and prompts per generation")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=5, help="timed update steps and generation rounds")
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
    row = {"model": Path(args.model).name, "parameters": sum(p.numel() for p in network.parameters()),
           "device": device.type, "device_name": device_name(device), "threads": torch.get_num_threads(),
           "batch": args.batch, "new_tokens": args.new_tokens,
           "update_tokens_per_s": round(update_speed(network, fmt, records, device, args.steps)),
           "generation_tokens_per_s": round(generation_speed(network, fmt, records, device, args.new_tokens, args.steps)),
           "command": "python benchmarks/llm_speed.py " + shlex.join(sys.argv[1:])}
    print(row)
    write(Path(args.out), row)


if __name__ == "__main__":
    main()
