"""Tools: declared once with a Python implementation, an OpenAI function-calling schema
and, per argument, the entity kind that the structured action mode fills it from."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class ToolError(Exception):
    """Raised by a tool implementation for a domain error (unknown user, wrong state...).

    The environment turns it into the tool result ``"Error: <message>"``; the episode goes on.
    """


@dataclass(frozen=True)
class Arg:
    """One argument of a tool.

    ``type`` is a JSON-schema type name; ``entity`` is the kind of entity-table row the
    structured action mode may put in this argument; ``enum`` restricts string values.
    ``items`` is the JSON schema of an array's items (only for ``type="array"``).
    """

    name: str
    type: str
    entity: str
    description: str
    enum: tuple[str, ...] | None = None
    required: bool = True
    items: dict[str, Any] | None = None

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.items is not None:
            schema["items"] = self.items
        return schema

    def type_error(self, value: Any) -> str | None:
        """Return why ``value`` does not fit this argument, or None when it fits."""
        if not _is_json_type(value, self.type):
            return f"argument '{self.name}' must be of type {self.type}, got {_json_type_name(value)}"
        if self.type == "number" and isinstance(value, int) and abs(value) > sys.float_info.max:
            return f"argument '{self.name}' is too large for a number"
        if self.enum is not None and value not in self.enum:
            return f"argument '{self.name}' must be one of {list(self.enum)}, got {value!r}"
        item_type = (self.items or {}).get("type")
        if self.type == "array" and item_type in JSON_TYPES and item_type != "object":
            for index, element in enumerate(value):
                if not _is_json_type(element, item_type):
                    return (
                        f"argument '{self.name}' item {index} must be of type {item_type}, "
                        f"got {_json_type_name(element)}"
                    )
        return None


@dataclass(frozen=True)
class ToolResult:
    """What a tool implementation may return instead of a plain value.

    ``output`` is shown to the agent (a str as is, anything else as compact JSON);
    ``reveal`` lists ``(kind, value)`` entities the result makes available to the
    structured action mode.
    """

    output: Any
    reveal: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Tool:
    """A tool the agent can call.

    ``fn(world, **arguments)`` runs it against the episode's world state and returns a
    value or a :class:`ToolResult`; it raises :class:`ToolError` for domain errors.
    ``terminal`` tools end the episode when they succeed. ``latency_s`` is the simulated
    time the call takes (used for the time-savings metric).
    """

    name: str
    description: str
    args: tuple[Arg, ...]
    fn: Callable[..., Any] = field(compare=False, repr=False)
    terminal: bool = False
    latency_s: float = 0.5
    kind: str = "read"  # "read" | "write" | "generic": only documentation and replay use it
    checked: bool = True  # False: the tool binds and checks its own arguments (no schema check)

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {a.name: a.json_schema() for a in self.args},
                    "required": [a.name for a in self.args if a.required],
                    "additionalProperties": False,
                },
            },
        }

    @cached_property
    def arg_names(self) -> frozenset[str]:
        """The names of the tool's arguments."""
        return frozenset(a.name for a in self.args)

    def check_arguments(self, arguments: dict[str, Any]) -> str | None:
        """Return why ``arguments`` do not fit this tool's signature, or None (always None
        for a tool that is not ``checked``)."""
        if not self.checked:
            return None
        extra = arguments.keys() - self.arg_names
        if extra:
            return f"tool '{self.name}' has no argument(s) {sorted(extra)}; it takes {sorted(self.arg_names) or 'none'}"
        for arg in self.args:
            if arg.name not in arguments:
                if arg.required:
                    return f"tool '{self.name}' is missing required argument '{arg.name}'"
                continue
            problem = arg.type_error(arguments[arg.name])
            if problem is not None:
                return f"tool '{self.name}': {problem}"
        return None

    def normalize_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Checked arguments in canonical form (JSON numbers as floats), in declaration order;
        a tool that is not ``checked`` gets them as they are."""
        if not self.checked:
            return dict(arguments)
        return {a.name: _canonical(a, arguments[a.name]) for a in self.args if a.name in arguments}


def _canonical(arg: Arg, value: Any) -> Any:
    return float(value) if arg.type == "number" and isinstance(value, int) else value


def _is_json_type(value: Any, json_type: str) -> bool:
    """Whether ``value`` is of the JSON-schema type ``json_type`` (a bool is no number)."""
    if isinstance(value, bool) and json_type != "boolean":
        return False
    return isinstance(value, JSON_TYPES[json_type])


def _json_type_name(value: Any) -> str:
    for name, types in JSON_TYPES.items():
        if isinstance(value, types) and not (isinstance(value, bool) and name != "boolean"):
            return "integer" if name == "number" and isinstance(value, int) else name
    return "null" if value is None else type(value).__name__
