"""CSV event files (spec §9; ``papers/io.md``): a header names the columns, each cell takes
its column's kind (the schema's, else the one the whole column shows).

A file whose lines are all simple (no quotes, one line per record) goes through the C
scanner (:mod:`acel.io.native_scan`); any other is read by Python's ``csv`` module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import acel.io.native_scan as native_scan
from acel.io.formats import BATCH, BOM
from acel.io.options import SourceOptions
from acel.io.readers.registry import Reader, register
from acel.io.record_pass import csv_line_row, csv_spec, parse_cells
from acel.io.records import Row, with_time_column
from acel.io.row_passes import (
    checked_pass,
    csv_kinds,
    native_given_stream,
    open_kinds,
    require_columns,
    rows_stream,
    scanned_csv_stream,
)
from acel.io.stream import EventStream
from acel.io.values import MAX_ATTRIBUTES, too_many_attributes
from acel.lang.errors import DataError
from acel.lang.schema import Schema

# ------------------------------------------------------------------ the Python reader


def csv_header(path: str | Path) -> list[str]:
    """The header of a CSV file, checked (empty or duplicate names are errors)."""
    import csv  # here: a JSON Lines run never loads it (start-up, issue 23)

    source = str(path)
    with _open_text(path) as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as error:
            raise DataError(f"{source}: line 1: {error}") from None
    if header is None:
        raise DataError(f"{source}: empty CSV file (a header line naming the columns is needed)")
    if len(header) > MAX_ATTRIBUTES + 1:
        raise DataError(f"{source}: line 1: {too_many_attributes(len(header) - 1, 'the header')}")
    header = [h.strip() for h in header]
    empty = [i + 1 for i, h in enumerate(header) if not h]
    if empty:
        raise DataError(f"{source}: line 1: empty column name in the header at position {empty[0]}")
    twice = [name for name, count in Counter(header).items() if count > 1]  # linear (issue 24 §5)
    if twice:
        raise DataError(f"{source}: line 1: duplicate column name {min(twice)!r} in the header")
    return header

def csv_cells(path: str | Path, width: int) -> Iterator[list[tuple[int, int, list[str] | str]]]:
    """The data records of a CSV file as ``(row, line, cells)`` in batches.

    ``cells`` is a failure message instead for a record with the wrong number
    of fields; an unclosed quote ends the file with a :class:`DataError`
    naming the line where the quoted field starts.
    """
    import csv  # here: a JSON Lines run never loads it (start-up, issue 23)

    source = str(path)
    with _open_text(path) as handle:
        reader = csv.reader(handle, strict=True)
        batch: list[tuple[int, int, list[str] | str]] = []
        number = 0
        last_line = 1
        try:
            next(reader, None)
            last_line = reader.line_num
            for cells in reader:
                if not cells:
                    last_line = reader.line_num
                    continue
                number += 1
                line = reader.line_num
                if len(cells) != width:
                    batch.append((number, line, f"{len(cells)} fields, but the header has {width}"))
                else:
                    batch.append((number, line, cells))
                last_line = line
                if len(batch) >= BATCH:
                    yield batch
                    batch = []
        except csv.Error as error:
            message = str(error)
            if "unexpected end of data" in message or "EOF" in message:
                raise DataError(
                    f"{source}: line {last_line + 1}: a quoted field is never closed "
                    "(an unmatched '\"')"
                ) from None
            raise DataError(f"{source}: line {reader.line_num}: {message}") from None
        if batch:
            yield batch

class _TextLines:
    """The lines of a file decoded one by one (a BOM dropped), for ``csv.reader``.

    A line that is not UTF-8 raises :class:`DataError` with its physical line
    number (a text handle decodes ahead in blocks, so its error would come
    while reading an earlier, good line).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.handle = open(path, "rb")
        self.line = 0

    def __enter__(self) -> _TextLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def __iter__(self) -> Iterator[str]:
        for raw in self.handle:
            self.line += 1
            if self.line == 1 and raw.startswith(BOM):
                raw = raw[3:]
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(
                    f"{self.path}: line {self.line}: not UTF-8 text (byte {error.start + 1} "
                    "of the line); save the file as UTF-8"
                ) from None

def _open_text(path: str | Path) -> _TextLines:
    return _TextLines(path)


# ------------------------------------------------------------------ the reader


