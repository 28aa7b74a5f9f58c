"""The ``agentgym`` command: list environments, describe them, train agents, evaluate policies
and trained checkpoints."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

from . import ENVIRONMENTS, __version__, resolve_env_id, success_criteria
from .docs import documented, page
from .evaluation import (
    MODEL_POLICIES,
    POLICIES,
    ModelSpec,
    ReferenceSpec,
    default_results_path,
    evaluate,
    is_model_policy,
)
from .levels import FAMILIES, family
from .observe.cli import add_runs_parser, add_store_arguments, add_tracing_arguments, eval_recording, tracing_session
from .observe.store import RunRecorder
from .scenarios import tau2_cli
from .tables import DEFAULT_COLUMNS, criteria_report, format_table

TRAIN_DESCRIPTION = """Train an agent. Every algorithm goes through the same run lifecycle:

  1. the env is resolved (name or id) and built once: a bad name, argument or missing data set
     fails here and writes nothing;
  2. the run directory <run-dir>/<EnvName>__<algo>__seed<N> is created (emptied unless --resume)
     with run.json (the request), TensorBoard events, the checkpoint and, at the end, result.json;
  3. the algorithm trains for --total-steps environment steps (rounded up to whole rollouts) on
     the scenario's training reward (see --set training_reward);
  4. the greedy policy is evaluated on the train and test splits on the env's own reward, and
     one table and the scenario's success criteria are printed.

