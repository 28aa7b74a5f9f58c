"""Every relative link of the README, the docs and the benchmark pages names a file or folder
that exists (anchors are not checked; links inside code blocks and to web pages are skipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted({ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "benchmarks").rglob("*.md")})
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def relative_links(page: Path) -> list[str]:
    text = INLINE_CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    links = [target.split("#", 1)[0] for target in LINK.findall(text)]
    return [link for link in links if link and not re.match(r"[a-z][a-z0-9+.-]*:", link, re.IGNORECASE)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    missing = [link for link in relative_links(page) if not (page.parent / link).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"
