"""The native readers' path: the C scanner ``acel.io._native_reader`` driven over a file.

JSON Lines: the scanner reads the plain flat objects that make up nearly every event
file; each other line (nested values, escapes, long integers, a key twice, bad UTF-8,
not an object) is handed, with its row and line numbers, to the pure-Python reader,
which stays the reference and reports every problem with today's message.  CSV: the
scanner reads files whose lines are all simple (no quotes, one cell a column, each cell
of its column's kind); at the first other line the whole file goes to the Python reader
(:class:`NotSimple`).  ``ACEL_NATIVE`` chooses the path (issue 23, ``papers/io.md``,
"The native readers").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from acel.io.columns import ColumnBlock, ColumnSpec
from acel.io.formats import BATCH, BOM, line_row
from acel.io.native_switch import wanted
from acel.io.records import Row

BLOCK = 1 << 20
"""Bytes read at a time (whole lines are scanned, the rest waits for the next block)."""

CSV_KINDS = {"str": "s", "int": "i", "float": "d", "bool": "b"}
"""A column kind as the scanner's code."""


class NotSimple(Exception):
    """A CSV line the scanner does not read: the Python reader reads the file."""


def csv_spec(header: Sequence[str], kinds: Sequence[str]) -> tuple[tuple[bytes, ...], bytes]:
    """The scanner's description of a CSV file's columns."""
    return tuple(h.encode() for h in header), "".join(CSV_KINDS[k] for k in kinds).encode()


def csv_kinds(native: Any, path: Path, width: int) -> tuple[list[str], set[int]]:
    """Each column's kind, as :class:`acel.io.readers.csv._ColumnKind` infers it over the whole
    column, and the columns it calls mixed (text beside numbers or bools); ``NotSimple``
    for a file the scanner does not read."""
    flags = bytearray(b"\x01\x01\x01\x00\x00" * width)
    for data in blocks(path, header=True):
        if native.csv_kinds(data, width, flags):
            raise NotSimple(str(path))
    kinds, mixed = [], set()
    for i in range(width):
        is_int, is_float, is_bool, numeric, typed = flags[5 * i : 5 * i + 5]
        kinds.append("int" if is_int else "float" if is_float and numeric else "bool" if is_bool else "str")
        if kinds[-1] == "str" and typed:
            mixed.add(i)
    return kinds, mixed


def csv_data_start(path: Path) -> bytes:
    """The header line of a CSV file (a BOM dropped), as the scanner skips it."""
    with open(path, "rb") as handle:
        first = handle.readline()
    return first[3:] if first.startswith(BOM) else first


def reader() -> Any | None:
    """The C scanner when ``ACEL_NATIVE`` wants it and it was built, else ``None``."""
    import importlib

    try:
        module: Any = importlib.import_module("acel.io._native_reader")
    except ImportError:
        module = None
    why = "the C reader acel.io._native_reader is not built (pip install -e . needs a C compiler)"
    return module if wanted(module is not None, why) else None


def is_lines_file(path: Path) -> bool:
    """Whether a ``.json``/``.jsonl`` file holds lines (not one JSON array, read as a whole)."""
    with open(path, "rb") as handle:
        head = handle.read(64)
    stripped = head[3:] if head.startswith(BOM) else head
    return not stripped.lstrip().startswith(b"[")


def blocks(path: Path, header: bool = False) -> Iterator[bytes]:
    """The file in blocks of whole lines (the last may lack its newline); a BOM dropped,
    and with ``header`` the first line too."""
    with open(path, "rb") as handle:
        if header:
            handle.readline()
        rest = handle.read(BLOCK)
        if not header and rest.startswith(BOM):
            rest = rest[3:]
        while True:
            chunk = handle.read(BLOCK)
            if not chunk:
                if rest:
                    yield rest
                return
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
                data = data[cut:]
            rest = data


