"""The committed suite page is the report of the committed table: its headline counts every row of the CSV
(a page written from the table before its last rows landed would lag it)."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.suite_lib.llm_rows import is_llm_row
from benchmarks.suite_lib.store import read_rows

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def test_the_committed_page_counts_every_row_and_hour_of_its_table():
    rows = read_rows(RESULTS / "suite.csv")
    page = (RESULTS / "suite.md").read_text()
    runs = re.search(r"Runs: (\d+) of the \d+", page)
    hours = re.search(r"([\d.]+) hours of training and evaluation in all", page)
    models = re.search(r"Language-model rows: (\d+)", page)
    assert runs and hours and models, "the page's headline is missing"
    assert int(runs.group(1)) == sum(not is_llm_row(row) for row in rows)
    assert int(models.group(1)) == sum(map(is_llm_row, rows))
    assert hours.group(1) == f"{sum(float(r['wall_train_s']) + float(r['wall_eval_s']) for r in rows) / 3600:.2f}"
