"""The tau2 leaderboard protocol on agentgym: an endpoint model as the agent, an LLM playing
the customer, every real task of the test split played k times, pass^1..k per domain.

Any OpenAI-compatible endpoint serves either side (a hosted API, vLLM, SGLang,
``transformers serve``). With a hosted user simulator (upstream uses gpt-4.1) and an NL
judge the numbers are comparable with the leaderboard's; with a small local model on both
sides they show that the loop runs end to end, not what tau2 measures.

Writes ``<out>/tau2_llm.json`` (leaderboard-style: per domain, pass_1..pass_k in percent),
``tau2_llm.md``, ``tau2_llm.csv`` and the per-episode JSONL files (resumable: ``--resume``).

Usage (a local model on 127.0.0.1):
    transformers serve --host 127.0.0.1 --port 8011 --device cpu &
    python benchmarks/tau2_llm.py --model models/agentgym-tiny --base-url http://127.0.0.1:8011/v1 \
        --user-model models/agentgym-tiny --trials 2 [--tasks 4] [--domains retail airline]
With an API key (OPENAI_API_KEY):
    python benchmarks/tau2_llm.py --model gpt-4.1-mini --user-model gpt-4.1 --nl-judge-model gpt-4.1 --trials 4
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import OpenAIChatAgent, evaluate
from agentgym_envs.scenarios.tau2 import get_domain
from agentgym_envs.scenarios.tau2.leaderboard import domain_results, write_leaderboard

ENVS = {"retail": "AgentGym/Tau2Retail-v0", "airline": "AgentGym/Tau2Airline-v0"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the agent's model, as the endpoint names it")
    parser.add_argument("--base-url", help="the agent's endpoint (default OPENAI_BASE_URL)")
    parser.add_argument("--user-model", required=True, help="the customer's model")
    parser.add_argument("--user-base-url", help="the customer's endpoint (default: --base-url)")
    parser.add_argument("--nl-judge-model", help="judges the NL assertions (retail 2026 tasks); default: not judged")
    parser.add_argument("--nl-judge-base-url", help="default: --base-url")
    parser.add_argument("--domains", nargs="+", default=list(ENVS), choices=list(ENVS))
    parser.add_argument("--split", default="test")
    parser.add_argument("--tasks", type=int, help="play only the first N tasks of the split (default: all)")
    parser.add_argument("--trials", type=int, default=4, help="k of pass^k: plays of each task")
    parser.add_argument("--max-turns", type=int, default=40, help="agent actions per episode")
    parser.add_argument("--max-tokens", type=int, default=512, help="tokens the agent may write per turn")
    parser.add_argument("--llm-max-tokens", type=int, help="tokens the customer and the judge may write per reply")
    parser.add_argument("--concurrency", type=int, default=1, help="episodes played at once")
    parser.add_argument("--tool-arguments", choices=["strict", "upstream"], default="upstream",
                        help="upstream (default here): tool arguments handled as upstream's tools handle them")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--data-dir", help="the tau2 data folder (default $TAU2_DATA_DIR)")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--resume", action="store_true", help="continue the per-episode files of an interrupted run")
    args = parser.parse_args(argv)

    out = Path(args.out)
    board = out / "tau2_llm.json"
    if board.exists() and not args.resume:
        board.unlink()  # a fresh run rewrites the results; --resume keeps and completes them
    agent = OpenAIChatAgent(args.model, args.base_url, concurrency=args.concurrency, timeout=args.timeout,
                            temperature=0.0, max_tokens=args.max_tokens)
    env_options = {
        "source": "real", "action_mode": "text", "max_turns": args.max_turns, "tool_arguments": args.tool_arguments,
        "user": "llm", "user_model": args.user_model, "user_base_url": args.user_base_url or args.base_url,
        "llm_timeout": args.timeout, **({"data_dir": args.data_dir} if args.data_dir else {}),
        **({"llm_max_tokens": args.llm_max_tokens} if args.llm_max_tokens else {}),
        **({"nl_judge_model": args.nl_judge_model, "nl_judge_base_url": args.nl_judge_base_url or args.base_url}
           if args.nl_judge_model else {}),
    }
    rows = []
    for domain in args.domains:
        tasks = [task.id for task in get_domain(domain).load_tasks(args.split, args.data_dir)][: args.tasks]
        start = time.perf_counter()
        summary = evaluate(ENVS[domain], agent, split=args.split, trials=args.trials, concurrency=args.concurrency,
                           task_ids=tasks, output=str(out / f"tau2_llm_{domain}.jsonl"), resume=args.resume,
                           progress=True, **env_options)
        entry = domain_results(summary, args.trials, len(tasks))
        methodology = {
            "user_simulator": f"{args.user_model} (LLM, temperature 0)",
            "nl_assertion_judge": args.nl_judge_model or "none: NL assertions not evaluated (the reward is an upper bound)",
            "split": args.split, "tool_arguments": args.tool_arguments, "environment": "agentgym",
            "notes": f"benchmarks/tau2_llm.py; max {args.max_turns} agent actions per episode; "
                     "an episode ended by an error counts as a failure",
        }
        write_leaderboard(board, domain, entry, model_name=args.model, methodology=methodology)
        rows.append({"domain": domain, **entry, "db": round(summary.get("db", 0.0), 4),
                     "endpoint_errors": round(summary.get("endpoint_error", 0.0) * summary["episodes"]),
                     "turns": round(summary.get("turns", 0.0), 2), "seconds": round(time.perf_counter() - start, 1)})
        print(json.dumps(rows[-1]))
    agent.close()
    write_tables(out, rows, args)
    return 0


def write_tables(out: Path, rows: list[dict], args: argparse.Namespace) -> None:
    """``tau2_llm.csv`` and ``tau2_llm.md`` of the per-domain rows."""
    columns = list(rows[0])
    with (out / "tau2_llm.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    lines = [
        f"# tau2 leaderboard protocol: agent `{args.model}`, user `{args.user_model}`, split {args.split}",
        "",
        f"{args.trials} trials per task; pass^k in percent (upstream's definition); "
        f"NL judge: {args.nl_judge_model or 'none'}; tool arguments: {args.tool_arguments}; "
        f"at most {args.max_turns} agent actions per episode.",
        "",
        "Command: `python " + " ".join(["benchmarks/tau2_llm.py", *sys.argv[1:]]) + "`",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        *("| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows),
        "",
    ]
    (out / "tau2_llm.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
