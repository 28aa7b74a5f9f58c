"""One-off analyses of a local chat model (the project's ``tiny`` model), one subcommand each.
Their conclusions are short paragraphs of the result pages they explain
(``benchmarks/results/llm_grpo.md``, ``llm_model.md``, ``llm_speed.md``); each writes its page to
``--out`` (by default under ``runs/analysis/``, outside the repository's results).

    python benchmarks/llm_analysis.py failures --model models/agentgym-tiny --envs CustomerSupport-v0 Math-v0 --splits test train
    python benchmarks/llm_analysis.py coverage --model models/agentgym-tiny --envs Math-v0 CustomerSupport-v0 --splits test train
    python benchmarks/llm_analysis.py phrasing-gap --model models/agentgym-tiny --tickets 100
    python benchmarks/llm_analysis.py task-difficulty --model models/agentgym-tiny --env math --task-file FILE --out band.jsonl
    python benchmarks/llm_analysis.py matmul --threads 2

``python benchmarks/llm_analysis.py SUBCOMMAND --help`` says what each measures.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from agentgym_envs import resolve_env_id
from agentgym_envs.evaluation import episode_records
from agentgym_envs.evaluation.hf_agent import TransformersAgent
from agentgym_envs.inference.decoder import Projection
from agentgym_envs.scenarios.customer_support import generate_ticket
from trainers.checkpoints import seed_everything
from trainers.llm import runtime
from trainers.llm.chat import ChatFormat
from trainers.llm.rollout import Sampling, play
from trainers.run import resolve_device

try:
    from benchmarks.processor import cpu_name  # imported from the repository root (tests, ``python -m``)
except ModuleNotFoundError as missing:  # run as ``python benchmarks/llm_analysis.py``: this folder leads sys.path
    if missing.name != "benchmarks":
        raise
    from processor import cpu_name

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "runs" / "analysis"
COMMAND = "python benchmarks/llm_analysis.py {} "


def subparser(name: str, doc: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"llm_analysis.py {name}", description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

FAILURES = """How a local chat model's greedy episodes of a split end, played as ``agentgym eval --policy hf``
plays them (its episode loop): solved, or failed in one of three ways, counted by the kind of
the episode's first offending reply (a reply that ran to the limit and could not be run counts
as the first):

- **a reply that never ended**: it ran to the reply limit (``--max-new-tokens``), which on the
  project's model is a copied value that does not stop (``holdout.examplerlerlerl...``);
- **a reply the env could not run**: not readable as a tool call, or naming no tool;
- **other**: every call ran, but the episode did not solve the task (a wrong value, a missing
  or wrong step, an answer that is off).

Each kind is shown with its first episode's first offending reply (or the env's verdict), and
the episodes solved per task family (Math-v0's problem template, CustomerSupport-v0's ticket
kind): which kinds of task the model has learnt, and which it has not (Math-v0's test split
holds templates whose phrasing or solution shape no train template has).

    python benchmarks/llm_analysis.py failures --model models/agentgym-tiny --envs CustomerSupport-v0 Math-v0 --splits test train
"""

TASK_DIFFICULTY = """How often a chat model solves each task of a task file when it samples, and the tasks in
a band of that success written to a new task file: the tasks GRPO can learn from (a task the
model always or never solves gives every episode of its group the same return, so no
advantage; DAPO filters its prompts the same way).

    python benchmarks/llm_analysis.py task-difficulty --model models/agentgym-tiny --env math \\
        --task-file math_grpo_tasks.jsonl --first 48 --episodes 12 --band 0.2 0.6 --keep 4 --out math_band.jsonl

Plays ``--episodes`` episodes of each of the file's first ``--first`` tasks in text mode at
``--temperature`` (the outcome score as the return), prints each task's sampled success, and
writes the first ``--keep`` tasks whose success lies in ``--band`` (both ends included), as the
task file's own lines, to ``--out``.
"""

COVERAGE = """How much of a split a local chat model can solve when it samples, per task family: greedy
success, the mean success of its sampled episodes (pass@1) and pass@k, the share of tasks that
at least one of k sampled episodes solves.

