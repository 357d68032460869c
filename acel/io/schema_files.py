"""Schema files: ``{"types": {T: [a, ...]}, "kinds": {a: kind}}`` (or a bare ``{T: [a, ...]}``)."""

from __future__ import annotations

import json
from pathlib import Path

from acel.io.values import KINDS
from acel.lang.errors import DataError
from acel.lang.schema import Schema


def read_schema(path: str | Path) -> Schema:
    """A schema file: ``{"types": {T: [a, ...]}, "kinds": {a: kind}}`` or ``{T: [a, ...]}``."""
    from acel.io.formats import read_text_file

    try:
        data = json.loads(read_text_file(path))
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: bad JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    if not isinstance(data, dict):
        raise DataError(f'{path}: a schema is {{"types": {{TYPE: [attribute, ...]}}, "kinds": {{...}}}}')
    types = data.get("types", data)
    if not isinstance(types, dict) or not all(
        isinstance(attrs, list) and all(isinstance(a, str) for a in attrs) for attrs in types.values()
    ):
        raise DataError(f"{path}: each type must map to a list of attribute names")
    try:
        schema = Schema.from_json(data)
    except ValueError as error:
        raise DataError(f"{path}: {error}") from None
    bad = {a: k for a, k in schema.kinds if k not in KINDS}
    if bad:
        attr, kind = next(iter(bad.items()))
        raise DataError(f"{path}: attribute {attr!r} has kind {kind!r}; kinds are {', '.join(KINDS)}")
    return schema


def write_schema(schema: Schema, path: str | Path) -> None:
    """Write a schema file that :func:`read_schema` reads back."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(schema.to_json(), handle, indent=2, sort_keys=True)
        handle.write("\n")
