"""The JSON Schema of a release file and of ``site.toml``, made from the models, for editors:
taplo (VS Code's Even Better TOML) completes and checks a TOML file against the schema its
``#:schema`` line names. Committed as ``entries/schema/*.json``; ``infrafeed schema`` prints it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .files import RELEASE_SCHEMA
from .models import Release, Site


class _TomlSchema(GenerateJsonSchema):
    """TOML has no null: an optional key is one left out, so it is given no null type and no
    null default, which an editor would offer to write. A table's default is left to its keys'
    own defaults, which hold no null either."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if "default" in schema and isinstance(schema["default"], BaseModel | None):
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)


def json_schema(model: type[BaseModel]) -> str:
    """The JSON Schema of ``model`` as a file's text: keys sorted, so the same on any machine."""
    schema = model.model_json_schema(schema_generator=_TomlSchema)
    return json.dumps(schema, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def release_schema() -> str:
    return json_schema(Release)


def site_schema() -> str:
    return json_schema(Site)


def schema_line(entries: Path) -> str:
    """The first line of a release file written into a year folder of ``entries``: the
    ``#:schema`` comment that names the release schema to editors, relative to that folder.
    Empty when ``entries`` has no schema: taplo refuses a file whose line names a missing one."""
    if not os.path.isfile(entries / RELEASE_SCHEMA):  # noqa: PTH113 (Path.is_file raises, too long)
        return ""
    return f"#:schema ../{RELEASE_SCHEMA}\n"