GRPO raises the likelihood of the model's own successful samples, so pass@k of the start is
the reach of that mechanism on the tasks played: a task no sampled episode solves gives its
group no advantage, and what GRPO on the train split adds to the test split has to come
from transfer alone. LLMs trained with RL on verifiable rewards beat their base models at
pass@1 but not at large k, where the base model's pass@k is as high or higher (Yue et al.,
2025, "Does Reinforcement Learning Really Incentivize Reasoning Capacity in LLMs Beyond the
Base Model?", arXiv:2504.13837). Tasks are those of ``agentgym eval`` and
``failures``: seeded 0.. (``agentgym eval ENV --trials K --temperature T`` gives pass@K
over all tasks for any policy; this script splits it by task family for a local model).

    python benchmarks/llm_analysis.py coverage --model models/agentgym-tiny --envs Math-v0 CustomerSupport-v0 --splits test train
"""

PHRASING_GAP = """What makes CustomerSupport-v0's test split hard for a local chat model: its unseen values
(names, addresses, ids, plans, months) or its unseen phrasings. Plays greedy episodes of four
sets of tickets, each split's values worded by each split's phrasings (the generator's tickets
``0 .. tickets - 1``, crossed with ``generate_ticket(split, index, wording=...)``), and tabulates
success per ticket kind. Train values in test words against test values in train words says
which of the two the model fails on.

    python benchmarks/llm_analysis.py phrasing-gap --model models/agentgym-tiny --tickets 100
"""

MATMUL = """The rollout engine's matrix products on this CPU: torch's ``linear`` (MKL on x86 builds)
against oneDNN on a matrix packed once (``torch.ops.mkldnn``, what the lean decoder uses on a
CPU: ``agentgym_envs/inference/decoder.py``), at the shapes of the project's ``small`` model (hidden 256,
MLP 1024, vocabulary about 3,000) for the rows a decode step (16, 64) and a prefill pass
(1,024) feed. The gap was measured on an AMD CPU; MKL's speed differs between CPUs, so run it on
yours.

    python benchmarks/llm_analysis.py matmul --threads 2
"""


# --- How greedy episodes end -------------------------------------------------------------------

KINDS = ("solved", "a reply that never ended", "a reply the env could not run", "other")


class LimitWatch:
    """``agent``, noting the replies that ran to its token limit, by conversation (its task
    prompt) and turn (the messages before the reply)."""

    def __init__(self, agent: TransformersAgent) -> None:
        self.agent, self.cut = agent, set()
        self.settings = agent.settings  # what the results file records of the policy

    def respond(self, conversations: list[list[dict[str, Any]]], tools: list[dict[str, Any]] | None) -> list[Any]:
        turns = self.agent.respond(conversations, tools)
        self.cut.update(reply_key(messages, len(messages)) for messages, turn in zip(conversations, turns)
                        if turn.usage.get("llm_completion_tokens", 0) >= self.agent.sampling.max_new_tokens)
        return turns


def reply_key(messages: list[dict[str, Any]], position: int) -> tuple[str, int]:
    """The reply at ``messages[position]``: its episode's task prompt and its place."""
    return next(m["content"] for m in messages if m["role"] == "user"), position


def written(message: dict[str, Any]) -> str:
    """What an assistant message wrote: its text, or its tool call."""
    if message.get("tool_calls"):
        function = message["tool_calls"][0]["function"]
        return f'{{"name": "{function["name"]}", "arguments": {function["arguments"]}}}'
    return str(message.get("content"))


def episode_end(record: dict[str, Any], cut: set[tuple[str, int]]) -> tuple[str, str]:
    """``(kind, example)`` of an episode record (with its messages): the kind of its first
    offending reply, else solved or other."""
    if record["outcome"] and record["outcome"]["success"]:
        return KINDS[0], ""
    messages = record["messages"]
    for position, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if reply_key(messages, position) in cut:
            return KINDS[1], written(message)
        answer = messages[position + 1]["content"] if position + 1 < len(messages) else ""
        if not message.get("tool_calls") or answer.startswith("Error: unknown tool"):
            return KINDS[2], f"{written(message)} -> {answer.removeprefix('Error: ')}"
    return KINDS[3], (record["outcome"] or {}).get("reason") or str(record["error"])


