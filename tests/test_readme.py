"""The README stays a front page: its examples run, its links to environment pages and result
files resolve, and it retypes no measured figure (it links the result files instead)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, re.DOTALL | re.MULTILINE)
LINKS = re.findall(r"\]\(((?:docs/envs|benchmarks/results)/[^)#]*)\)", README)


@pytest.mark.parametrize("block", [b for b in PYTHON_BLOCKS if "OpenAI(" not in b], ids=lambda b: b.split("\n")[0][:40])
def test_readme_example_runs(block):
    exec(compile("import gymnasium as gym\nimport agentgym_envs\n" + block, "README.md", "exec"), {})


def test_readme_links_to_environment_pages_and_results_resolve():
    assert LINKS
    missing = [link for link in LINKS if not (ROOT / link).exists()]
    assert not missing


def test_readme_retypes_no_measured_figure():
    text = README.replace("Python 3.11", "")
    numbers = re.findall(r"(?<![\d.=])\d+\.\d+(?![\d.])", text)
    figures = [n for n in numbers if not re.fullmatch(r"\d{4}\.\d{5}", n)]  # arXiv ids are no figures
    assert not figures, f"link the result file instead of typing {figures}"


def test_readme_links_every_environment_page():
    from agentgym_envs.docs import DOCUMENTED

    assert {f"docs/envs/{doc.name}.md" for doc in DOCUMENTED} <= set(LINKS)
