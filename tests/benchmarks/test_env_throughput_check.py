"""The throughput guard's verdict on given figures: an env's ratios to CartPole more than 10 % below
their committed values in the median fail, and so do one ratio more than 35 % below and one
features or trainers / structured quotient more than 10 % below; figures measured otherwise (other
steps per round, another clock, another processor) are refused, not compared."""

from __future__ import annotations

import pytest

from benchmarks.env_throughput import NotComparable, check

ENV, OTHER = "AgentGym/Math-v0", "AgentGym/CustomerSupport-v0"
PROCESSOR = "AMD EPYC 9B14"


def row(env: str, variant: str, ratio: float, clock: str = "cpu", **extra: float) -> dict:
    return {"env": env, "variant": variant, "policy": "random", "clock": clock, "ratio": ratio, **extra}


def committed(*rows: dict, steps: int = 200, processor: str | None = PROCESSOR) -> dict:
    recorded = {} if processor is None else {"processor": processor}
    return {"command": "python benchmarks/env_throughput.py", "steps": steps, **recorded, "rows": list(rows)}


BEFORE = committed(row(ENV, "structured", 0.10), row(ENV, "text", 0.10), row(ENV, "features", 0.10, vs_structured=0.9),
                   row(OTHER, "structured", 0.20))


def verdict(*now: dict) -> bool:
    return check(list(now), BEFORE, 200, "committed.json", PROCESSOR)[1]


def test_figures_within_noise_of_the_committed_ones_pass():
    assert verdict(row(ENV, "structured", 0.095), row(ENV, "text", 0.11), row(ENV, "features", 0.092, vs_structured=0.88),
                   row(OTHER, "structured", 0.19))


def test_one_ratio_down_by_a_quarter_passes_while_the_env_median_holds():
    assert verdict(row(ENV, "structured", 0.075), row(ENV, "text", 0.10), row(ENV, "features", 0.10, vs_structured=0.9),
                   row(OTHER, "structured", 0.20))


def test_an_env_whose_median_ratio_is_more_than_a_tenth_below_fails():
    assert not verdict(row(ENV, "structured", 0.088), row(ENV, "text", 0.089), row(ENV, "features", 0.095, vs_structured=0.9),
                       row(OTHER, "structured", 0.20))


def test_a_quotient_of_two_paths_more_than_a_tenth_below_fails():
    assert not verdict(row(ENV, "structured", 0.10), row(ENV, "text", 0.10), row(ENV, "features", 0.10, vs_structured=0.8),
                       row(OTHER, "structured", 0.20))


def test_one_ratio_more_than_a_third_below_fails_while_the_env_median_holds():
    assert not verdict(row(ENV, "structured", 0.06), row(ENV, "text", 0.10), row(ENV, "features", 0.10, vs_structured=0.9),
                       row(OTHER, "structured", 0.20))


def test_rows_the_committed_file_lacks_are_listed_not_judged():
    lines, passed = check([row("AgentGym/Tau2Telecom-v0", "structured", 0.01)], BEFORE, 200, "committed.json", PROCESSOR)
    assert passed
    assert any("not committed" in line for line in lines)


def test_figures_of_other_steps_per_round_are_refused():
    with pytest.raises(NotComparable, match="5000 steps per round"):
        check([row(ENV, "structured", 0.1)], committed(row(ENV, "structured", 0.1), steps=5000), 200, "committed.json", PROCESSOR)


def test_figures_of_another_clock_are_refused():
    old = committed({"env": ENV, "variant": "structured", "policy": "random", "ratio": 0.1})  # before clocks were recorded: wall
    with pytest.raises(NotComparable, match="wall clock"):
        check([row(ENV, "structured", 0.1)], old, 200, "committed.json", PROCESSOR)


def test_figures_of_another_processor_are_refused():
    with pytest.raises(NotComparable, match="measured on AMD EPYC 9B14, this run on Intel Xeon"):
        check([row(ENV, "structured", 0.1)], BEFORE, 200, "committed.json", "Intel Xeon")


def test_figures_of_an_unrecorded_processor_are_refused():
    with pytest.raises(NotComparable, match="an unrecorded processor"):
        check([row(ENV, "structured", 0.1)], committed(row(ENV, "structured", 0.1), processor=None), 200,
              "committed.json", PROCESSOR)
