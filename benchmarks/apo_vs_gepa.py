"""APO and GEPA side by side: the same agent, the same optimiser model, the same validation slice
and the same number of agent episodes, then each best prompt's greedy success on the test split
(with the env's own instructions as the baseline).

APO runs through the lifecycle (``agentgym train ENV --algo apo``); GEPA (``pip install
"agentgym-envs[apo]"``) gets APO's episode count as ``max_metric_calls`` and its train tasks and
validation slice. Results: ``benchmarks/results/apo.md`` and ``apo.json``.

    python benchmarks/apo_vs_gepa.py --env math --model models/agentgym-tiny \\
        --optimizer-model models/agentgym-tiny --optimizer-base-url http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import time
from pathlib import Path

from agentgym_envs.evaluation import evaluate, tool_env
from agentgym_envs.inference import ChatClient
from trainers.lifecycle import train
from trainers.llm import apo, gepa_adapter
from trainers.llm.prompting import PromptedPolicy, agent_spec
from trainers.run import EVAL_SEED, TrainRequest, canonical_env_id, make_env

RESULTS = Path(__file__).parent / "results"


def test_success(policy, env_id: str, prompt: str, episodes: int, concurrency: int) -> float:
    """Greedy test-split success of ``prompt`` on the tasks the lifecycle's final table plays
    (seeds 0, 1, ...), ``concurrency`` episodes at a time."""
    return evaluate(env_id, PromptedPolicy(policy, prompt), episodes, split="test", seed=EVAL_SEED,
                    concurrency=concurrency, action_mode="text")["success"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="Math-v0")
    parser.add_argument("--model", required=True, help="the agent: a local model directory, or a model name at --base-url")
    parser.add_argument("--base-url", default=None, help="the agent's endpoint (default: the model runs here)")
    parser.add_argument("--optimizer-model", required=True)
    parser.add_argument("--optimizer-base-url", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--beam-width", type=int, default=2)
    parser.add_argument("--train-batch", type=int, default=4)
    parser.add_argument("--val-episodes", type=int, default=8)
    parser.add_argument("--candidates-per-prompt", type=int, default=1)
    parser.add_argument("--max-retries", type=int, default=apo.Config.max_retries,
                        help="retries of a failed request, the agent's and the optimiser's, in both searches")
    parser.add_argument("--test-episodes", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-root", default="runs/apo_vs_gepa")
    parser.add_argument("--out", default=str(RESULTS / "apo.json"))
    args = parser.parse_args()
    env_id = canonical_env_id(args.env)
    spec = agent_spec(args.model, args.base_url)
    concurrency = apo.Config.concurrency
    policy = spec.build(concurrency)

    env = make_env(env_id, "train", {"action_mode": "text"})
    seed_prompt = tool_env(env).scenario.instructions
    env.close()
    started = time.perf_counter()
    baseline = test_success(policy, env_id, seed_prompt, args.test_episodes, concurrency)
    baseline_s = time.perf_counter() - started

    settings = {"model": args.model, "base_url": args.base_url, "optimizer_model": args.optimizer_model,
                "optimizer_base_url": args.optimizer_base_url, "rounds": args.rounds, "beam_width": args.beam_width,
                "train_batch": args.train_batch, "val_episodes": args.val_episodes,
                "candidates_per_prompt": args.candidates_per_prompt, "max_retries": args.max_retries}
    started = time.perf_counter()
    result = train(TrainRequest(env_id, algo="apo", seed=args.seed, run_root=args.run_root, progress=False,
                                eval_episodes=0, overrides=settings))  # the test split below, for both alike
    state = json.loads((Path(result.run_dir) / "apo_state.json").read_text())
    best = state["prompts"][state["best"]]
    apo_test = test_success(policy, env_id, best["text"], args.test_episodes, concurrency)
    apo_s = time.perf_counter() - started

    config = apo.Config(**settings)  # the optimiser's decoding, as APO asks it
    trainset = range(apo.TRAIN_SEED, apo.TRAIN_SEED + args.rounds * args.train_batch)
    valset = range(apo.VALIDATION_SEED, apo.VALIDATION_SEED + args.val_episodes)
    reflection = ChatClient(args.optimizer_model, args.optimizer_base_url, timeout=config.timeout,
                            max_retries=config.max_retries,
                            request_options={"temperature": config.optimizer_temperature,
                                             "max_tokens": config.optimizer_max_tokens})
    gepa_dir = Path(args.run_root) / f"{env_id.split('/')[-1]}__gepa__seed{args.seed}"
    shutil.rmtree(gepa_dir, ignore_errors=True)  # GEPA would resume from a run directory's state
    started = time.perf_counter()
    gepa = gepa_adapter.optimize(policy, env_id, seed_prompt, trainset, valset, reflection, state["episodes"],
                                 concurrency=concurrency, seed=args.seed, run_dir=str(gepa_dir))
    gepa_search_s = time.perf_counter() - started
    gepa_test = test_success(policy, env_id, gepa["best_prompt"], args.test_episodes, concurrency)
    gepa_s = time.perf_counter() - started

    rows = [
        {"method": "seed prompt (env instructions)", "test_success": baseline, "episodes": 0, "val_success": None,
         "wall_s": baseline_s, "prompt": seed_prompt},
        {"method": "APO", "test_success": apo_test, "episodes": state["episodes"],
         "val_success": best["val_success"], "wall_s": apo_s, "search_s": state["seconds"],
         "prompts": len(state["prompts"]), "errors": state["errors"], "best_proposer": best["proposer"],
         "prompt": best["text"]},
        {"method": "GEPA", "test_success": gepa_test, "episodes": gepa["episodes"], "val_success": gepa["val_success"],
         "wall_s": gepa_s, "search_s": gepa_search_s, "prompts": gepa["candidates"], "errors": gepa["errors"],
         "prompt": gepa["best_prompt"]},
    ]
    report = {"env_id": env_id, "agent": args.model, "optimizer": args.optimizer_model, "settings": settings,
              "test_episodes": args.test_episodes, "machine": platform.platform(), "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    for row in rows:
        print(f"{row['method']:32s} test success {row['test_success']:.3f}  episodes {row['episodes']:4d}  "
              f"wall {row['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
