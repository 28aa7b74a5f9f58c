"""The tau2 part of ``agentgym eval``: its options, the env arguments and real tasks they
choose, and the leaderboard-style results file a language model's evaluation adds to. A module
beside the tau2 package, which it imports only when a tau2 env is evaluated, so that the
command line starts without it."""

from __future__ import annotations

import argparse
from typing import Any

from ..levels import base_env_id

DOMAINS = {"Tau2Retail": "retail", "Tau2Airline": "airline", "Tau2Telecom": "telecom"}  # by id stem, any version


def domain_of(env_id: str) -> str | None:
    """The tau2 domain of ``env_id`` (any level of it), None for an env of another family."""
    return DOMAINS.get(base_env_id(env_id).split("/", 1)[-1].rsplit("-", 1)[0])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The tau2 options of ``agentgym eval``, as a group of their own."""
    tau2 = parser.add_argument_group("tau2 (tau2_retail, tau2_airline, tau2_telecom)")
    tau2.add_argument("--source", choices=["generated", "real"],
                      help="real: every task of --split (at most --episodes), --trials times, as upstream evaluates "
                      "(default for language models); generated: seeded tasks (default otherwise)")
    tau2.add_argument("--seeded", action="store_true", help="with real tasks: seeded draws of the split's tasks "
                      "(--seed, --seed+1, ..., as the trainers' final evaluation plays them), not every task in order")
    tau2.add_argument("--data-dir", help="the tau2 data folder (default: TAU2_DATA_DIR)")
    tau2.add_argument("--user", choices=["rule", "llm"], default="rule", help="the customer: the seeded rule-based user, "
                      "or a chat model (--user-model on --user-base-url; key: OPENAI_API_KEY)")
    tau2.add_argument("--user-model")
    tau2.add_argument("--user-base-url")
    tau2.add_argument("--user-temperature", type=float, default=0.0)
    tau2.add_argument("--llm-max-tokens", type=int, help="tokens the LLM user and the NL judge may write per reply "
                      "(default: the server's)")
    tau2.add_argument("--nl-judge-model", help="a chat model that judges the NL assertions (on --nl-judge-base-url)")
    tau2.add_argument("--nl-judge-base-url")
    tau2.add_argument("--tool-arguments", choices=["strict", "upstream"], default="strict",
                      help="upstream: tool arguments handled as upstream's Python tools handle them")
    tau2.add_argument("--leaderboard", help="the leaderboard-style results file, per domain and k "
                      "(default: evals/tau2__<policy>__<model>__<split>__seed<N>.json)")


def make_kwargs(args: argparse.Namespace, llm: bool) -> dict[str, Any]:
    """The tau2 environment options of ``agentgym eval`` (the real tasks by default for a
    language model, and for telecom, which has no generated tasks; API keys come from the
    environment, so that no key is written to a file)."""
    kwargs: dict[str, Any] = {"source": args.source or ("real" if llm else "generated"),
                              "tool_arguments": args.tool_arguments, "user": args.user}
    if args.data_dir:
        kwargs["data_dir"] = args.data_dir
    if args.user == "llm":
        kwargs.update(user_model=args.user_model, user_base_url=args.user_base_url, user_temperature=args.user_temperature)
    if args.nl_judge_model:
        kwargs.update(nl_judge_model=args.nl_judge_model, nl_judge_base_url=args.nl_judge_base_url)
    if args.llm_max_tokens and (args.user == "llm" or args.nl_judge_model):
        kwargs["llm_max_tokens"] = args.llm_max_tokens
    return kwargs


def real_task_ids(env_id: str, split: str, data_dir: str | None, episodes: int) -> list[str]:
    """Upstream's protocol: the ids of the real tasks of ``split`` that ``env_id`` holds (its
    level's kinds and sizes; from ``-v1`` also ``validation``, carved from upstream's train
    split as the env carves it), the first ``episodes`` of them."""
    import gymnasium as gym

    env = gym.make(env_id, source="real", split=split, **({"data_dir": data_dir} if data_dir else {}))
    try:
        return [task.id for task in env.unwrapped.tasks.tasks][:episodes]
    finally:
        env.close()


def write_leaderboard(args: argparse.Namespace, path: str, domain: str, row: dict[str, float], tasks: int) -> None:
    """Add this domain's pass^1..k (of an evaluation summary ``row`` over ``tasks`` real tasks)
    to the leaderboard-style results file at ``path``, with the run's methodology."""
    from .tau2.leaderboard import domain_results
    from .tau2.leaderboard import write_leaderboard as write

    user = f"{args.user_model or 'OPENAI_MODEL'} (LLM)" if args.user == "llm" else "agentgym rule-based user (offline)"
    judge = args.nl_judge_model or "none: NL assertions not evaluated (the reward is an upper bound)"
    methodology = {"user_simulator": user, "nl_assertion_judge": judge, "split": args.split,
                   "tool_arguments": args.tool_arguments, "environment": "agentgym",
                   "notes": f"agentgym eval --trials {args.trials}; an episode ended by an error counts as a failure"}
    write(path, domain, domain_results(row, args.trials, tasks), model_name=args.model or "default", methodology=methodology)
    print(f"leaderboard results ({domain}): {path}")
