"""Environment doc pages, written from the env classes' docstrings (Gymnasium style) and their
tools. ``python -m agentgym_envs.docs`` rewrites ``docs/envs/<name>.md``; a test checks that
the committed pages match, so the docstring is the one place each page is edited."""

from __future__ import annotations

import argparse
import importlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import ENVIRONMENTS, EnvEntry

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "envs"


@dataclass(frozen=True)
class DocumentedEnv:
    """An environment with a doc page: its name, id or import, and its class."""

    name: str
    title: str
    entry_point: str
    entry: EnvEntry | None = None

    def env_class(self) -> type:
        module, _, attr = self.entry_point.partition(":")
        return getattr(importlib.import_module(module), attr)


def _versions_title(env_id: str) -> str:
    """A page's title: every registered version of ``env_id`` (``-v0``, ``-v1``), its levels named after them."""
    import gymnasium as gym

    base = env_id.rsplit("-v", 1)[0]
    versions = sorted(i for i in gym.registry if i.rsplit("-v", 1)[0] == base)
    return ", ".join(f"`{i}`" for i in versions) + f" and their levels (`{base}-L<n>-v<k>`)"


DOCUMENTED: tuple[DocumentedEnv, ...] = (
    *(DocumentedEnv(e.name, _versions_title(e.env_id), e.entry_point, e) for e in ENVIRONMENTS),
    DocumentedEnv(
        "support_team",
        "`support_team_v0` (PettingZoo)",
        "agentgym_envs.multiagent.support_team_v0:SupportTeamParallelEnv",
    ),
)


def documented(name: str) -> DocumentedEnv:
    """The documented env called ``name`` (a short name, an id or ``support_team_v0``)."""
    for doc in DOCUMENTED:
        ids = {doc.name, doc.name + "_v0"} | ({doc.entry.env_id, doc.entry.env_id.split("/", 1)[1]} if doc.entry else set())
        if name in ids:
            return doc
    raise ValueError(f"unknown environment {name!r}; known: {', '.join(d.name for d in DOCUMENTED)}")


def page(doc: DocumentedEnv) -> str:
    """The Markdown page of one environment: its class docstring, then its tools."""
    cls = doc.env_class()
    lines = [
        f"# {doc.title}",
        "",
        f"<!-- Written by `python -m agentgym_envs.docs` from the docstring of `{cls.__module__}.{cls.__name__}`: "
        "edit the docstring, then rerun. -->",
        "",
        inspect.cleandoc(cls.__doc__ or ""),
    ]
    if doc.entry is not None:
        scenario = doc.entry.scenario_class()
        lines += _tool_table("Tools", scenario.tools)
        phone = getattr(getattr(scenario, "domain", None), "user_tools", ())  # a dual-control domain's user side
        if phone:
            lines += _tool_table("The customer's tools (its phone)", phone)
    return "\n".join(lines) + "\n"


def _tool_table(title: str, tools: Sequence[Any]) -> list[str]:
    lines = ["", f"## {title}", "", "| tool | arguments | description |", "| --- | --- | --- |"]
    for tool in tools:
        arguments = ", ".join(f"`{arg.name}` ({arg.type})" for arg in tool.args) or "-"
        lines.append(f"| `{tool.name}` | {arguments} | {_cell(tool.description)} |")
    return lines


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def write_pages(folder: Path = DOCS_DIR) -> list[Path]:
    """Write every page into ``folder``; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for doc in DOCUMENTED:
        path = folder / f"{doc.name}.md"
        path.write_text(page(doc), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DOCS_DIR, help="folder of the pages (default: %(default)s)")
    for path in write_pages(parser.parse_args(argv).out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
