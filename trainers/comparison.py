"""A finished run beside the reference policies: the table ``agentgym train --compare`` prints.

Rows, all on the test split of the run's env and the same episodes (seeds 0, 1, ...): the random
policy (the lower bound), the scripted expert (the upper bound), the trained policy, and, when
the run's env is a level below its family's top (``CustomerSupport-v1`` for ``CustomerSupport-L1-v1``),
the same trained policy on the top.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from agentgym_envs.evaluation import evaluate
from agentgym_envs.levels import level_ids
from agentgym_envs.tables import format_table

from .lifecycle import TrainResult, load_trained_policy
from .run import EVAL_SEED, evaluate_policy

COLUMNS = ("policy", "env", "success", "tool_reliability", "turns", "return")


def family_top(env_id: str) -> str | None:
    """The id of the top of ``env_id``'s ladder (its family's ``-vN``, the same version) when ``env_id``
    is one of its lower levels, else None."""
    try:
        ids = level_ids(env_id)
    except ValueError:  # not an agentgym family
        return None
    return ids[-1] if env_id != ids[-1] else None


def comparison_rows(result: TrainResult, checkpoint: str | Path, episodes: int) -> list[dict[str, Any]]:
    """The table's rows (see the module docstring)."""
    short = lambda env_id: env_id.split("/")[-1]  # noqa: E731
    rows = [{"policy": name, "env": short(result.env_id),
             **evaluate(result.env_id, name, episodes=episodes, split="test", seed=EVAL_SEED)}
            for name in ("random", "expert")]
    rows.append({"policy": f"{result.algo} (trained)", "env": short(result.env_id), **result.test_metrics})
    top = family_top(result.env_id)
    if top is not None:
        policy = replace(load_trained_policy(checkpoint, "cpu"), env_id=top)
        rows.append({"policy": f"{result.algo} (trained)", "env": short(top), **evaluate_policy(policy, "test", episodes)})
    return rows


def comparison_table(result: TrainResult, checkpoint: str | Path, episodes: int) -> str:
    """The rows of :func:`comparison_rows` as a markdown table with its caption."""
    return (f"\nthe trained policy beside the reference policies, test split, {episodes} episodes each:\n"
            + format_table(comparison_rows(result, checkpoint, episodes), COLUMNS))
