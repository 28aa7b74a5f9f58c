"""Typed database records: dataclasses that load from, and dump to, upstream's JSON schema.

A record class lists its fields in the order of upstream's pydantic model, so
:meth:`Record.to_dict` gives what ``model_dump()`` gives (tool outputs depend on that order).
Loading behaves like pydantic's lax validation for these schemas: missing optional fields
take their default (``None``), extra keys are dropped, ints become floats in ``float`` fields,
integral floats become ints in ``int`` fields and ISO strings become ``date`` /
``datetime`` values (dumped as such: JSON writes them with ``str``, as upstream); anything else that does not fit raises
:class:`RecordFormatError`. Dumping never fails: a value a tool stored unchecked (upstream
argument handling, e.g. a string in an ``int`` field) is dumped as it is, as pydantic does.

A union of record kinds (payment methods, flight-date statuses) is a base class with
``TAG_FIELD`` set; each kind subclasses it with ``tags=(...)`` and loading the base picks
the kind from the tag field's value.
"""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeVar, get_args, get_origin, get_type_hints

R = TypeVar("R", bound="Record")
_Convert = Callable[[Any], Any]


class RecordFormatError(ValueError):
    """A JSON value does not fit a record's schema; the message names the field."""


class Record:
    """Base class of the database records (subclasses are ``@dataclass`` classes)."""

    TAG_FIELD: ClassVar[str | None] = None
    _variants: ClassVar[dict[str, type[Record]]]

    def __init_subclass__(cls, tags: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.TAG_FIELD is not None and "_variants" not in cls.__dict__ and not tags:
            cls._variants = {}  # cls is the base of a union of record kinds
        for tag in tags:
            cls._variants[tag] = cls

    @classmethod
    def from_dict(cls: type[R], data: Any) -> R:
        """Build a record (of the right kind, for a union base) from its JSON object."""
        if not isinstance(data, dict):
            raise RecordFormatError(f"expected an object for {cls.__name__}, got {_json_kind(data)}")
        if "_variants" in cls.__dict__:
            tag = data.get(cls.TAG_FIELD)
            kind = cls._variants.get(tag) if isinstance(tag, str) else None
            if kind is None:
                raise RecordFormatError(
                    f"{cls.__name__}.{cls.TAG_FIELD} must be one of {sorted(cls._variants)}, got {tag!r}"
                )
            return kind.from_dict(data)  # type: ignore[return-value]
        values = {}
        for name, load, _, required in _plan(cls):
            if name not in data:
                if required:
                    raise RecordFormatError(f"{cls.__name__}: missing field '{name}'")
                continue
            try:
                values[name] = load(data[name])
            except RecordFormatError as exc:
                raise RecordFormatError(f"{cls.__name__}.{name}: {exc}") from None
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The record as upstream's ``model_dump()`` gives it (fields in model order)."""
        return {name: dump(getattr(self, name)) for name, _, dump, _ in _plan(type(self))}


_PLANS: dict[type, list[tuple[str, _Convert, _Convert, bool]]] = {}


def _plan(cls: type) -> list[tuple[str, _Convert, _Convert, bool]]:
    """Per field of ``cls``: name, loader, dumper, whether the field is required."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = get_type_hints(cls)
        plan = []
        for f in dataclasses.fields(cls):
            load, dump = _converters(hints[f.name])
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            plan.append((f.name, load, dump, required))
        _PLANS[cls] = plan
    return plan


def _identity(value: Any) -> Any:
    return value


def _converters(tp: Any) -> tuple[_Convert, _Convert]:
    """A (load, dump) pair of functions for values annotated with type ``tp``."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in args if a is not type(None)]  # only ``X | None`` is used
        load, dump = _converters(inner)
        return (lambda v: None if v is None else load(v)), (lambda v: None if v is None else dump(v))
    if origin is list:
        load, dump = _converters(args[0])
        return (
            lambda v: [load(x) for x in _expect(v, list, "an array")],
            lambda v: [dump(x) for x in v] if isinstance(v, list) else v,
        )
    if origin is dict:
        load, dump = _converters(args[1])
        return (
            lambda v: {
                _expect(k, str, "a string key"): load(x) for k, x in _expect(v, dict, "an object").items()
            },
            lambda v: {k: dump(x) for k, x in v.items()} if isinstance(v, dict) else v,
        )
    if origin is Literal:
        return _literal(args), _identity
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp.from_dict, lambda v: v.to_dict() if isinstance(v, Record) else v
    scalar = {
        str: _load_str,
        float: _load_float,
        int: _load_int,
        bool: _load_bool,
        datetime.date: _load_date,
        datetime.datetime: _load_datetime,
    }.get(tp)
    if scalar is None:
        raise TypeError(f"unsupported record field type {tp!r}")
    return scalar, _identity


def _expect(value: Any, kind: type, name: str) -> Any:
    if not isinstance(value, kind):
        raise RecordFormatError(f"expected {name}, got {_json_kind(value)}")
    return value


def _load_str(value: Any) -> str:
    return _expect(value, str, "a string")


def _load_bool(value: Any) -> bool:
    return _expect(value, bool, "a boolean")


def _load_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordFormatError(f"expected a number, got {_json_kind(value)}")
    return float(value)


def _load_int(value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(f"expected an integer, got {_json_kind(value)}")
    return value


def _load_date(value: Any) -> datetime.date:
    if isinstance(value, datetime.datetime):
        raise RecordFormatError(f"expected a date, got the date and time {value}")
    if isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(_expect(value, str, "a date string"))
    except ValueError:
        raise RecordFormatError(f"expected a date (YYYY-MM-DD), got {value!r}") from None


def _load_datetime(value: Any) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value
    try:
        return datetime.datetime.fromisoformat(_expect(value, str, "a date-time string"))
    except ValueError:
        raise RecordFormatError(f"expected a date and time (YYYY-MM-DDTHH:MM:SS), got {value!r}") from None


def _literal(allowed: tuple[Any, ...]) -> _Convert:
    def load(value: Any) -> Any:
        if value not in allowed:
            raise RecordFormatError(f"expected one of {list(allowed)}, got {value!r}")
        return value

    return load


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return _JSON_KINDS.get(type(value), f"a {type(value).__name__}")


_JSON_KINDS: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
}
