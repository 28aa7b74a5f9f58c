"""The matrix-product benchmark times both implementations at every shape and writes its table."""

from __future__ import annotations

import sys

import pytest
import torch

pytest.importorskip("transformers")

@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="needs torch built with oneDNN")
def test_the_table_has_a_timed_row_per_product_and_row_count(tmp_path, monkeypatch, benchmark_script):
    module = benchmark_script("llm_analysis").subcommand("matmul")
    threads = torch.get_num_threads()
    monkeypatch.setattr(sys, "argv", ["llm_analysis.py", "matmul", "--threads", "1", "--seconds", "0.001", "--out", str(tmp_path)])
    try:
        module.main()
    finally:
        torch.set_num_threads(threads)
    table = (tmp_path / "cpu_matmul.md").read_text().splitlines()
    rows = [line.split("|") for line in table if line.startswith("| ") and line.endswith(" |") and "x" in line.split("|")[-2]]
    assert len(rows) == len(module.SHAPES) * len(module.ROWS)
    assert all(float(row[4]) > 0 and float(row[5]) > 0 for row in rows)  # both implementations timed