class CsvReader(Reader):
    """``.csv``: a header line, then one record a line (quoted fields may span lines)."""

    name = "csv"
    suffixes = (".csv",)
    spark_format = "csv"
    spark_options = (("header", True), ("inferSchema", True))

    def open(self, path: Path, options: SourceOptions) -> EventStream:
        return csv_stream(path, options)

    def rows(self, path: Path) -> Iterator[list[Row]]:
        header = csv_header(path)
        return _csv_rows(path, header, ["str"] * len(header))

    def native(self) -> Any | None:
        return native_scan.reader()


register(CsvReader())




class _ColumnKind:
    """The incremental form of :func:`acel.io.values.infer_cell_kind`."""

    __slots__ = ("is_int", "is_float", "is_bool", "numeric", "typed")

    def __init__(self) -> None:
        self.is_int = self.is_float = self.is_bool = True
        self.numeric = self.typed = False

    def add(self, raw: str) -> None:
        from acel.io.values import _BOOL, _FLOAT, _INT, _SPECIAL_FLOAT

        cell = raw.strip()
        number, truth = _FLOAT.fullmatch(cell) is not None, cell.lower() in _BOOL
        if number or truth:
            self.typed = True
        if self.is_int and not _INT.fullmatch(cell):
            self.is_int = False
        if self.is_float:
            if number:
                self.numeric = True
            elif not _SPECIAL_FLOAT.fullmatch(cell):
                self.is_float = False
        if self.is_bool and not truth:
            self.is_bool = False

    def mixed(self) -> bool:
        """Text beside numbers or bools: no kind reads every cell (issue 37)."""
        return self.typed and self.kind() == "str"

    def kind(self) -> str:
        if self.is_int:
            return "int"
        if self.is_float and self.numeric:
            return "float"
        if self.is_bool:
            return "bool"
        return "str"


def csv_stream(path: Path, options: SourceOptions) -> EventStream:
    """CSV: cells take their column's kind (the schema's, else inferred over the whole column).

    Without a schema, the columns' check, the scanner's choice and its passes are one call
    (:func:`acel.io.record_pass.scanned_csv_stream`: the walk of one event, issue 34)."""
    header = csv_header(path)
    try:
        if options.schema is None:
            stream = scanned_csv_stream(
                native_scan.reader, path, header, options, one_line=_one_line_header(path, header),
                refuse=_refuse_mixed, rows=_csv_rows, recheck=checked_pass,
            )
            if stream is not None:
                return stream
        else:
            require_columns(str(path), header, options)
            native = native_scan.reader()
            if native is not None and options.type_col == "type" and not open_kinds(options.schema):
                return _native_csv_given(path, native, header, options, options.schema)
    except native_scan.NotSimple:
        pass  # the Python reader reads the file (and reports what is wrong with it)
    return _python_csv_stream(path, header, options)


def _python_csv_stream(path: Path, header: list[str], options: SourceOptions) -> EventStream:
    """A CSV file read by Python alone: each column's kind inferred over the whole column."""
    type_col, time_col, schema = options.type_col, options.time_col, options.schema
    given = dict(schema.kinds) if schema is not None else {}
    unknown = [i for i, name in enumerate(header) if name != type_col and name not in given]
    scanned: dict[int, str] = {}
    if unknown:
        columns = {i: _ColumnKind() for i in unknown}
        for batch in csv_cells(path, len(header)):
            for _, _, cells in batch:
                if isinstance(cells, str):
                    continue
                for i, column in columns.items():
                    if cells[i] != "":
                        column.add(cells[i])
        scanned = {i: c.kind() for i, c in columns.items()}
        _refuse_mixed(path, header, [i for i, c in columns.items() if c.mixed()])
    kinds = [
        "str" if name == type_col else given.get(name) or scanned[i]
        for i, name in enumerate(header)
    ]
    if schema is not None and open_kinds(schema):
        # a column has one kind: the schema's open attributes take the column's
        completed = dict(schema.kinds)
        completed.update(
            (name, kinds[i]) for i, name in enumerate(header) if name in open_kinds(schema)
        )
        schema = Schema.of({t: schema.attributes(t) for t in schema.type_names()}, completed)
    if schema is not None and time_col is not None:
        schema = with_time_column(
            schema, time_col, schema.type_names(), [kinds[header.index(time_col)]]
        )
    return rows_stream(str(path), lambda: _csv_rows(path, header, kinds), options.with_schema(schema))


