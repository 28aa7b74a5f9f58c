"""Every environment documents itself in its class docstring (Gymnasium style); the doc pages
under docs/envs are written from them, and `agentgym info <env>` prints them."""

from __future__ import annotations

import inspect

import gymnasium as gym
import pytest

from agentgym_envs.cli import main
from agentgym_envs.docs import DOCS_DIR, DOCUMENTED, documented, page

SECTIONS = ("## Description", "## Action Space", "## Observation Space", "## Rewards", "## Starting State",
            "## Episode End", "## Arguments", "## Info and Metrics", "## Version History")
BUILT_IN = [d for d in DOCUMENTED if d.entry is not None and not d.name.startswith("tau2")]


@pytest.mark.parametrize("doc", DOCUMENTED, ids=lambda d: d.name)
def test_committed_doc_page_matches_the_docstring(doc):
    committed = (DOCS_DIR / f"{doc.name}.md").read_text(encoding="utf-8")
    assert committed == page(doc), f"docs/envs/{doc.name}.md is stale: run python -m agentgym_envs.docs"


@pytest.mark.parametrize("doc", DOCUMENTED, ids=lambda d: d.name)
def test_docstring_has_every_gymnasium_section_in_order(doc):
    text = inspect.cleandoc(doc.env_class().__doc__)
    positions = [text.find(section) for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions)


@pytest.mark.parametrize("doc", BUILT_IN, ids=lambda d: d.name)
def test_docstring_states_the_spaces_the_env_has(doc):
    text = " ".join(inspect.cleandoc(doc.env_class().__doc__).split())
    structured = gym.make(doc.entry.env_id)
    text_mode = gym.make(doc.entry.env_id, action_mode="text")
    assert f"`{structured.action_space}`" in text
    assert f"Text(max_length={structured.observation_space.max_length})" in text
    assert f"Text(max_length={text_mode.action_space.max_length})" in text
    for tool in structured.unwrapped.tool_names:
        assert tool in page(doc)


def test_agentgym_info_prints_the_doc_page_and_the_spaces(capsys):
    assert main(["info", "Math-v0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(page(documented("math"))) and "action space (structured): MultiDiscrete([ 4 32 32 32])" in out
