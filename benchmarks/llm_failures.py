"""How a local chat model's greedy episodes of a split end, played as ``agentgym eval --policy hf``
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
Writes ``benchmarks/results/llm_failures.md``.

    python benchmarks/llm_failures.py --model models/agentgym-tiny --envs customer_support math --splits test train
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from agentgym_envs import resolve_env_id  # noqa: E402
from agentgym_envs.policies import episode_records  # noqa: E402
from agentgym_envs.policies.hf_agent import TransformersAgent  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/agentgym-tiny")
    parser.add_argument("--envs", nargs="+", default=["customer_support", "math"])
    parser.add_argument("--splits", nargs="+", default=["test"])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--task-file", help="play this task file's tasks instead of the splits' (one env)")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="the reply limit (agentgym eval's default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=RESULTS / "llm_failures.md")
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
    command = "python benchmarks/llm_failures.py " + shlex.join(sys.argv[1:] if argv is None else argv)
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


if __name__ == "__main__":
    main()
