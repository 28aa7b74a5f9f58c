"""Dataset rows for verl and SkyRL: one row per seeded task of an env's split.

Each row carries the env's opening messages as ``prompt`` and what draws the task again
(``env``, ``split``, ``seed``, ``task_id``), so that the rollout loop resets its env to the same
task the prompt shows.

- verl (``RLHFDataset``): ``data_source``, ``prompt``, ``agent_name: agentgym`` (the agent loop of
  :mod:`.verl_loop`), ``ability``, ``reward_model`` (``style: env``; the agent loop sets the
  reward itself) and ``extra_info`` (``index``, ``env``, ``split``, ``seed``, ``task_id``, ``env_kwargs``).
- SkyRL (``PromptDataset``): ``prompt``, ``env_class: agentgym``, and as the env's extras
  ``env``, ``split``, ``seed``, ``task_id``, ``env_kwargs`` and ``data_source``.

    python -m agentgym_envs.external_trainers.data --framework verl --env math --split train --tasks 512 --out data/

writes ``data/math_train.parquet`` (``--env all``: every env; ``--split both``: train and test).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentgym_envs import ENVIRONMENTS

from .episode import TextEpisode, canonical_id

AGENT_NAME = "agentgym"


def task_rows(env: str, tasks: int, seed: int = 0, split: str = "train",
              env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``tasks`` tasks seeded ``seed, seed + 1, ...``: ``prompt``, ``seed``, ``task_id``, ``env_id``."""
    episode = TextEpisode(env, split, **(env_kwargs or {}))
    try:
        rows = []
        for task_seed in range(seed, seed + tasks):
            prompt = episode.reset(task_seed)
            rows.append({"prompt": prompt, "seed": task_seed, "task_id": episode.task_id, "env_id": episode.env_id})
        return rows
    finally:
        episode.close()


def _name(env_id: str) -> str:
    """A built-in family's short name for any of its versions' ids; another id as it is."""
    stem = env_id.split("/", 1)[-1].rsplit("-", 1)[0]
    for entry in ENVIRONMENTS:
        if env_id.startswith(entry.env_id.split("/", 1)[0] + "/") and entry.stem == stem:
            return entry.name
    return env_id


def verl_rows(env: str, tasks: int, seed: int = 0, split: str = "train",
              env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows as verl's ``RLHFDataset`` reads them, played by the ``agentgym`` agent loop.
    ``env_kwargs`` travel as a JSON string (parquet keeps one schema for every row)."""
    rows = []
    for index, row in enumerate(task_rows(env, tasks, seed, split, env_kwargs)):
        rows.append({
            "data_source": f"agentgym/{_name(row['env_id'])}",
            "prompt": row["prompt"],
            "agent_name": AGENT_NAME,
            "ability": "tool_use",
            "reward_model": {"style": "env", "ground_truth": row["task_id"]},
            "extra_info": {"index": index, "env": row["env_id"], "split": split, "seed": row["seed"],
                           "task_id": row["task_id"], "env_kwargs": json.dumps(env_kwargs or {})},
        })
    return rows


def skyrl_rows(env: str, tasks: int, seed: int = 0, split: str = "train",
               env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows as SkyRL's ``PromptDataset`` reads them, for ``env_class: agentgym``."""
    from .skyrl_env import ENV_CLASS

    return [{"prompt": row["prompt"], "env_class": ENV_CLASS, "env": row["env_id"], "split": split,
             "seed": row["seed"], "task_id": row["task_id"], "env_kwargs": json.dumps(env_kwargs or {}),
             "data_source": f"agentgym/{_name(row['env_id'])}"}
            for row in task_rows(env, tasks, seed, split, env_kwargs)]


def write_parquet(rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Write rows to one parquet file (pandas + pyarrow, as verl and SkyRL read them)."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(list(rows)).to_parquet(path, index=False)
    return path


def main(argv: Sequence[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(prog="python -m agentgym_envs.external_trainers.data",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=["verl", "skyrl"], default="verl")
    parser.add_argument("--env", default="all", help="an env name or id, or 'all'")
    parser.add_argument("--split", default="both", choices=["train", "test", "both"])
    parser.add_argument("--tasks", type=int, default=256, help="rows per env and split")
    parser.add_argument("--seed", type=int, default=0, help="the first task's seed")
    parser.add_argument("--env-kwargs", default="{}", help="gym.make arguments as JSON, e.g. '{\"max_turns\": 12}'")
    parser.add_argument("--out", default="data", help="folder for <env>_<split>.parquet")
    args = parser.parse_args(argv)
    envs = [entry.name for entry in ENVIRONMENTS] if args.env == "all" else [args.env]
    splits = ["train", "test"] if args.split == "both" else [args.split]
    make_rows = verl_rows if args.framework == "verl" else skyrl_rows
    env_kwargs = json.loads(args.env_kwargs)
    written = []
    for env in envs:
        for split in splits:
            rows = make_rows(env, args.tasks, args.seed, split, env_kwargs)
            path = write_parquet(rows, Path(args.out) / f"{_name(canonical_id(env))}_{split}.parquet")
            written.append(path)
            print(f"{path}: {len(rows)} rows")
    return written


if __name__ == "__main__":
    main()