`agentgym eval <run-dir>/<run>/checkpoint.pt` (or checkpoint.zip, or the run directory)
evaluates any checkpoint it wrote. See docs/training.md."""


def cmd_list(args: argparse.Namespace) -> int:
    if args.levels:
        return _list_levels()
    rows = []
    for entry in ENVIRONMENTS:
        scenario, latest = entry.scenario_class(), family(entry.name)
        row = {"name": entry.name, "id": latest.env_id, "difficulty": "/".join(scenario.difficulties),
               "levels": f"L0..L{len(latest.levels) - 1}, v{latest.version}", "data": scenario.data_status() or "built in"}
        if args.detailed:
            row["tools"] = str(len(scenario.tools))
            row["max_turns"] = str(scenario.max_turns)
            row["success criteria"] = ", ".join(f"{k}>={v:g}" for k, v in scenario.success_criteria.items()) or "-"
            row["description"] = scenario.description
        rows.append(row)
    print(format_table(rows, list(rows[0])))
    return 0



def _list_levels() -> int:
    """Every family's ladder at each version, easiest first, each ending with its top (``-v<n>``)."""
    rows = []
    for fam in FAMILIES:
        for level in fam.levels:
            rows.append({"family": fam.name, "level": f"L{level.index} {level.name}", "id": level.env_id,
                         "max turns": str(level.kwargs.get(fam.turns_arg, fam.turns)), "holds": level.description})
        rows.append({"family": fam.name, "level": f"v{fam.version}", "id": fam.env_id, "max turns": str(fam.turns), "holds": fam.top})
    print(format_table(rows, list(rows[0])))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Without an env: versions and devices. With one: its doc page (the env class's
    docstring and tools) and the spaces of the env as built here."""
    if not args.env:
        import numpy  # noqa: E401
        import stable_baselines3
        import tiktoken
        import torch

        print(f"agentgym {__version__}")
        for module in (gym, stable_baselines3, torch, numpy, tiktoken):
            print(f"  {module.__name__} {getattr(module, '__version__', '?')}")
        print(f"  cuda available: {torch.cuda.is_available()}")
        return 0
    doc = documented(args.env)
    env = gym.make(resolve_env_id(doc.entry.name)) if doc.entry is not None else None  # the latest; fails early without tau2 data
    print(page(doc))
    if env is not None:
        print(f"observation space: Text(max_length={env.observation_space.max_length})")
        print(f"action space (structured): {env.action_space}")
        if args.schemas:
            print(json.dumps(env.unwrapped.tool_schemas, indent=2))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from trainers.lifecycle import ALGORITHMS, train
    from trainers.run import TrainRequest

    for module in args.imports:  # modules that register algorithms (trainers.lifecycle.register_algorithm)
        importlib.import_module(module)
    overrides = dict(parse_override(item) for item in args.set)
    if args.num_workers is not None or args.ray_address is not None:
        if overrides.setdefault("vectorization", "ray") != "ray":
            raise ValueError("--num-workers / --ray-address run the vector env on Ray: drop --set vectorization")
    result = train(TrainRequest(args.env, algo=args.algo, seed=args.seed, total_steps=args.total_steps, device=args.device,
                       run_root=args.run_dir, eval_episodes=args.eval_episodes, resume=args.resume,
                       progress=not args.no_progress, overrides=overrides, num_workers=args.num_workers,
                       ray_address=args.ray_address, run_store=args.store, record=not args.no_store,
                       curriculum=tuple(level for level in (args.curriculum or "").split(",") if level),
                       curriculum_threshold=args.curriculum_threshold))
    if args.compare:
        from trainers.comparison import comparison_table

        print(comparison_table(result, Path(result.run_dir) / ALGORITHMS[result.algo].checkpoint_name, args.eval_episodes))
    return 0


def parse_override(item: str) -> tuple[str, object]:
    """``name=value`` with value read as JSON when it parses (numbers, true/false, null), else a string."""
    name, sep, value = item.partition("=")
    if not sep or not name:
        raise ValueError(f"--set expects name=value, got {item!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def cmd_eval(args: argparse.Namespace) -> int:
    from trainers.run import RUN_FILE  # the trainers above the envs: imported by the commands that train

    if Path(args.env).is_file() or (Path(args.env) / RUN_FILE).is_file():
        refused = refused_checkpoint_options(args)
        if refused:
            raise ValueError(f"a checkpoint plays here, greedily, the env it was trained on: {', '.join(refused)} "
                             "apply to reference policies and language models only")
        return _eval_checkpoint(args)
    try:
        env_id = resolve_env_id(args.env)
    except ValueError:
        if Path(args.env).is_dir():  # meant as a run directory
            raise ValueError(f"{args.env} is no environment, and as a directory it holds no {RUN_FILE}: not a run "
                             "directory of agentgym train (give the run's directory or its checkpoint)") from None
        raise
    llm = [policy for policy in args.policy if is_model_policy(policy)]
    if llm and len(args.policy) > 1:
        raise ValueError(f"--policy {llm[0]} evaluates one model: give it alone")
    if args.output and len(args.policy) > 1:
        raise ValueError("--output holds one policy's episodes: give one --policy")
    action_mode = args.action_mode or ("text" if llm else "structured")
    if llm and action_mode != "text":
        raise ValueError("a language model plays in text mode: drop --action-mode structured")
    make_kwargs = {"action_mode": action_mode, **({"max_turns": args.max_turns} if args.max_turns else {})}
    domain = tau2_cli.domain_of(env_id)
    task_ids = None
    if domain is not None:
        make_kwargs.update(tau2_cli.make_kwargs(args, llm=bool(llm) or domain == "telecom"))
        if make_kwargs["source"] == "real" and not args.seeded:  # upstream's protocol: every task of the split, --trials times
            task_ids = tau2_cli.real_task_ids(env_id, args.split, args.data_dir, args.episodes)
    if args.seeded and (domain is None or make_kwargs["source"] != "real"):
        raise ValueError("--seeded draws a tau2 env's real tasks by seed: give it on a tau2 env with its real tasks "
                         "(--source real; a generated task is always a seeded draw)")
    on_ray = args.num_workers is not None or args.ray_address is not None
    if on_ray and not llm and (args.trials != 1 or args.output or task_ids is not None):
        raise ValueError("--num-workers / --ray-address fan out reference policies' seeded episodes, one trial each, "
                         "without --output (a language model's episodes fan out with all of them)")
    rows = []
    for name in args.policy:
        policy = name
        if is_model_policy(name):
            policy = ModelSpec(name, args.model, {"base_url": args.base_url, "api_key": args.api_key, "device": args.device,
                                                  "timeout": args.timeout, "max_retries": args.max_retries,
                                                  "temperature": args.temperature, "max_tokens": args.max_tokens})
        output = args.output or (default_results_path(env_id, name, args.model, args.split, args.seed) if llm else None)
        if output:
            print(f"episodes: {output}" + (" (resumed)" if args.resume else ""))
        config = {"env_id": env_id, "policy": name, "model": args.model, "split": args.split, "seed": args.seed,
                  "episodes": args.episodes, "trials": args.trials, "make_kwargs": make_kwargs, "output": output}
        version = {"name": name, **({"model": args.model, "temperature": args.temperature, "max_tokens": args.max_tokens}
                                    if name in MODEL_POLICIES else {})}
        with eval_recording(args, f"{env_id.split('/')[-1]}__{name}__{args.split}__seed{args.seed}", config, env_id,
                            version) as recorder:
            if on_ray and not llm:
                metrics = _eval_on_ray(args, env_id, name, make_kwargs, recorder)
            else:
                metrics = evaluate(env_id, policy, episodes=args.episodes, split=args.split, seed=args.seed, progress=True,
                                   trials=args.trials, concurrency=args.concurrency, output=output, resume=args.resume,
                                   task_ids=task_ids, num_workers=ray_workers(args) if on_ray else None,
                                   recorder=recorder, **make_kwargs)
            if recorder is not None:
                recorder.summary = metrics
        rows.append({"policy": name, **metrics})
    if task_ids is not None:
        print(f"\n{env_id}, split={args.split}, its {len(task_ids)} real tasks x {args.trials} trials")
        if llm:
            path = args.leaderboard or default_results_path("tau2", args.policy[0], args.model, args.split,
                                                            args.seed).replace(".jsonl", ".json")
            tau2_cli.write_leaderboard(args, path, domain, rows[0], len(task_ids))
    else:
        print(f"\n{env_id}, split={args.split}, {args.episodes} tasks x {args.trials} trials, seeds {args.seed}..{args.seed + args.episodes - 1}")
    extra = [column for column in rows[0] if column.startswith(("pass^", "pass@", "llm_")) or column == "errors"]
    print(format_table(rows, ["policy", *DEFAULT_COLUMNS, *extra]))
    criteria = success_criteria(env_id)
    for row in rows:
        print(f"\nsuccess criteria, {row['policy']}:\n{criteria_report(row, criteria)}")
    return 0


def ray_workers(args: argparse.Namespace) -> int:
    """Connect to ``--ray-address`` (or a local Ray); ``--num-workers``, default one per CPU of the cluster."""
    from .scale import init_ray
    from .scale.runtime import ray

    init_ray(args.ray_address)
    return args.num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))


def _eval_on_ray(args: argparse.Namespace, env_id: str, policy: str, make_kwargs: dict[str, object],
                 recorder: RunRecorder | None = None) -> dict[str, float]:
    """A reference policy's episodes on Ray workers through :func:`evaluate`, each with a fresh
    agent seeded by its episode (the records of a local run); ``recorder`` records them here."""
    return evaluate(env_id, ReferenceSpec(policy), episodes=args.episodes, split=args.split, seed=args.seed,
                    progress=True, num_workers=ray_workers(args), recorder=recorder, **make_kwargs)


# the options of `agentgym eval` a checkpoint's evaluation takes; any other one given is refused, not ignored
CHECKPOINT_EVAL_OPTIONS = frozenset({"env", "episodes", "split", "seed", "device", "trials", "output", "resume",
                                     "otlp_endpoint", "otlp_protocol", "store", "no_store", "func"})


def refused_checkpoint_options(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` (an ``eval`` command line) given away from their defaults that a
    checkpoint's evaluation does not take."""
    defaults = vars(build_parser().parse_args(["eval", args.env]))
    return ["--" + name.replace("_", "-") for name, value in vars(args).items()
            if name not in CHECKPOINT_EVAL_OPTIONS and value != defaults.get(name)]


