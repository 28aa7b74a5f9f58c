"""What makes CustomerSupport-v0's test split hard for a local chat model: its unseen values
(names, addresses, ids, plans, months) or its unseen phrasings. Plays greedy episodes of four
sets of tickets, each split's values worded by each split's phrasings (the generator's tickets
``0 .. tickets - 1``, crossed with ``generate_ticket(split, index, wording=...)``), and tabulates
success per ticket kind. Train values in test words against test values in train words says
which of the two the model fails on. Writes ``benchmarks/results/llm_phrasing_gap.md``.

    python benchmarks/llm_phrasing_gap.py --model models/agentgym-tiny --tickets 100
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark scripts

from llm_failures import RESULTS  # noqa: E402
from llm_task_difficulty import task_file_success  # noqa: E402

from agentgym_envs.scenarios.customer_support import generate_ticket  # noqa: E402
from trainers.checkpoints import seed_everything  # noqa: E402
from trainers.lifecycle import resolve_device  # noqa: E402

ENV_ID = "AgentGym/CustomerSupport-v0"
SPLITS = ("train", "test")
CROSSINGS = tuple((values, wording) for values in SPLITS for wording in SPLITS)  # (values, wording)


def crossed_tickets(values: str, wording: str, tickets: int) -> list[str]:
    """Task-file lines of the tickets ``0 .. tickets - 1`` of split ``values`` worded by the
    phrasings of split ``wording``, with ids that say both."""
    lines = []
    for index in range(tickets):
        ticket = generate_ticket(values, index, wording=wording).to_dict()
        lines.append(json.dumps({**ticket, "task_id": f"{values}-values-{wording}-words-{index}"}))
    return lines


def kind_table(kinds: dict[str, list[str]], success: dict[tuple[str, str], np.ndarray]) -> list[str]:
    """Markdown rows: greedy success per ticket kind (and over all tickets), with the count of
    tickets, for each crossing ``(values, wording)``; ``kinds[split][i]`` is the kind of ticket
    ``i`` of that split's values."""
    rows = sorted({kind for split_kinds in kinds.values() for kind in split_kinds})
    header = " | ".join(f"{values} values, {wording} words" for values, wording in success)
    lines = [f"| ticket kind | {header} |", "|-|" + "-|" * len(success)]
    for kind in [*rows, "all"]:
        cells = []
        for (values, _), solved in success.items():
            members = [i for i, k in enumerate(kinds[values]) if kind == "all" or k == kind]
            cells.append(f"{float(np.mean(solved[members])):.2f} ({len(members)})" if members else "")
        lines.append(f"| {'**all**' if kind == 'all' else kind} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> dict[tuple[str, str], np.ndarray]:
    """Run the four crossings, write the page; returns each crossing's greedy success per ticket."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--tickets", type=int, default=100, help="tickets per crossing")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--out", type=Path, default=RESULTS / "llm_phrasing_gap.md")
    args = parser.parse_args(argv)
    seed_everything(0, args.threads)
    device = torch.device(resolve_device(args.device))
    started = time.time()
    success = {(values, wording): task_file_success(args.model, ENV_ID, crossed_tickets(values, wording, args.tickets),
                                                    1, 0.0, device)
               for values, wording in CROSSINGS}
    kinds = {split: [generate_ticket(split, index).kind for index in range(args.tickets)] for split in SPLITS}
    command = "python benchmarks/llm_phrasing_gap.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    page = [f"# Unseen values or unseen phrasings: `{args.model}` on {ENV_ID}", "",
            f"Command: `{command}`", "",
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, device {device}, "
            f"{time.time() - started:.0f} s. Greedy success of the generator's tickets 0..{args.tickets - 1} of each "
            "split's values, worded by each split's phrasings (train values in train words are the train split's "
            "tickets, test values in test words the test split's); in brackets, the tickets of each kind.", "",
            *kind_table(kinds, success), ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(page), encoding="utf-8")
    print("\n".join(page))
    return success


if __name__ == "__main__":
    main()
