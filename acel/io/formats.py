"""Event file formats: raw records out of JSON Lines and Parquet, in batches, for the
registered readers of :mod:`acel.io.readers` (CSV's Python reader is its reader's,
:mod:`acel.io.readers.csv`), and the text files a run reads (a query, a schema).

Each reader yields lists of :class:`Row` (or, for Parquet, Arrow record batches)
without holding the file in memory, and reports what it cannot read with the row and
line (spec §9): a line that is not JSON, a JSON object with a key twice (the second
value would silently win), bytes that are not UTF-8.  A UTF-8 byte order mark at the
start of a file is accepted.  JSON Lines's common line is read by
:func:`acel.io.record_pass.line_row`, beside the C scanner's loops that call it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

try:
    import orjson
except ImportError:  # a Spark worker with only pyarrow and pandas (_json_fallback)
    import acel.io._json_fallback as orjson  # type: ignore[no-redef]

from acel.io.native_protocol import BIG
from acel.io.record_pass import BATCH, BOM, Row, _keys_distinct, line_row
from acel.io.values import (
    MAX_ATTRIBUTES,
    int_from_digits,
    lone_surrogate,
    surrogate_message,
    too_many_attributes,
)
from acel.lang.errors import DataError


def read_text_file(path: str | Path) -> str:
    """A whole UTF-8 text file (a query, a schema); a BOM is dropped.

    Bytes that are not UTF-8 are a :class:`DataError` naming the file, the
    line and the byte, never a bare ``UnicodeDecodeError``.
    """
    data = Path(path).read_bytes()
    if data.startswith(BOM):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise DataError(
            f"{path}: not UTF-8 text: line {line}, byte {column} of the line "
            f"(0x{data[error.start]:02x}); save the file as UTF-8"
        ) from None


def could_be_path(arg: str) -> bool:
    """Whether ``arg`` is short enough, part by part, to name a file here."""
    if not arg or "\n" in arg or "\0" in arg:
        return False
    try:
        encoded = os.fsencode(arg)
    except UnicodeEncodeError:  # a lone surrogate: no file name is spelled so
        return False
    name_max, path_max = _path_limits()
    return len(encoded) < path_max and all(len(p) <= name_max for p in encoded.split(b"/"))


def _path_limits() -> tuple[int, int]:
    """(NAME_MAX, PATH_MAX) of the current directory's file system (255, 4096 by default)."""
    try:
        return os.pathconf(".", "PC_NAME_MAX"), os.pathconf(".", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 255, 4096


# ------------------------------------------------------------------ JSON


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(f"key {key!r} appears twice ({out[key]!r}, then {value!r})")
        for text in (key, value):
            if type(text) is str and lone_surrogate(text):
                raise _Duplicate(surrogate_message(key))
        out[key] = value
    return out


def parse_json_object(line: bytes) -> Any:
    """One JSON Lines record: orjson's fast path, checked; the standard library otherwise.

    Raises ``ValueError`` with a message for a record that is not JSON, not
    UTF-8, or names a key twice.  Integers of any size are exact (orjson reads
    integers beyond 64 bits as floats, so such lines are read again exactly).
    """
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _slow(line)
    if type(value) is dict:
        if not _keys_distinct(line, len(value)):
            return _slow(line)  # maybe a key twice (or '":' inside a string): decide exactly
        for v in value.values():
            if type(v) is float and (v >= BIG or v <= -BIG):
                return _slow(line)
    return value


def _slow(line: bytes) -> Any:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text (byte {error.start + 1} of the line)") from None
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=int_from_digits)
    except _Duplicate as error:
        raise ValueError(str(error) if "surrogate" in str(error) else f"duplicate key: {error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"bad JSON: {error.msg} at column {error.colno}") from None
    except RecursionError:
        raise ValueError("bad JSON: nested too deeply") from None


def json_line_row(number: int, line_number: int, line: bytes) -> Row:
    """One non-blank JSON Lines record (``number`` counts records, ``line_number`` lines)."""
    try:
        value = parse_json_object(line.rstrip(b"\r\n"))
    except ValueError as error:
        return Row(number, line_number, {}, str(error))
    if type(value) is dict:
        if len(value) > MAX_ATTRIBUTES + 1:  # the type and MAX_ATTRIBUTES attributes
            return Row(number, line_number, {}, too_many_attributes(len(value) - 1))
        return Row(number, line_number, value)
    return Row(number, line_number, {}, f"expected a JSON object, found {type(value).__name__}")


def json_line_rows(handle: Iterable[bytes], first_line: int = 1, batch: int = BATCH) -> Iterator[list[Row]]:
    """JSON Lines from a binary handle, in batches of ``batch`` (blank lines skipped).

    Rows are numbered from 1 over non-blank lines; lines are physical lines
    (split on ``\n`` only: U+2028 inside a string is data).  The common case
    is :func:`line_row`'s (the native reader, :mod:`acel.io.native_jsonl`, hands
    it every line it leaves).
    """
    number = 0
    out: list[Row] = []
    for index, line in enumerate(handle, start=first_line):
        if index == first_line and line.startswith(BOM):
            line = line[3:]
        if not line.strip():
            continue
        number += 1
        out.append(line_row(number, index, line, json_line_row))
        if len(out) >= batch:
            yield out
            out = []
    if out:
        yield out


def json_rows(path: str | Path) -> Iterator[list[Row]]:
    """A ``.jsonl`` file, or a ``.json`` file holding one array of objects."""
    source = str(path)
    with open(path, "rb") as handle:
        head = handle.read(64)
        stripped = head[3:] if head.startswith(BOM) else head
        if stripped.lstrip().startswith(b"["):
            data = _json_array(source, (head + handle.read()))
            rows = [_array_row(n, item) for n, item in enumerate(data, start=1)]
            for start in range(0, len(rows), BATCH):
                yield rows[start : start + BATCH]
            return
        handle.seek(0)
        yield from json_line_rows(handle)


def _array_row(number: int, item: Any) -> Row:
    if not isinstance(item, dict):
        return Row(number, None, {}, f"expected a JSON object, found {type(item).__name__}")
    if len(item) > MAX_ATTRIBUTES + 1:
        return Row(number, None, {}, too_many_attributes(len(item) - 1))
    return Row(number, None, item)


def _json_array(source: str, data: bytes) -> list[Any]:
    if data.startswith(BOM):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"{source}: not UTF-8 text (byte {error.start + 1})") from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_int=int_from_digits)
    except _Duplicate as error:
        what = str(error) if "surrogate" in str(error) else f"duplicate key: {error}"
        raise DataError(f"{source}: {what}") from None
    except json.JSONDecodeError as error:
        raise DataError(
            f"{source}: bad JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(value, list):
        raise DataError(f"{source}: a JSON file holds one object per line or one array of objects")
    return value


# ------------------------------------------------------------------ Parquet


def parquet_batches(path: str | Path) -> Iterator[Any]:
    """A Parquet file's record batches, one row group at a time: ``iter_batches`` over the
    whole file keeps Arrow memory that grows with the file (18 MiB more at 10^7 events than
    at 10^6), one row group at a time keeps it flat."""
    parquet = parquet_file(path)
    for group in range(parquet.metadata.num_row_groups):
        yield from parquet.iter_batches(batch_size=BATCH, row_groups=[group])


def parquet_file(path: str | Path) -> Any:
    """A ``pyarrow.parquet.ParquetFile``; a clear DataError when it cannot be opened."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read Parquet: {error}") from None