def first_pass(
    native: Any,
    path: Path,
    type_col: str,
    time_col: str | None,
    watch: Sequence[str],
    order: Any,
    on_row: Callable[[int, int, bytes], bool],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> int:
    """The schema pass: lines of a known shape are counted and their order noted in C
    (into ``order``, an ``acel.io.row_passes.Order``); every other line goes to ``on_row``,
    which says whether its shape is now known.  Returns how many lines C counted.  With
    ``csv`` (:func:`csv_spec`) the lines are CSV records after the header."""
    shapes: dict[bytes, None] = {}
    type_key = type_col.encode()
    time_key = time_col.encode() if time_col is not None else None
    watch_keys = tuple(w.encode() for w in watch)
    names = tuple(watch)
    facts = order.facts
    index, number, counted = (2 if csv else 1), 0, 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, n, order.last_key, facts.sorted_by_time, shape = (
                native.first_pass(
                    data, pos, index, number, type_key, time_key, watch_keys, names, shapes,
                    order.last, facts.monotone, order.last_key, facts.sorted_by_time, csv,
                )
            )
            counted += n
            if status == 0:
                break
            if status == 3:
                raise NotSimple(f"{path}: line {index}")
            if on_row(number, index, data[pos:after]) and shape is not None:
                shapes[shape] = None
            pos, index = after, index + 1
    return counted


def json_row(number: int, index: int, line: bytes) -> Row:
    """A JSON Lines line the scanner left, read by the Python reader."""
    return line_row(number, index, line)


def events(
    native: Any,
    path: Path,
    floats: Sequence[str],
    on_row: Callable[[int, int, bytes], tuple[dict[str, Any] | None, bool]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
    *,
    shapes: dict[bytes, None] | None = None,
    drop_null: bool = False,
    simple: bool = False,
) -> Iterator[list[dict[str, Any]]]:
    """The event pass (a trusted, plain stream whose type column is ``type``): one dict per
    line, ints of ``floats`` attributes as floats, in batches of :data:`BATCH`; a line the
    scanner leaves is turned into its event (``None``: none) by ``on_row``, which says too
    whether later lines of its shape may be converted by the scanner alone.  With
    ``shapes`` (a schema's single pass), only lines of such shapes are, their NULLs
    dropped with ``drop_null``.  ``simple``: every CSV line is known to be simple, so one
    whose cell is not of its column's kind goes to ``on_row`` too."""
    float_keys = tuple(f.encode() for f in floats)
    out: list[dict[str, Any]] = []
    index, number = (2 if csv else 1), 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, got, shape = native.emit(
                data, pos, index, number, float_keys, BATCH - len(out), csv, shapes, b"type", drop_null
            )
            if out:
                out.extend(got)
            else:
                out = got
            if status == 3 and not simple:
                raise NotSimple(f"{path}: line {index}")
            if status in (1, 3):
                event, known = on_row(number, index, data[pos:after])
                if event is not None:
                    out.append(event)
                if known and shape is not None and shapes is not None:
                    shapes[shape] = None
                pos, index = after, index + 1
            if len(out) >= BATCH:
                yield out
                out = []
            if status == 0:
                break
    if out:
        yield out


def column_blocks(
    native: Any,
    path: Path,
    spec: ColumnSpec,
    on_row: Callable[[int, int, bytes], tuple[dict[str, Any] | None, bool]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> Iterator[ColumnBlock | list[dict[str, Any]]]:
    """The event pass of :func:`events` into typed columns (``papers/engine.md``, "Columns
    into the core"): blocks of at most :data:`BATCH` rows holding ``spec``'s attributes,
    filled in C without a Python object per event; a line the scanner leaves (or whose
    value no column holds: a string outside the type column) comes, in its place in the
    stream, as a one-event list made by ``on_row``, exactly as :func:`events` gives it."""
    keys = tuple(name.encode() for name in spec.names)
    floats = bytes(1 if name in spec.floats else 0 for name in spec.names)
    types = [name.encode() for name in spec.type_names]
    block = ColumnBlock.empty(spec, types, BATCH)
    index, number = (2 if csv else 1), 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, block.n = native.columns(
                data, pos, index, number, keys, floats, types, block.kinds, block.vals, BATCH, block.n, csv
            )
            if status == 3:
                raise NotSimple(f"{path}: line {index}")
            if status == 0:
                break
            if block.n:
                yield block
                block = ColumnBlock.empty(spec, types, BATCH)
            if status == 1:
                event, _known = on_row(number, index, data[pos:after])
                if event is not None:
                    yield [event]
                pos, index = after, index + 1
    if block.n:
        yield block