def play_greedy(agent: TransformersAgent, env_id: str, split: str, episodes: int, task_file: str | None = None,
                batch: int = 32) -> list[tuple[str, str]]:
    """``(kind, example)`` of the episodes seeded ``0 .. episodes - 1`` (of ``task_file``'s tasks
    where one is given), ``batch`` at a time, played by the evaluation's own loop."""
    watch = LimitWatch(agent)
    files = {} if task_file is None else {"task_file": task_file}
    records = episode_records(env_id, watch, episodes, split, concurrency=batch, keep_messages=True,
                              action_mode="text", **files)
    return [episode_end(record, watch.cut) for record in records]


def task_families(env_id: str, split: str, episodes: int, task_file: str | None = None) -> list[str]:
    """The family of each task seeded ``0 .. episodes - 1``: its ``template`` (Math-v0's
    problems), else its ``kind`` (CustomerSupport-v0's tickets), else ``"-"``."""
    env = gym.make(env_id, split=split, **({} if task_file is None else {"task_file": task_file}))
    families = []
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        task = env.unwrapped.tasks.get(info["task_id"])
        families.append(getattr(task, "template", "") or getattr(task, "kind", "") or "-")
    env.close()
    return families


def family_table(ends_by_source: dict[str, list[tuple[str, str]]],
                 families_by_source: dict[str, list[str]]) -> list[str]:
    """Solved / episodes per task family (rows) and source (columns)."""
    sources = list(ends_by_source)
    rows = sorted({family for families in families_by_source.values() for family in families})
    lines = ["| task family | " + " | ".join(sources) + " |", "|-|" + "-|" * len(sources)]
    for family in rows:
        cells = []
        for source in sources:
            kinds = [kind for (kind, _), f in zip(ends_by_source[source], families_by_source[source]) if f == family]
            cells.append(f"{kinds.count(KINDS[0])} / {len(kinds)}" if kinds else "")
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return lines


def table(ends_by_source: dict[str, list[tuple[str, str]]]) -> list[str]:
    lines = ["| env, tasks | episodes | " + " | ".join(KINDS) + " |", "|-|-|" + "-|" * len(KINDS)]
    for source, ends in ends_by_source.items():
        counts = Counter(kind for kind, _ in ends)
        lines.append(f"| {source} | {len(ends)} | " + " | ".join(str(counts[kind]) for kind in KINDS) + " |")
    return lines


def examples(ends_by_source: dict[str, list[tuple[str, str]]], width: int = 240) -> list[str]:
    lines = []
    for source, ends in ends_by_source.items():
        for kind in KINDS[1:]:
            example = next((text for k, text in ends if k == kind), None)
            if example is not None:
                shown = " ".join(example.split())
                lines.append(f"- {source}, {kind}: `{shown[:width]}{'...' if len(shown) > width else ''}`")
    return lines


