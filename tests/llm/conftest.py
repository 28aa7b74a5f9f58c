"""The LLM tests need transformers (the micro model and the ``server`` fixture are in
tests/conftest.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
