"""benchmarks/results/ reads as a set of tables, not a lab notebook: no file longer than a page
(250 lines), no path of the machine a result was measured on, every page (.md) headed by the
command that made it, and the folder kept small (history lives in git)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TEXT = {".md", ".csv", ".json", ".jsonl", ".txt", ".yaml", ".yml"}
# a table's lock file (.suite.lock, git-ignored) is a sitting's, not a result
FILES = sorted(p for p in RESULTS.rglob("*") if p.is_file() and not (p.name.startswith(".") and p.name.endswith(".lock")))
TEXT_FILES = [p for p in FILES if p.suffix in TEXT]
PAGES = [p for p in TEXT_FILES if p.suffix == ".md"]
MAX_LINES = 250
HEAD_LINES = 15  # the command stands in a page's first lines
MAX_FILES = 175  # half the folder's count before it was tidied

# Exempt, with the reason. Nothing else is.
LONG_ALLOWED = {
    # the superseded protocol's full table: one row per run (436), kept as it was (its page, suite.md,
    # holds a row per level and a column per algorithm: within a page)
    "suite_v0/suite.csv",
    # the suite's record, read by machines: one row per run (1,645 planned) with its provenance, and one
    # learning curve per run of a family; their page is suite.md and its per-level pages
    "suite.csv",
    "suite_curves/*.csv",
}
NO_COMMAND_ALLOWED = {
    # the summary of findings: each one links the page, headed by its command, that holds its figures
    "NOTES.md",
}
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|root|home|Users|mnt|scratch)/")
COMMAND = re.compile(r"(?:^|`|\$ )(?:[A-Z_]+=\S+ )*(?:python3? |agentgym |make |/usr/bin/time )", re.MULTILINE)


def name(path: Path) -> str:
    return str(path.relative_to(RESULTS))


@pytest.mark.parametrize("path", TEXT_FILES, ids=name)
def test_no_result_file_is_longer_than_a_page(path):
    if any(fnmatch.fnmatch(name(path), pattern) for pattern in LONG_ALLOWED):
        pytest.skip("exempt: " + name(path))
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name(path)} has {lines} lines: keep the current figures, git keeps the rest"


@pytest.mark.parametrize("path", TEXT_FILES, ids=name)
def test_no_result_file_holds_a_machine_path(path):
    found = sorted({m.group(0) for m in MACHINE_PATH.finditer(path.read_text(encoding="utf-8"))})
    assert not found, f"{name(path)} names the measuring machine's folders {found}: write repository-relative paths"


@pytest.mark.parametrize("path", PAGES, ids=name)
def test_every_page_is_headed_by_its_command(path):
    if name(path) in NO_COMMAND_ALLOWED:
        pytest.skip("exempt: " + name(path))
    head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:HEAD_LINES])
    assert COMMAND.search(head), f"{name(path)}: state the command that made it in its first {HEAD_LINES} lines"


def test_the_folder_stays_small():
    assert len(FILES) <= MAX_FILES, f"{len(FILES)} files in benchmarks/results: drop superseded runs (git keeps them)"


def test_the_exemptions_name_existing_files():
    assert all(any(fnmatch.fnmatch(name(path), pattern) for path in FILES) for pattern in LONG_ALLOWED | NO_COMMAND_ALLOWED)


def test_every_benchmark_script_is_listed_with_its_command():
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    def listed(script: Path) -> bool:  # named, with its command (as a script, or a module of the benchmarks package)
        command = f"python benchmarks/{script.name}" in readme or f"python -m benchmarks.{script.stem}" in readme
        return f"`{script.name}`" in readme and command

    scripts = [s for s in sorted((ROOT / "benchmarks").glob("*.py")) if 'if __name__ == "__main__"' in s.read_text(encoding="utf-8")]
    unlisted = [s.name for s in scripts if not listed(s)]
    assert not unlisted, f"list these scripts in benchmarks/README.md with their command and cost: {unlisted}"


def test_make_bench_quick_runs_scripts_that_exist():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench-quick:", 1)[1].split("\n\n", 1)[0]
    scripts = [line.split()[1] for line in recipe.splitlines() if "benchmarks/" in line and ".py" in line]
    assert scripts and all((ROOT / script).is_file() for script in scripts)
