"""The micro chat model, built once per test session (seconds): tokenizer, Qwen2 network, SFT."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def micro_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the micro model, warm-started on a few expert episodes."""
    from trainers.llm.build import build_model

    return build_model(tmp_path_factory.mktemp("llm") / "micro", size="micro", device="cpu")