def failures_main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = subparser("failures", FAILURES)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--envs", nargs="+", default=["CustomerSupport-v0", "Math-v0"])
    parser.add_argument("--splits", nargs="+", default=["test"])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--task-file", help="play this task file's tasks instead of the splits' (one env)")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="the reply limit (agentgym eval's default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=OUT / "llm_failures.md")
    args = parser.parse_args(argv)
    agent = TransformersAgent(args.model, device=args.device, max_new_tokens=args.max_new_tokens)
    if args.task_file and len(args.envs) != 1:
        parser.error("--task-file takes one env")
    splits = ["train"] if args.task_file else args.splits
    sources = {f"{resolve_env_id(env)}, {args.task_file or split}": (resolve_env_id(env), split)
               for env in args.envs for split in splits}
    ends_by_source = {source: play_greedy(agent, env_id, split, args.episodes, args.task_file)
                      for source, (env_id, split) in sources.items()}
    families_by_source = {source: task_families(env_id, split, args.episodes, args.task_file)
                          for source, (env_id, split) in sources.items()}
    command = COMMAND.format("failures") + shlex.join(sys.argv[2:] if argv is None else argv)
    lines = [f"# How `{args.model}`'s greedy episodes end", "", f"Command: `{command}`", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, device {args.device}; episodes seeded 0.. "
             "(those of `agentgym eval --policy hf`). A failure counts under the kind of its first offending reply: one "
             f"that ran to the limit of {args.max_new_tokens} tokens, or else one the env could not run as a call.", "",
             *table(ends_by_source), "", "The first example of each kind:", "", *examples(ends_by_source), "",
             "Solved / episodes per task family (Math-v0: the problem's template; CustomerSupport-v0: the "
             "ticket's kind):", "", *family_table(ends_by_source, families_by_source)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return ends_by_source


# --- Sampled success per task, and the tasks in a band -----------------------------------------

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


def task_difficulty_main(argv: list[str] | None = None) -> None:
    parser = subparser("task-difficulty", TASK_DIFFICULTY)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--env", default="Math-v0")
    parser.add_argument("--task-file", required=True, help="a task file (JSONL) of the env")
    parser.add_argument("--first", type=int, default=48, help="how many of its first tasks to play")
    parser.add_argument("--episodes", type=int, default=12, help="sampled episodes per task")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--band", type=float, nargs=2, default=(0.2, 0.6), metavar=("LOW", "HIGH"))
    parser.add_argument("--keep", type=int, default=4, help="how many tasks of the band to write")
    parser.add_argument("--out", required=True, help="the task file to write")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
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


# --- Greedy, pass@1 and pass@k per task family -------------------------------------------------

def coverage(model: str, env_id: str, split: str, tasks: int, samples: int, temperature: float,
             device: torch.device) -> tuple[np.ndarray, np.ndarray]:
    """Greedy success of each task seeded ``0 .. tasks - 1`` of ``split``, and the success of
    its ``samples`` episodes sampled at ``temperature`` (tasks x samples)."""
    greedy = sampled_success(model, env_id, [{"seed": seed} for seed in range(tasks)], 0.0, device, split=split)
    resets = [{"seed": seed} for seed in range(tasks) for _ in range(samples)]
    sampled = sampled_success(model, env_id, resets, temperature, device, split=split)
    return greedy, sampled.reshape(tasks, samples)


def family_rows(families: list[str], greedy: np.ndarray, sampled: np.ndarray) -> list[str]:
    """One Markdown row per task family, then one for all tasks: tasks, greedy, pass@1, pass@k."""
    members: dict[str, list[int]] = defaultdict(list)
    for index, family in enumerate(families):
        members[family].append(index)
    members["all"] = list(range(len(families)))
    rows = []
    for family in [*sorted(set(families)), "all"]:
        index = members[family]
        solved_once = int((sampled[index].max(1) > 0).sum())
        label = f"**{family}**" if family == "all" else family
        rows.append(f"| {label} | {len(index)} | {greedy[index].mean():.2f} | {sampled[index].mean():.2f} | "
                    f"{solved_once / len(index):.2f} ({solved_once}) |")
    return rows


def coverage_main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = subparser("coverage", COVERAGE)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--envs", nargs="+", default=["Math-v0", "CustomerSupport-v0"])
    parser.add_argument("--splits", nargs="+", default=["test"])
    parser.add_argument("--tasks", type=int, default=100, help="tasks per split, seeded 0..")
    parser.add_argument("--samples", type=int, default=16, help="k: sampled episodes per task")
    parser.add_argument("--temperature", type=float, default=1.0, help="GRPO's sampling temperature by default")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT / "llm_coverage.md")
    args = parser.parse_args(argv)
    seed_everything(args.seed, args.threads)
    device = torch.device(resolve_device(args.device))
    command = COMMAND.format("coverage") + shlex.join(sys.argv[2:] if argv is None else argv)
    k = args.samples
    lines = [f"# What `{args.model}` solves when it samples", "", f"Command: `{command}`", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, device {args.device}; tasks seeded 0.. "
             f"(those of `agentgym eval`), each played once greedily and {k} times at temperature "
             f"{args.temperature}. Greedy: success of the greedy episodes; pass@1: mean success of the sampled "
             f"ones; pass@{k}: share (count) of tasks that at least one sampled episode solves."]
    results = {}
    for env in args.envs:
        env_id = resolve_env_id(env)
        for split in args.splits:
            started = time.time()
            greedy, sampled = coverage(args.model, env_id, split, args.tasks, k, args.temperature, device)
            results[f"{env_id}, {split}"] = (greedy, sampled)
            section = ["", f"## {env_id}, {split} ({time.time() - started:.0f} s)", "",
                       f"| task family | tasks | greedy | pass@1 | pass@{k} |", "|-|-|-|-|-|",
                       *family_rows(task_families(env_id, split, args.tasks), greedy, sampled)]
            print("\n".join(section), flush=True)
            lines += section
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return results


# --- Unseen values or unseen phrasings ---------------------------------------------------------

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


def phrasing_gap_main(argv: list[str] | None = None) -> dict[tuple[str, str], np.ndarray]:
    """Run the four crossings, write the page; returns each crossing's greedy success per ticket."""
    parser = subparser("phrasing-gap", PHRASING_GAP)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--tickets", type=int, default=100, help="tickets per crossing")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--out", type=Path, default=OUT / "llm_phrasing_gap.md")
    args = parser.parse_args(argv)
    seed_everything(0, args.threads)
    device = torch.device(resolve_device(args.device))
    started = time.time()
    success = {(values, wording): task_file_success(args.model, ENV_ID, crossed_tickets(values, wording, args.tickets),
                                                    1, 0.0, device)
               for values, wording in CROSSINGS}
    kinds = {split: [generate_ticket(split, index).kind for index in range(args.tickets)] for split in SPLITS}
    command = COMMAND.format("phrasing-gap") + shlex.join(sys.argv[2:] if argv is None else argv)
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


