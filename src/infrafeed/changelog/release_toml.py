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
    return "\n".join(_table(release, "")).lstrip("\n") + "\n"


def _table(model: BaseModel, path: str) -> list[str]:
    lines: list[str] = []
    # TOML: a table's own keys come before its sub-tables, and those before arrays of tables.
    tables: list[tuple[str, str, BaseModel]] = []  # header, key, table
    arrays: list[tuple[str, str, BaseModel]] = []
    for name, info in type(model).model_fields.items():
        value, key = getattr(model, name), f"{path}{name}"
        if value is None or value == () or (not info.is_required() and value == info.default):
            continue
        if isinstance(value, BaseModel):
            tables.append((f"[{key}]", key, value))
        elif isinstance(value, tuple) and isinstance(value[0], BaseModel):
            arrays += [(f"[[{key}]]", key, item) for item in value]
        else:
            lines.append(f"{name} = {_value(value)}")
    for header, key, table in tables + arrays:
        lines += ["", header, *_table(table, f"{key}.")]
    return lines


def _value(value: object) -> str:
    # TOML's booleans, integers and basic strings are JSON's: the models refuse every
    # control character but tab and line breaks, and for what remains JSON's escapes are TOML's.
    if isinstance(value, bool | int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        # An array of rows (a table's cells): one row per line.
        return "[\n" + "".join(f"  {_value(row)},\n" for row in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")
