"""A model that writes tool calls, behind a real ``transformers serve``: the framework tests
run each framework's own loop against it.

The micro model of tests/conftest.py writes no tool call a framework could run (its replies
through the server are empty), so ``calling_model`` fine-tunes it further with the project's
SFT on one expert episode, Math-v0's train task of seed 0 (``sum_1_to_n`` then
``submit_answer``), until it writes that episode's calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

MATH = "AgentGym/Math-v0"
TASK_SEED = 0  # Math-v0, train split: "What is the sum of the first 14 positive integers?"


@pytest.fixture(scope="session")
def calling_model(micro_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trainers.llm import sft
    from trainers.llm.model import record_expert_trajectories

    work = tmp_path_factory.mktemp("calling")
    episode = record_expert_trajectories(work / "expert.jsonl", [MATH], episodes=1, seed=TASK_SEED)
    config = sft.Config(model=str(micro_model), data=[str(episode)], run_dir=str(work / "sft"), epochs=80, batch_size=1,
                        micro_batch=1, learning_rate=1e-2, warmup_steps=1, device="cpu", threads=1)
    return sft.fine_tune(config)


@pytest.fixture(scope="module")
def calling_server(calling_model: Path, serve_model) -> str:
    """``transformers serve`` pinned to ``calling_model``; its ``/v1`` URL."""
    with serve_model(calling_model) as url:
        yield url
