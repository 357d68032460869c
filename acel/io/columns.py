"""Events as Arrow columns: the layout of ``EventStream.arrow_batches`` (issue 23).

One column per attribute of the schema (``type`` included), in the schema's order:
int64, float64, string or bool after the attribute's kind (string for an attribute
without one: it is only ever NULL); NULL where an event lacks the attribute.

:class:`ColumnBlock`: the typed columns a native trend core reads straight from the
native reader (only the attributes the query reads, the type as a small code).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acel.io.native_protocol import (
    CELL_BOOL,
    CELL_FLOAT,
    CELL_INT,
    CELL_NULL,
    MAX_TYPE_CODES,
    SCAN_END,
    SCAN_NOT_SIMPLE,
    SCAN_PYTHON,
    NotSimple,
)
from acel.io.options import SourceOptions
from acel.io.sorting import BATCH
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


def as_columns(batch: Any, options: SourceOptions, schema: Any) -> Any:
    """A clean Arrow batch (NaN already NULL) laid out as ``schema``: the type column
    (``options.type_col``) as ``type``, absent attributes NULL, each column cast to its
    kind (ints to float64 with round-to-nearest, as Python's ``float(int)``)."""
    import pyarrow as pa

    type_col = options.type_col

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


# ------------------------------------------------------------------ typed column blocks

# A cell's kind in ColumnBlock (``kinds``: one byte a cell): CELL_NULL, CELL_INT,
# CELL_FLOAT, CELL_BOOL of acel.io.native_protocol, which the C reader and core share.


@dataclass(frozen=True)
class ColumnSpec:
    """The columns a native trend core reads (``papers/engine.md``, "Columns into the core").

    ``names[0]`` is ``type``, held as a code: the index of its value in the block's
    ``types`` list, which starts with ``type_names`` (the query's types) and grows with
    the other types met.  ``floats``: the attributes whose ints the reader makes floats
    (the schema's float attributes, as the dict path does).
    """

    names: tuple[str, ...]
    type_names: tuple[str, ...]
    floats: frozenset[str] = frozenset()

    def with_floats(self, floats: Iterable[str]) -> ColumnSpec:
        """The same columns, ints of ``floats`` read as floats."""
        return ColumnSpec(self.names, self.type_names, frozenset(floats))


@dataclass
class ColumnBlock:
    """Rows ``0 .. n-1`` of typed columns, column-major: ``kinds[c * cap + k]`` (a byte:
    NULL, int64, float64, bool) and ``vals`` (8 bytes a cell: the int64, the float64's bits
    or the bool).  The native reader fills them; the native core reads them in C."""

    spec: ColumnSpec
    types: list[bytes]
    cap: int
    kinds: bytearray = field(default_factory=bytearray)
    vals: bytearray = field(default_factory=bytearray)
    n: int = 0

    @classmethod
    def empty(cls, spec: ColumnSpec, types: list[bytes], cap: int) -> ColumnBlock:
        """A block of ``cap`` rows, none filled."""
        width = len(spec.names)
        return cls(spec, types, cap, bytearray(width * cap), bytearray(8 * width * cap))

    def __len__(self) -> int:
        return self.n

    def row(self, k: int) -> dict[str, Any]:
        """Row ``k`` as the attribute map the dict path would give the engine (its NULLs
        left out: the engine reads absent and NULL alike)."""
        cap = self.cap
        out: dict[str, Any] = {}
        for c, name in enumerate(self.spec.names):
            at = c * cap + k
            kind = self.kinds[at]
            if kind == CELL_NULL:
                continue
            raw = self.vals[8 * at : 8 * at + 8]
            if c == 0:
                out[name] = self.types[struct.unpack("=q", raw)[0]].decode()
            elif kind == CELL_INT:
                out[name] = struct.unpack("=q", raw)[0]
            elif kind == CELL_FLOAT:
                out[name] = struct.unpack("=d", raw)[0]
            else:
                out[name] = raw[0] != 0
        return out

    def rows(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        """Rows ``start .. stop-1`` as attribute maps (see :meth:`row`)."""
        return [self.row(k) for k in range(start, self.n if stop is None else stop)]


_INT64 = (-(2**63), 2**63 - 1)


def _cell(value: Any, as_float: bool) -> tuple[int, bytes] | None:
    """A value as a cell (kind, 8 bytes); ``None``: no column holds it (a string, an int
    beyond int64, anything else)."""
    if value is None:
        return CELL_NULL, bytes(8)
    if type(value) is bool:
        return CELL_BOOL, struct.pack("=q", int(value))
    if type(value) is int:
        if as_float:
            return CELL_FLOAT, struct.pack("=d", float(value))
        low, high = _INT64
        return (CELL_INT, struct.pack("=q", value)) if low <= value <= high else None
    if type(value) is float:
        return (CELL_FLOAT, struct.pack("=d", value)) if value == value else (CELL_NULL, bytes(8))
    return None


def blocks_of_rows(spec: ColumnSpec, batches: Iterable[list[dict[str, Any]]],
                   cap: int = 8192) -> Iterator[ColumnBlock | list[dict[str, Any]]]:
    """Attribute maps as the native reader's column blocks (pure Python: the reference of
    :func:`column_blocks` and the adapter for streams without it); an event no
    column holds comes alone, as a one-event list, in its place."""
    types = [name.encode() for name in spec.type_names]
    floats = [name in spec.floats for name in spec.names]
    block = ColumnBlock.empty(spec, types, cap)
    for batch in batches:
        for attrs in batch:
            cells = _row_cells(spec, attrs, types, floats)
            if cells is None:
                if block.n:
                    yield block
                    block = ColumnBlock.empty(spec, types, cap)
                yield [attrs]
                continue
            for c, (kind, raw) in enumerate(cells):
                at = c * cap + block.n
                block.kinds[at] = kind
                block.vals[8 * at : 8 * at + 8] = raw
            block.n += 1
            if block.n == cap:
                yield block
                block = ColumnBlock.empty(spec, types, cap)
    if block.n:
        yield block


def _row_cells(spec: ColumnSpec, attrs: dict[str, Any], types: list[bytes],
               floats: list[bool]) -> list[tuple[int, bytes]] | None:
    """The cells of one event (``None``: it must go as its attribute map; then its type is
    not added to ``types``)."""
    cells = [(CELL_NULL, bytes(8))]
    for c in range(1, len(spec.names)):
        cell = _cell(attrs.get(spec.names[c]), floats[c])
        if cell is None:
            return None
        cells.append(cell)
    kind = attrs.get(spec.names[0])
    if type(kind) is str:
        name = kind.encode()
        if name not in types:
            if len(types) >= MAX_TYPE_CODES:
                return None
            types.append(name)
        cells[0] = (CELL_INT, struct.pack("=q", types.index(name)))
    elif kind is not None:
        return None
    return cells


def arrow_blocks(spec: ColumnSpec, batches: Iterable[Any]) -> Iterator[ColumnBlock | list[dict[str, Any]]]:
    """Record batches of ``EventStream.arrow_batches`` (NaN already NULL, ints of float
    attributes already floats) as column blocks, one a batch, built column-wise by Arrow
    (no Python object per event); a batch with a string in a column other than the type
    comes as its attribute maps."""
    types = [name.encode() for name in spec.type_names]
    for batch in batches:
        block = _arrow_block(spec, batch, types)
        if block is None:
            yield batch.to_pylist()
        elif block.n:
            yield block


def _arrow_block(spec: ColumnSpec, batch: Any, types: list[bytes]) -> ColumnBlock | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    block = ColumnBlock.empty(spec, types, n)
    block.n = n
    for c, name in enumerate(spec.names):
        array = batch.column(name)
        if c == 0:
            seen = [v.encode() for v in pc.unique(array.drop_null()).to_pylist()]
            types.extend(v for v in seen if v not in types)
            codes = pc.index_in(array, value_set=pa.array([t.decode() for t in types]))
            kinds = pc.if_else(pc.is_valid(codes), _U8[CELL_INT], _U8[CELL_NULL])
            values = codes.fill_null(0).cast(pa.int64())
        elif pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            if array.null_count != n:
                return None
            kinds, values = pa.nulls(n, pa.uint8()).fill_null(0), pa.nulls(n, pa.int64()).fill_null(0)
        elif pa.types.is_boolean(array.type):
            kinds = pc.if_else(pc.is_valid(array), _U8[CELL_BOOL], _U8[CELL_NULL])
            values = array.fill_null(False).cast(pa.int64())
        elif pa.types.is_floating(array.type):
            valid = pc.and_(pc.is_valid(array), pc.invert(pc.is_nan(array).fill_null(True)))
            kinds = pc.if_else(valid, _U8[CELL_FLOAT], _U8[CELL_NULL])
            values = array.cast(pa.float64()).fill_null(0.0)
        else:
            kinds = pc.if_else(pc.is_valid(array), _U8[CELL_INT], _U8[CELL_NULL])
            values = array.cast(pa.int64()).fill_null(0)
        block.kinds[c * n : (c + 1) * n] = _raw(kinds, 1)
        block.vals[8 * c * n : 8 * (c + 1) * n] = _raw(values, 8)
    return block


def _raw(array: Any, width: int) -> bytes:
    """The values of a fixed-width Arrow array without NULLs, as bytes."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    start = array.offset * width
    return array.buffers()[1].to_pybytes()[start : start + len(array) * width]


class _Uint8:
    """``pyarrow`` uint8 scalars, made on first use (pyarrow is imported lazily)."""

    def __getitem__(self, value: int) -> Any:
        import pyarrow as pa

        return pa.scalar(value, pa.uint8())


_U8 = _Uint8()


def column_blocks(
    native: Any,
    chunks: Iterable[bytes],
    path: Path,
    spec: ColumnSpec,
    on_row: Callable[[int, int, bytes], tuple[dict[str, Any] | None, bool]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
    cap: int = BATCH,
) -> Iterator[ColumnBlock | list[dict[str, Any]]]:
    """The C scanner's event pass (:func:`acel.io.record_pass.events`) over ``chunks``, the
    blocks of ``path``, into typed columns (``papers/engine.md``, "Columns into the core"):
    blocks of at most ``cap`` rows holding ``spec``'s attributes, filled in C without a
    Python object per event; a line the scanner leaves (or whose value no column holds: a
    string outside the type column) comes, in its place in the stream, as a one-event list
    made by ``on_row``, exactly as ``events`` gives it (:func:`blocks_of_rows` is the
    pure-Python reference)."""
    keys = tuple(name.encode() for name in spec.names)
    floats = bytes(1 if name in spec.floats else 0 for name in spec.names)
    types = [name.encode() for name in spec.type_names]
    block = ColumnBlock.empty(spec, types, cap)
    index, number = (2 if csv else 1), 0
    for data in chunks:
        pos = 0
        while True:
            status, pos, after, index, number, block.n = native.columns(
                data, pos, index, number, keys, floats, types, block.kinds, block.vals, cap, block.n, csv
            )
            if status == SCAN_NOT_SIMPLE:
                raise NotSimple(f"{path}: line {index}")
            if status == SCAN_END:
                break
            if block.n:
                yield block
                block = ColumnBlock.empty(spec, types, cap)
            if status == SCAN_PYTHON:
                event, _known = on_row(number, index, data[pos:after])
                if event is not None:
                    yield [event]
                pos, index = after, index + 1
    if block.n:
        yield block