def _eval_checkpoint(args: argparse.Namespace) -> int:
    from trainers.lifecycle import load_trained_policy
    from trainers.run import evaluate_policy

    policy = load_trained_policy(args.env, args.device)
    checkpoint = Path(args.env).resolve()
    run_name = (checkpoint.parent if checkpoint.is_file() else checkpoint).name
    config = {"checkpoint": str(checkpoint), "env_id": policy.env_id, "split": args.split, "seed": args.seed,
              "episodes": args.episodes}
    with eval_recording(args, f"{run_name}__{args.split}__seed{args.seed}", config, policy.env_id,
                        {"checkpoint": str(checkpoint)}) as recorder:
        if args.output:
            print(f"episodes: {args.output}" + (" (resumed)" if args.resume else ""))
        metrics = evaluate_policy(policy, args.split, args.episodes, seed=args.seed, recorder=recorder,
                                  output=args.output, resume=args.resume, trials=args.trials)
        if recorder is not None:
            recorder.summary = metrics
    print(f"\n{args.env} on {policy.env_id}, split={args.split}, {args.episodes} episodes, "
          f"seeds {args.seed}..{args.seed + args.episodes - 1}; return: the env's own reward")
    columns = [c for c in DEFAULT_COLUMNS if c in metrics]
    print(format_table([{"policy": "checkpoint", **metrics}], ["policy", *columns]))
    criteria = success_criteria(policy.env_id)
    if criteria:
        print(f"\nsuccess criteria:\n{criteria_report(metrics, criteria)}")
    return 0


