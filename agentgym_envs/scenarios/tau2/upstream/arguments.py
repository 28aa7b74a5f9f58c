"""How the arguments of a tau2 tool call are handled: ``"strict"`` or ``"upstream"``.

- ``"strict"`` (the default, right for RL): arguments are checked against the tool's JSON
  schema before the tool runs (names, required arguments, JSON types, enums, list items);
  a call that does not fit gets a clear error and changes nothing.
- ``"upstream"``: arguments are handled as upstream's toolkit handles them. Upstream's tools
  are plain Python methods of ``RetailTools`` / ``AirlineTools`` called with
  ``**arguments``; the environment turns any exception into ``"Error: <exception>"``. So an
  extra or missing argument gives Python's own ``TypeError`` text
  (``RetailTools.get_order_details() got an unexpected keyword argument 'extra'``), an
  ill-typed value goes into the tool's code as it is (``user_id=12345`` is simply not found;
  ``total_baggages="3"`` is stored as the string), and values are validated only where
  upstream's code builds a pydantic model from them (flights, passengers and payments,
  a new reservation, an address, a certificate), with pydantic's own error text.

The upstream mode needs ``pydantic`` (``pip install agentgym-envs[llm]``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, get_type_hints

from agentgym_envs.core.tools import Tool, ToolError

TOOL_ARGUMENTS = ("strict", "upstream")


def check_tool_arguments(mode: str) -> str:
    """``mode`` if it is a known argument handling, else a ValueError naming the choices;
    ``"upstream"`` also needs pydantic."""
    if mode not in TOOL_ARGUMENTS:
        raise ValueError(f"tool_arguments must be one of {list(TOOL_ARGUMENTS)}, got {mode!r}")
    if mode == "upstream":
        try:
            import pydantic  # noqa: F401
        except ImportError:
            raise ImportError("tool_arguments='upstream' needs pydantic: pip install 'agentgym-envs[llm]'") from None
    return mode


def binding_error(toolkit: str, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The ``TypeError`` text Python gives for ``<toolkit>().<tool>(**arguments)`` when the
    arguments do not bind to the method's parameters (``self`` then the tool's arguments,
    all required), or None when they bind."""
    function = f"{toolkit}.{tool.name}()"
    names = [arg.name for arg in tool.args]
    for key in arguments:  # Python reports the first offending keyword, in call order
        if key == "self":
            return f"{function} got multiple values for argument 'self'"
        if key not in names:
            return f"{function} got an unexpected keyword argument '{key}'"
    missing = [f"'{name}'" for name in names if name not in arguments]
    if not missing:
        return None
    if len(missing) == 1:
        listed = missing[0]
    elif len(missing) == 2:
        listed = " and ".join(missing)
    else:
        listed = ", ".join(missing[:-1]) + ", and " + missing[-1]
    plural = "s" if len(missing) > 1 else ""
    return f"{function} missing {len(missing)} required positional argument{plural}: {listed}"


def call_as_upstream(toolkit: str, tool: Tool, world: Any, arguments: Mapping[str, Any]) -> Any:
    """Run ``tool`` on ``world`` as upstream's environment runs a tool call: Python's binding
    errors, then the tool on the values as given; any exception is a :class:`ToolError`
    with the exception's text."""
    problem = binding_error(toolkit, tool, arguments)
    if problem is not None:
        raise ToolError(problem)
    try:
        return tool.fn(world, **arguments)
    except ToolError:
        raise
    except Exception as exc:  # upstream's get_response catches every exception alike
        raise ToolError(str(exc)) from None


def upstream_model(world: Any, model: str, record_class: type, values: Mapping[str, Any], fields: tuple[str, ...] = ()) -> dict[str, Any]:
    """``values`` as upstream's pydantic ``model`` (with ``record_class``'s fields, or only
    ``fields``) validates them when ``world`` handles arguments as upstream does: lax
    conversions (``"3"`` to 3 for an int), extra keys dropped, a :class:`ToolError` with
    pydantic's text when they do not fit. In strict mode ``values`` are returned as given
    (they were checked before the call)."""
    if getattr(world, "tool_arguments", "strict") != "upstream":
        return dict(values)
    from pydantic import ValidationError

    validator = _pydantic_model(model, record_class, fields)
    try:
        return dict(validator(**values))
    except ValidationError as exc:
        raise ToolError(str(exc)) from None


@functools.cache
def _pydantic_model(model: str, record_class: type, fields: tuple[str, ...]) -> Any:
    from pydantic import create_model

    hints = get_type_hints(record_class)
    definitions: dict[str, Any] = {}
    for field in dataclasses.fields(record_class):
        if fields and field.name not in fields:
            continue
        default = ... if field.default is dataclasses.MISSING else field.default
        definitions[field.name] = (hints[field.name], default)
    return create_model(model, **definitions)