# --- The rollout engine's matrix products ------------------------------------------------------

SHAPES = {"query, key, value": (768, 256), "gate and up": (2048, 256), "down": (256, 1024), "vocabulary": (3015, 256)}
ROWS = (16, 64, 1024)


def microseconds(call: Callable[[], torch.Tensor], seconds: float = 0.5) -> float:
    """Mean time of ``call`` over about ``seconds`` after a warm-up."""
    for _ in range(20):
        call()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        count += 1
    return (time.perf_counter() - start) / count * 1e6


def matmul_main(argv: list[str] | None = None) -> None:
    parser = subparser("matmul", MATMUL)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=0.5, help="timed seconds per product and implementation")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(sys.argv[2:] if argv is None else argv)
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    lines = ["# Matrix products of the rollout engine on a CPU", "",
             f"`{COMMAND.format('matmul')}--threads {args.threads}` on {cpu_name()} "
             f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}), torch {torch.__version__}, "
             f"oneDNN available: {torch.backends.mkldnn.is_available()}. Microseconds per product, float32.", "",
             "| product | out x in | rows | torch `linear` | oneDNN, packed | speed-up |", "|---|---|---|---|---|---|"]
    for name, (out_features, in_features) in SHAPES.items():
        projection = Projection(torch.randn(out_features, in_features))
        for rows in ROWS:
            x = torch.randn(rows, in_features)
            plain = microseconds(lambda: F.linear(x, projection.weight), args.seconds)  # noqa: B023 (timed in this iteration)
            packed = (microseconds(lambda: projection(x), args.seconds)  # noqa: B023 (timed in this iteration)
                      if projection.packed is not None else float("nan"))
            lines.append(f"| {name} | {out_features} x {in_features} | {rows} | {plain:.0f} | {packed:.0f} | "
                         f"x{plain / packed:.1f} |")
            print(lines[-1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu_matmul.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


SUBCOMMANDS: dict[str, Callable[[list[str] | None], Any]] = {
    "failures": failures_main, "coverage": coverage_main, "phrasing-gap": phrasing_gap_main,
    "task-difficulty": task_difficulty_main, "matmul": matmul_main}


def subcommand(name: str) -> SimpleNamespace:
    """This module's functions with ``main`` the subcommand ``name``'s (``main(argv)`` takes the
    subcommand's own arguments; ``main()`` reads ``sys.argv[2:]``)."""
    return SimpleNamespace(**{**globals(), "main": SUBCOMMANDS[name]})


def main(argv: list[str] | None = None) -> Any:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in SUBCOMMANDS:
        raise SystemExit(__doc__ + "\nsubcommands: " + ", ".join(SUBCOMMANDS))
    return SUBCOMMANDS[args[0]](args[1:] if argv is not None else None)


if __name__ == "__main__":
    main()
