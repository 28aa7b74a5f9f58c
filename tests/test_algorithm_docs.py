"""The config tables of docs/algorithms/*.md are the trainers' config dataclasses as they are:
every field, its type and default (python docs/algorithms/config_tables.py rewrites them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("transformers")  # the LLM trainers' configs are imported with their modules

ROOT = Path(__file__).resolve().parents[1]


def test_the_config_tables_are_current():
    spec = importlib.util.spec_from_file_location("config_tables", ROOT / "docs" / "algorithms" / "config_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, "run python docs/algorithms/config_tables.py"


def test_every_table_names_a_dataclass_with_fields():
    pages = sorted((ROOT / "docs" / "algorithms").glob("*.md"))
    tables = [page.read_text(encoding="utf-8").count("<!-- config: ") for page in pages]
    assert sum(tables) >= 12
