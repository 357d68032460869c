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


def as_columns(batch: Any, type_col: str, schema: Any) -> Any:
    """A clean Arrow batch (NaN already NULL) laid out as ``schema``: the type column as
    ``type``, absent attributes NULL, each column cast to its kind (ints to float64 with
    round-to-nearest, as Python's ``float(int)``)."""
    import pyarrow as pa

    names = batch.schema.names
    arrays = []
    for target in schema:
        column = type_col if target.name == "type" else target.name
        if column not in names:
            arrays.append(pa.nulls(batch.num_rows, target.type))
            continue
        array = batch.column(column)
        if array.type != target.type:
            array = array.cast(target.type, safe=not pa.types.is_floating(target.type))
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