def cmd_llm_build_model(args: argparse.Namespace) -> int:
    from trainers.llm.recipe.build import run_from_args

    run_from_args(args)
    return 0


def cmd_llm_corrections(args: argparse.Namespace) -> int:
    from trainers.llm.recipe.corrections import run_from_args

    run_from_args(args)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .external_trainers.openenv.cli import run_from_args

    return run_from_args(args)


def policy_name(name: str) -> str:
    """``--policy``'s values: a known policy, or a ``module:factory`` spec."""
    if name in POLICIES or is_model_policy(name):
        return name
    raise argparse.ArgumentTypeError(f"invalid choice: {name!r} (choose from {', '.join([*POLICIES, *MODEL_POLICIES])}, "
                                     "or give module:factory)")


def add_ray_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--num-workers", type=int, default=None, metavar="N",
                        help=f"{what}; default with --ray-address: one per CPU of the Ray cluster (needs agentgym-envs[ray])")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="the Ray to use: 'auto' joins this machine's cluster, ray://host:port a remote one "
                             "(default: a local Ray started on demand)")


def build_parser() -> argparse.ArgumentParser:
    from trainers.lifecycle import ALGORITHMS  # no torch at import
    from trainers.llm.recipe.build import add_arguments as add_llm_build_arguments
    from trainers.llm.recipe.corrections import add_arguments as add_llm_corrections_arguments
    from trainers.run import DEFAULT_TOTAL_STEPS

    parser = argparse.ArgumentParser(prog="agentgym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"agentgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="list the environments")
    p.add_argument("--detailed", action="store_true", help="tools, turns, success criteria, description")
    p.add_argument("--levels", action="store_true",
                   help="every family's ladder of levels at every version, from L0 up to -v<n>")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("info", help="versions and devices; with an environment, its documentation, spaces and tools")
    p.add_argument("env", nargs="?", help="an environment name or id, or support_team")
    p.add_argument("--schemas", action="store_true", help="print the tools' JSON schemas")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("train", help="train an agent (PPO by default) and report its metrics on both splits",
                       description=TRAIN_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env", help="an environment name or id, e.g. customer_support; support_team (the PettingZoo team, "
                   "one shared network); or any gymnasium id, e.g. CartPole-v1")
    p.add_argument("--algo", default="ppo", help=f"one of: {', '.join(ALGORITHMS)}, a name a module given to --import "
                   "registers, or the dotted path of a module that defines train and load_policy (default: %(default)s)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import MODULE first: a module that registers algorithms with register_algorithm (repeatable)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--total-steps", type=int, default=DEFAULT_TOTAL_STEPS,
                   help="environment steps, for every algorithm (default: %(default)s, a few minutes of PPO on 2 CPU cores)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    p.add_argument("--run-dir", default="runs", help="root of the run directories (default: %(default)s)")
    p.add_argument("--eval-episodes", type=int, default=100, help="final evaluation episodes per split")
    p.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--compare", action="store_true", help="then print the trained policy beside random and expert "
                   "on the test split, and on the family's -v0 when the env is a lower level")
    p.add_argument("--curriculum", metavar="L0,L1,...", help="train through these levels of the env's family (names "
                   "like L0, or ids), moving up when train success reaches --curriculum-threshold; the last is evaluated")
    p.add_argument("--curriculum-threshold", type=float, default=0.9, metavar="RATE",
                   help="success rate over a level's latest 50 episodes that moves training up (default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting: env_kwargs={...} (gym.make arguments), training_reward={...} (reward_config fields "
                   "merged over the scenario's training reward; null: the env's own), or a field of the algorithm's "
                   "config, e.g. --set learning_rate=3e-4 --set anneal_lr=false (repeatable; values are JSON where they parse, and "
                   "must be of the setting's type)")
    add_ray_arguments(p, "run PPO's vector env in N Ray actors (vectorization=ray)")
    add_tracing_arguments(p)
    add_store_arguments(p, "<run-dir>/agentgym.db, or AGENTGYM_RUN_STORE")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("eval", help="evaluate reference policies on an environment, or a trained checkpoint")
    p.add_argument("env", help="an environment name or id, e.g. customer_support; or a checkpoint file, e.g. runs/<run>/checkpoint.pt")
    p.add_argument("--policy", nargs="+", default=["expert", "random"], type=policy_name, metavar="POLICY",
                   help=f"reference policies ({', '.join(POLICIES)}), or one language model: openai (an OpenAI-compatible "
                   "endpoint), hf (a local model), an agent framework's built-in agent on the endpoint (langchain, "
                   "openai-agents, strands, agno), or module:factory (a factory building a framework agent; docs/agents.md)")
    p.add_argument("--episodes", type=int, default=100, help="tasks, seeded --seed, --seed+1, ...")
    p.add_argument("--split", default="test")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--action-mode", choices=["structured", "text"], help="default: text for language models, else structured")
    p.add_argument("--device", default="auto", help="for checkpoints and --policy hf: auto | cpu | cuda")
    p.add_argument("--max-turns", type=int, help="end an episode after this many tool calls (default: the environment's)")
    p.add_argument("--trials", type=int, default=1, help="plays of each task; reports pass^1..pass^k and pass@2..pass@k beside the mean")
    p.add_argument("--concurrency", type=int, default=1, help="environments played at once (requests in flight, or the hf batch)")
    p.add_argument("--output", help="JSONL file receiving each episode as it finishes (default for language models: evals/...)")
    p.add_argument("--resume", action="store_true", help="continue --output, playing only the episodes it lacks")
    p.add_argument("--model", help="the model: a name the endpoint serves (or OPENAI_MODEL), or a local path / hub id for hf")
    p.add_argument("--base-url", help="the endpoint, e.g. http://127.0.0.1:8000/v1 (default: OPENAI_BASE_URL)")
    p.add_argument("--api-key", help="default: OPENAI_API_KEY")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the server's; greedy for hf)")
    p.add_argument("--max-tokens", type=int, default=256, help="tokens a model may write per turn")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request before a retry")
    p.add_argument("--max-retries", type=int, default=3, help="retries of a failed request, with exponential back-off")
    tau2_cli.add_arguments(p)
    add_ray_arguments(p, "play the episodes on N Ray workers: a reference policy with a fresh agent seeded by "
                      "each episode; a language model with one agent and --concurrency envs per worker")
    add_tracing_arguments(p)
    add_store_arguments(p, "runs/agentgym.db, or AGENTGYM_RUN_STORE")
    p.set_defaults(func=cmd_eval)
    add_runs_parser(sub)
    p = sub.add_parser("llm-build-model", help="build the project's small chat model: BPE tokenizer, Llama network, "
                       "SFT warm start on expert trajectories (needs the llm extra)")
    add_llm_build_arguments(p)
    p.set_defaults(func=cmd_llm_build_model)
    p = sub.add_parser("llm-corrections", help="a local model plays fresh tasks; the scripted expert's next call on "
                       "the states after its slips is written as SFT data (DAgger; needs the llm extra)")
    add_llm_corrections_arguments(p)
    p.set_defaults(func=cmd_llm_corrections)
    from .external_trainers.openenv.cli import (
        add_arguments as add_serve_arguments,  # argparse only; openenv is imported by `serve`
    )

    p = sub.add_parser("serve", help="serve an environment over OpenEnv (HTTP and WebSocket; needs the serve extra)")
    add_serve_arguments(p)
    p.set_defaults(func=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with tracing_session(args):
            return args.func(args)
    except ValueError as exc:
        print(f"agentgym: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
