"""Every text file git tracks is free of merge-conflict markers, and every docs page (and the
README, the front page) stays within a page: one topic each, no page over 300 lines."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the lines git writes into a file it could not merge: <<<<<<< ours, ||||||| base, =======, >>>>>>> theirs
CONFLICT_MARKER = re.compile(r"^(?:<{7}|\|{7}|>{7})(?: |$)|^={7}$", re.MULTILINE)
MAX_PAGE_LINES = 300


def tracked_text_files() -> list[Path]:
    """The files git tracks under the repository root that read as UTF-8 text (binaries are skipped)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def conflict_markers(text: str) -> list[int]:
    """The 1-based numbers of the lines that are merge-conflict markers."""
    return [text.count("\n", 0, m.start()) + 1 for m in CONFLICT_MARKER.finditer(text)]


def test_conflict_markers_are_recognised():
    text = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\nb\n"
    assert conflict_markers(text) == [2, 4, 6]
    assert conflict_markers("Title\n=====\n======== \n>>> prompt\n<<<<<<<<\n") == []


def test_no_tracked_file_holds_a_merge_conflict_marker():
    files = tracked_text_files()
    assert len(files) > 100, "git ls-files listed too few files: is this a git checkout?"
    found = {str(p.relative_to(ROOT)): lines for p in files if (lines := conflict_markers(p.read_text(encoding="utf-8")))}
    assert not found, f"merge-conflict markers committed (file: line numbers): {found}"


PAGES = sorted({ROOT / "README.md", *(ROOT / "docs").rglob("*.md")})


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_docs_page_is_longer_than_a_page(page):
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_PAGE_LINES, f"{page.relative_to(ROOT)} has {lines} lines: split it by topic"
