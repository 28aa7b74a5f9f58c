"""The scale-out benchmark on a tiny budget: a row per vectoriser and worker count, the goals and
the projection in its report."""

from __future__ import annotations

import argparse


def test_scale_out_rows_goals_and_projection(benchmark_script):
    scale_out = benchmark_script("scale_out")
    rows = scale_out.run([scale_out.SUPPORT], [1], envs_per_worker=2, seconds=0.0, min_steps=3)
    assert [(row["vectoriser"], row["sub_envs"], row["vector_steps"]) for row in rows] == [
        ("sync", 1, 3), ("async", 1, 3), ("ray x1", 1, 3), ("ray x2", 2, 3)]
    assert all(row["env_steps_per_s"] > 0 for row in rows)
    args = argparse.Namespace(workers=[1], envs_per_worker=2, seconds=0.0, cores=2)
    text = scale_out.report(rows, args, "python benchmarks/scale_out.py", "0.00 0.00 0.00")
    assert "CustomerSupport-v0, 1 worker: async steps/s / ray x2 steps/s" in text
    assert "| AgentGym/CustomerSupport-v0 | " in text.split("Projection to N machines")[1]
