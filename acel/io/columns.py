"""Events as Arrow columns: the layout of ``EventStream.arrow_batches`` (issue 23).

One column per attribute of the schema (``type`` included), in the schema's order:
int64, float64, string or bool after the attribute's kind (string for an attribute
without one: it is only ever NULL); NULL where an event lacks the attribute.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from acel.lang.schema import Schema


def arrow_schema(schema: Schema) -> Any:
    """The ``pyarrow.Schema`` of a stream's events (see the module doc)."""
    import pyarrow as pa

    types = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
    kinds = dict(schema.kinds)
    return pa.schema(
        [(name, types[kinds.get(name, "str")] if name != "type" else pa.string())
         for name in schema.all_attributes()]
    )


def as_record_batches(batches: Iterable[list[dict[str, Any]]], schema: Any) -> Iterator[Any]:
    """Batches of attribute maps as record batches of ``schema`` (absent or ``None``: NULL)."""
    import pyarrow as pa

    for batch in batches:
        yield pa.RecordBatch.from_pylist(batch, schema=schema)
