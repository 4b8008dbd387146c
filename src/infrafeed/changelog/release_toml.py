"""Write a release as the TOML of a release file, in the layout people write by hand.

Driven by the models' fields, so a field added to the schema is written too.
Fields left at their default (``None``, an empty array) are omitted.
"""

from __future__ import annotations

import datetime as dt
import json

from pydantic import BaseModel

from ..source.models import Release


def dump_release(release: Release) -> str:
    lines: list[str] = []
    _table(release, "", lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(model: BaseModel, path: str, lines: list[str]) -> None:
    tables: list[tuple[str, BaseModel]] = []
    arrays: list[tuple[str, tuple[BaseModel, ...]]] = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if value is None or value == () or (not info.is_required() and value == info.default):
            continue
        if isinstance(value, BaseModel):
            tables.append((name, value))
        elif isinstance(value, tuple) and isinstance(value[0], BaseModel):
            arrays.append((name, value))
        else:
            lines.append(f"{name} = {_value(value)}")
    # TOML: a table's own keys come before its sub-tables.
    for name, sub in tables:
        lines += ["", f"[{path}{name}]"]
        _table(sub, f"{path}{name}.", lines)
    for name, items in arrays:
        for item in items:
            lines += ["", f"[[{path}{name}]]"]
            _table(item, f"{path}{name}.", lines)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # A TOML basic string: the models refuse every control character but
        # tab and line breaks, and for what remains JSON's escapes are TOML's.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            # An array of rows (a table's cells): one row per line.
            return "[\n" + "".join(f"  {_value(row)},\n" for row in value) + "]"
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")
