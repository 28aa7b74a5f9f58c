"""A tau2 evaluation's results in the shape of a tau2-bench leaderboard submission
(``submission.json``): per domain, ``pass_1 .. pass_k`` in percent, beside the run's
methodology. Evaluating the two domains one after the other fills one file.

Example (``results`` holds one entry per evaluated domain)::

    {"model_name": "my-model",
     "results": {"retail": {"pass_1": 41.25, "pass_2": 30.0, "tasks": 40, "trials": 2,
                            "episodes": 80, "errors": 0}},
     "methodology": {"evaluation_date": "2026-11-23", "user_simulator": "gpt-4.1",
                     "split": "test", "notes": "..."}}
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def domain_results(summary: Mapping[str, float], trials: int, tasks: int) -> dict[str, Any]:
    """One domain's entry: ``pass_1 .. pass_<trials>`` in percent (2 decimals), from an
    evaluation summary (``pass^k``, or ``success`` for one trial), and the run's size."""
    entry: dict[str, Any] = {}
    for k in range(1, trials + 1):
        value = summary["success"] if trials == 1 else summary[f"pass^{k}"]
        entry[f"pass_{k}"] = round(100.0 * value, 2)
    entry.update(tasks=tasks, trials=trials, episodes=int(summary["episodes"]), errors=int(summary["errors"]))
    return entry


def write_leaderboard(
    path: str | os.PathLike[str],
    domain: str,
    entry: Mapping[str, Any],
    *,
    model_name: str,
    methodology: Mapping[str, Any],
) -> dict[str, Any]:
    """Put ``domain``'s ``entry`` into the submission file at ``path`` (created if missing;
    another domain's results already there are kept) and return the file's content. A file
    about another model is a clear error and is left as it is."""
    path = Path(path)
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not a results file (not JSON: {exc.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise ValueError(f"{path} is not a results file (no 'results' object)")
        if data.get("model_name") != model_name:
            raise ValueError(f"{path} holds results of model {data.get('model_name')!r}, not {model_name!r}: "
                             "choose another file")
    else:
        data = {"model_name": model_name, "results": {}}
    data["results"][domain] = dict(entry)
    data["methodology"] = {"evaluation_date": datetime.date.today().isoformat(), **methodology}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)
    return data
