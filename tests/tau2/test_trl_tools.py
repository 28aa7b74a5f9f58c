"""The TRL environment adapter on the tau2 domains: one tool method per tool, declaring the
tool's own schema (names, types, descriptions, required arguments) as TRL reads it.

One known loss: transformers' ``get_json_schema`` (how TRL reads a tool method) cannot express
the fields of objects inside an array, so airline's ``flights``, ``passengers`` and
``payment_methods`` reach the model as arrays of plain objects (docs/algorithms/trl.md says so)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

from transformers.utils import get_json_schema  # noqa: E402

from agentgym_envs.external_trainers.trl_env import environment_class  # noqa: E402


def without_item_fields(properties: dict) -> dict:
    """``properties`` with the fields of objects inside arrays dropped, as transformers reads them."""
    def plain(spec: dict) -> dict:
        if spec.get("type") == "array" and spec.get("items", {}).get("type") == "object":
            return {**spec, "items": {"type": "object"}}
        return spec
    return {name: plain(spec) for name, spec in properties.items()}


def test_trl_tool_methods_declare_the_tau2_tool_schemas(domain: str, data_dir: Path) -> None:
    environment = environment_class(f"tau2_{domain}", data_dir=str(data_dir))()
    schemas = environment.env.unwrapped.tool_schemas
    assert schemas
    for schema in schemas:
        declared = get_json_schema(getattr(environment, schema["function"]["name"]))["function"]
        expected = schema["function"]
        assert declared["description"] == expected["description"]
        assert declared["parameters"]["properties"] == without_item_fields(expected["parameters"]["properties"])
        assert declared["parameters"].get("required", []) == expected["parameters"].get("required", [])
    environment.env.close()
