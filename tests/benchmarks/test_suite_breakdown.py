"""``benchmarks/suite_breakdown.py``: a suite cell's committed test episodes, grouped."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from benchmarks import suite_breakdown

RESULTS = Path(suite_breakdown.__file__).resolve().parent / "results"


def groups_printed(capsys, *argv: str) -> tuple[str, dict[str, tuple[int, float]]]:
    assert suite_breakdown.main([*argv, "--suite", "suite_smoke"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    groups = {}
    for line in lines:
        name, counts = line.strip().rsplit(": ", 1)
        episodes, success = counts.split(" episodes, success ")
        groups[name] = (int(episodes), float(success))
    return head, groups


def test_the_groups_hold_every_test_episode_of_the_cell_and_its_mean_success(capsys):
    rows = [row for row in csv.DictReader((RESULTS / "suite_smoke.csv").open())
            if (row["env"], row["level"], row["algorithm"]) == ("customer_support", "L0", "ppo")]
    head, groups = groups_printed(capsys, "customer_support", "L0", "ppo", "--by", "kind")
    mean = sum(float(row["test_success"]) for row in rows) / len(rows)
    assert head.endswith(f"over {len(rows)} seeds, success {mean:.2f}")
    assert sum(episodes for episodes, _ in groups.values()) == int(head.split(": ")[1].split()[0])
    assert set(groups) <= {"password_reset", "billing_inquiry", "refund_request", "account_locked",
                           "api_integration (auth)", "api_integration (rate_limit)", "api_integration (server_error)"}


def test_a_cell_without_episodes_is_a_clear_error():
    with pytest.raises(SystemExit, match="no test episodes of no-such-algorithm"):
        suite_breakdown.main(["customer_support", "L0", "no-such-algorithm", "--suite", "suite_smoke"])
