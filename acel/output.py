"""Writing results in the interchange formats of spec §12.

Complex events (``list[Match]``) and RETURN rows (``list[TrendRow]``) become
canonical JSON Lines: compact (``separators=(",", ":")``), keys sorted, UTF-8
(no ASCII escaping), non-finite floats written as ``null``.  The same results
can be written as CSV or Parquet, and JSON Lines of complex events read back
into :class:`~acel.clauses.Match` objects (for tests and ``acel conform``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Union

from acel.clauses import Key, Match, TrendRow, key_sort_key
from acel.errors import DataError
from acel.events import ComplexEvent, Event, OptValue, Value

Results = Union[Sequence[Match], Sequence[TrendRow]]

OUTPUT_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
                  ".parquet": "parquet", ".pq": "parquet"}


def clean(value: OptValue) -> OptValue:
    """A value as written: NaN and ±infinity become NULL (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _dumps(obj: object) -> str:
    """Compact, sorted, UTF-8 JSON on one line.

    The characters ``str.splitlines`` takes for line breaks besides the ones
    JSON escapes anyway (U+0085, U+2028, U+2029) are escaped too, so that
    every reader sees one object per line.
    """
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    for char, escaped in _LINE_BREAKS.items():
        if char in text:
            text = text.replace(char, escaped)
    return text


def event_json(event: Event) -> dict[str, object]:
    """``{"time": t, "attrs": {...}}``: the time apart so an attribute ``time`` never collides."""
    return {"time": event.time, "attrs": {k: clean(v) for k, v in event.attrs}}


def key_json(key: Key) -> dict[str, OptValue]:
    return {name: clean(value) for name, value in key}


def match_json(match: Any) -> dict[str, object]:
    """One complex event as a JSON object (``"key"`` only when partitioned)."""
    ce = match.event
    obj: dict[str, object] = {
        "start": ce.start,
        "end": ce.end,
        "vars": {name: [event_json(e) for e in bag] for name, bag in ce.vars},
    }
    if match.key:
        obj["key"] = key_json(match.key)
    return obj


def row_json(row: Any) -> dict[str, object]:
    """One RETURN row; ``"key"``/``"window"`` only with PARTITION BY/SLIDE, and they win
    over a RETURN item of the same name."""
    obj: dict[str, object] = {name: clean(value) for name, value in row.values}
    if row.key:
        obj["key"] = key_json(row.key)
    if row.window is not None:
        obj["window"] = [clean(row.window[0]), clean(row.window[1])]
    return obj


def _is_match(item: object) -> bool:
    return hasattr(item, "event")


def _row_order(row: Any) -> tuple[object, ...]:
    return (key_sort_key(row.key), row.window or ())


def sort_results(results: Iterable[Any]) -> list[Any]:
    """Results in the order of their JSON Lines (spec §12).

    Complex events by (end, start, the rest of the line); rows by key then
    window.  Row-like objects (``key``, ``window``, ``values``, e.g. the SASE+
    per-match rows) are accepted beside :class:`TrendRow`.
    """
    items = list(results)
    if all(_is_match(item) for item in items):
        return sorted(items, key=lambda m: (m.event.end, m.event.start, _dumps(match_json(m))))
    if all(hasattr(item, "values") and not _is_match(item) for item in items):
        return sorted(items, key=lambda r: (_row_order(r), _dumps(row_json(r))))
    raise TypeError("results must be all complex events (Match) or all rows (TrendRow)")


def to_json_lines(results: Iterable[Match] | Iterable[TrendRow]) -> list[str]:
    """Canonical JSON Lines (no newline characters), in the order of spec §12."""
    return [
        _dumps(match_json(item) if _is_match(item) else row_json(item))
        for item in sort_results(results)
    ]


# ----------------------------------------------------------------- reading back


def _key_from(data: object, partition_by: Sequence[str] | None, where: str) -> Key:
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise DataError(f"{where}: \"key\" must be an object")
    names = list(partition_by) if partition_by is not None else sorted(data)
    return tuple((name, data[name]) for name in names if data.get(name) is not None)


def match_from_json(obj: Mapping[str, Any], partition_by: Sequence[str] | None = None,
                    where: str = "line") -> Match:
    """One complex-event object back into a :class:`Match`."""
    try:
        mu = {
            name: [Event.make(int(e["time"]), e["attrs"]) for e in events]
            for name, events in obj["vars"].items()
        }
        ce = ComplexEvent.make(int(obj["start"]), int(obj["end"]), mu)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise DataError(f"{where}: not a complex event of spec §12 ({error!r})") from None
    return Match(_key_from(obj.get("key"), partition_by, where), ce)


def from_json_lines(lines: Iterable[str], partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex-event JSON Lines back into matches, sorted like :func:`to_json_lines`.

    JSON objects lose the PARTITION BY order of a key; pass ``partition_by``
    to restore it, otherwise key attributes come back sorted by name.
    """
    out: list[Match] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"line {number}: bad JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(obj, dict):
            raise DataError(f"line {number}: expected a JSON object")
        out.append(match_from_json(obj, partition_by, f"line {number}"))
    return sort_results(out)


def rows_from_json_lines(
    lines: Iterable[str], partition_by: Sequence[str] | None = None
) -> list[TrendRow]:
    """RETURN-row JSON Lines back into :class:`TrendRow` objects (items sorted by name)."""
    out: list[TrendRow] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"line {number}: bad JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(obj, dict):
            raise DataError(f"line {number}: expected a JSON object")
        key = _key_from(obj.pop("key", None), partition_by, f"line {number}")
        window = obj.pop("window", None)
        bounds = None if window is None else (window[0], window[1])
        out.append(TrendRow(key, bounds, tuple(sorted(obj.items()))))
    return sorted(out, key=TrendRow.sort_key)


def read_results(path: str | Path, partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex events from a JSON Lines result file."""
    with open(path, encoding="utf-8") as handle:
        return from_json_lines(handle, partition_by)


# ----------------------------------------------------------------- tables


def table_columns(results: Results) -> tuple[list[str], list[list[OptValue]]]:
    """Flat columns and rows for CSV/Parquet, in output order.

    Complex events: ``start, end, key, vars`` (key and vars as canonical JSON).
    RETURN rows: the key attributes, ``window_lo, window_hi`` (with SLIDE),
    then the items not already written.
    """
    ordered = sort_results(results)
    if not ordered:
        return [], []
    if _is_match(ordered[0]):
        body: list[list[OptValue]] = []
        for m in ordered:
            obj = match_json(m)
            body.append([m.event.start, m.event.end, _dumps(obj.get("key", {})), _dumps(obj["vars"])])
        return ["start", "end", "key", "vars"], body
    header: list[str] = []
    for r in ordered:
        for name, _ in r.key:
            if name not in header:
                header.append(name)
    if any(r.window is not None for r in ordered):
        header += ["window_lo", "window_hi"]
    for r in ordered:
        for name, _ in r.values:
            if name not in header:
                header.append(name)
    table: list[list[OptValue]] = []
    for r in ordered:
        cells: dict[str, OptValue] = dict(r.values)
        cells.update(r.key)
        if r.window is not None:
            cells["window_lo"], cells["window_hi"] = r.window
        table.append([clean(cells.get(name)) for name in header])
    return header, table


def _csv_cell(value: OptValue) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_csv(results: Results, handle: IO[str]) -> int:
    header, table = table_columns(results)
    writer = csv.writer(handle, lineterminator="\n")
    if header:
        writer.writerow(header)
    for cells in table:
        writer.writerow([_csv_cell(v) for v in cells])
    return len(table)


def write_parquet(results: Results, path: str | Path) -> int:
    """Parquet via pyarrow; a column mixing incompatible kinds is stored as JSON text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    header, table = table_columns(results)
    arrays = []
    for index, _name in enumerate(header):
        column: list[Any] = [cells[index] for cells in table]
        try:
            arrays.append(pa.array(column))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            arrays.append(pa.array([None if v is None else _dumps(v) for v in column], pa.string()))
    pq.write_table(pa.Table.from_arrays(arrays, names=header), path)
    return len(table)


def output_format(path: str | Path | None, fmt: str | None = None) -> str:
    """``jsonl``, ``csv`` or ``parquet`` from ``fmt`` or the file extension (default jsonl)."""
    if fmt is not None:
        if fmt not in ("jsonl", "csv", "parquet"):
            raise DataError(f"unknown output format {fmt!r}; use jsonl, csv or parquet")
        return fmt
    if path is None:
        return "jsonl"
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_FORMATS:
        raise DataError(f"{path}: unknown output format {suffix or '(no extension)'!r}; "
                        "use .jsonl, .csv or .parquet")
    return OUTPUT_FORMATS[suffix]


def write_results(results: Results, path: str | Path | None = None, *, fmt: str | None = None,
                  stream: IO[str] | None = None) -> int:
    """Write results to ``path`` (or ``stream``/stdout when ``None``); returns the count written."""
    kind = output_format(path, fmt)
    if kind == "parquet":
        if path is None:
            raise DataError("Parquet output needs a file (--out FILE.parquet)")
        return write_parquet(results, path)
    if path is None:
        return _write_text(results, kind, stream or sys.stdout)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        return _write_text(results, kind, handle)


def _write_text(results: Results, kind: str, handle: IO[str]) -> int:
    if kind == "csv":
        return write_csv(results, handle)
    lines = to_json_lines(results)
    for line in lines:
        handle.write(line + "\n")
    return len(lines)


def results_to_string(results: Results, fmt: str = "jsonl") -> str:
    """The text a file of format ``fmt`` (jsonl or csv) would hold."""
    buffer = io.StringIO()
    _write_text(results, fmt, buffer)
    return buffer.getvalue()


def read_table(path: str | Path) -> list[dict[str, Value | None]]:
    """A CSV or Parquet result file as plain dictionaries (for round-trip checks)."""
    kind = output_format(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_table(path).to_pylist())
    with open(path, encoding="utf-8", newline="") as handle:
        return [dict(r) for r in csv.DictReader(handle)]


def matches_from_table(records: Iterable[Mapping[str, Any]],
                       partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex events back from CSV/Parquet records (``start, end, key, vars``)."""
    out = []
    for number, rec in enumerate(records, start=1):
        obj = {
            "start": rec["start"],
            "end": rec["end"],
            "key": json.loads(rec["key"]) if rec.get("key") else None,
            "vars": json.loads(rec["vars"]),
        }
        out.append(match_from_json(obj, partition_by, f"row {number}"))
    return sort_results(out)