def _csv_rows(path: Path, header: list[str], kinds: list[str]) -> Iterator[list[Row]]:
    """The records of a CSV file, each cell read as its column's kind."""
    for batch in csv_cells(path, len(header)):
        yield [
            Row(number, line, {}, cells) if isinstance(cells, str) else _csv_row(number, line, cells, header, kinds)
            for number, line, cells in batch
        ]


def _csv_row(number: int, line: int, cells: list[str], header: list[str], kinds: list[str]) -> Row:
    """One CSV record of the right width: empty cells are not mentioned, the others read
    as their column's kind (a cell that is not one fails the record)."""
    values, failure, column = parse_cells(header, kinds, cells)
    return Row(number, line, values, failure, column)


def _native_csv_given(
    path: Path, native: Any, header: list[str], options: SourceOptions, schema: Schema
) -> EventStream:
    """A CSV file with a schema (every kind given) through the C scanner, one pass; a
    first scan makes sure every line is simple (``NotSimple`` otherwise), so a line whose
    cell is not of its kind is read and reported by Python alone."""
    type_col, time_col = options.type_col, options.time_col
    scanned, mixed = _simple_csv_kinds(path, native, header)
    given = dict(schema.kinds)
    _refuse_mixed(path, header, [i for i in sorted(mixed) if header[i] not in given and header[i] != type_col])
    kinds = ["str" if name == type_col else given.get(name) or scanned[i] for i, name in enumerate(header)]
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [kinds[header.index(time_col)]])
    return native_given_stream(
        path, native, options, schema, make_row=partial(csv_line_row, header=header, kinds=kinds),
        csv=csv_spec(header, kinds),
    )


def _refuse_mixed(path: Path, header: list[str], mixed: list[int]) -> None:
    """A column mostly of numbers or bools with a few text cells is an error naming those
    rows: inferred as text, ``price > 100`` would be false on every row (a silent wrong
    answer, issue 37; papers/io.md "Mixed CSV columns").  A column mostly of text stays text."""
    if not mixed:
        return
    cells_of: dict[int, tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]] = {
        i: ([], []) for i in mixed}
    for batch in csv_cells(path, len(header)):
        for number, line, cells in batch:
            if isinstance(cells, str):
                continue
            for i, (typed, text) in cells_of.items():
                if cells[i].strip() != "":
                    probe = _ColumnKind()
                    probe.add(cells[i])
                    (typed if probe.typed else text).append((number, line, cells[i]))
    for i, (typed, text) in cells_of.items():
        if len(text) >= len(typed):
            continue  # mostly text (codes such as 007 beside names): text, as inferred
        shown = "\n".join(f"  row {n} (line {line}): {cell!r}" for n, line, cell in text[:5])
        more = f"\n  … and {len(text) - 5:,} more" if len(text) > 5 else ""
        raise DataError(
            f"{path}: column {header[i]!r} holds numbers or bools ({len(typed):,} rows) and text "
            f"({len(text):,} row{'s' if len(text) != 1 else ''}), so no kind reads every cell; fix "
            f"{'that row' if len(text) == 1 else 'those rows'}, or declare the column's kind with "
            f"--schema:\n{shown}{more}")


def csv_data_start(path: Path) -> bytes:
    """The header line of a CSV file (a BOM dropped), as the scanner skips it."""
    with open(path, "rb") as handle:
        first = handle.readline()
    return first[3:] if first.startswith(BOM) else first


def _one_line_header(path: Path, header: list[str]) -> bool:
    """Whether the header is one line, as the scanner reads it (not one quoted over several)."""
    import csv

    try:
        return [h.strip() for h in next(csv.reader([csv_data_start(path).decode("utf-8")]))] == header
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return False


def _simple_csv_kinds(path: Path, native: Any, header: list[str]) -> tuple[list[str], set[int]]:
    """Each column's kind as the Python reader infers it, and the mixed columns, when the
    header is one line and every line is simple (``NotSimple`` otherwise)."""
    if not _one_line_header(path, header):
        raise native_scan.NotSimple(str(path))  # a header over several lines
    return csv_kinds(native, path, len(header))
