"""Result files read back (spec §12): JSON Lines, CSV and Parquet into matches and rows,
for round trips, conformance checks and Spark's collected results."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acel.io.output_formats import output_for
from acel.io.result_order import sort_results
from acel.lang.clauses import Key, Match, TrendRow
from acel.lang.errors import DataError
from acel.lang.events import ComplexEvent, Event, Value

JSON_FIELDS = "acel.json_fields"
"""Parquet metadata: the fields of mixed kind, stored as their JSON text."""


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


def _objects(lines: Iterable[str]) -> Iterable[tuple[int, dict[str, Any]]]:
    from acel.io.values import int_from_digits

    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_int=int_from_digits)
        except json.JSONDecodeError as error:
            raise DataError(f"line {number}: bad JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(obj, dict):
            raise DataError(f"line {number}: expected a JSON object")
        yield number, obj


def from_json_lines(lines: Iterable[str], partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex-event JSON Lines back into matches, sorted like :func:`to_json_lines`.

    JSON objects lose the PARTITION BY order of a key; pass ``partition_by``
    to restore it, otherwise key attributes come back sorted by name.
    """
    out = [match_from_json(obj, partition_by, f"line {n}") for n, obj in _objects(lines)]
    return sort_results(out)


def rows_from_json_lines(
    lines: Iterable[str], partition_by: Sequence[str] | None = None
) -> list[TrendRow]:
    """RETURN-row JSON Lines back into :class:`TrendRow` objects (items sorted by name)."""
    out: list[TrendRow] = []
    for number, obj in _objects(lines):
        key = _key_from(obj.pop("key", None), partition_by, f"line {number}")
        window = obj.pop("window", None)
        bounds = None if window is None else (window[0], window[1])
        out.append(TrendRow(key, bounds, tuple(sorted(obj.items()))))
    return sorted(out, key=TrendRow.sort_key)


def read_results(path: str | Path, partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex events from a JSON Lines result file."""
    with open(path, encoding="utf-8") as handle:
        return from_json_lines(handle, partition_by)


def read_table(path: str | Path) -> list[dict[str, Value | None]]:
    """A CSV or Parquet result file as plain dictionaries (for round-trip checks)."""
    import csv  # here: a JSON Lines run never loads it (start-up, issue 23)

    kind = output_for(path).name
    if kind == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        records = list(table.to_pylist())
        meta = (table.schema.metadata or {}).get(JSON_FIELDS.encode())
        encoded = json.loads(meta) if meta else []
        if encoded:
            _decode_json_fields(records, encoded)
        return records
    with open(path, encoding="utf-8", newline="") as handle:
        return [dict(r) for r in csv.DictReader(handle)]


def _decode_json_fields(records: list[dict[str, Any]], encoded: Sequence[str]) -> None:
    """Turn the JSON text of mixed-kind fields (``key.a``, ``vars.a``) back into values."""
    keys = {f.split(".", 1)[1] for f in encoded if f.startswith("key.")}
    attrs = {f.split(".", 1)[1] for f in encoded if f.startswith("vars.")}
    for record in records:
        key = record.get("key")
        if isinstance(key, dict):
            for name in keys & set(key):
                if key[name] is not None:
                    key[name] = json.loads(key[name])
        vars_ = record.get("vars")
        if isinstance(vars_, list):
            for _, events in vars_:
                for event in events:
                    for name in attrs & set(event["attrs"]):
                        if event["attrs"][name] is not None:
                            event["attrs"][name] = json.loads(event["attrs"][name])


def matches_from_table(records: Iterable[Mapping[str, Any]],
                       partition_by: Sequence[str] | None = None) -> list[Match]:
    """Complex events back from CSV records (``start, end, key, vars`` with JSON text)
    or typed Parquet records (:class:`MatchLayout`)."""
    out = []
    for number, rec in enumerate(records, start=1):
        key, vars_ = rec.get("key"), rec["vars"]
        if isinstance(vars_, str):
            obj = {
                "start": rec["start"],
                "end": rec["end"],
                "key": json.loads(key) if key else None,
                "vars": json.loads(vars_),
            }
        else:
            obj = {
                "start": rec["start"],
                "end": rec["end"],
                "key": key,
                "vars": {
                    var: [
                        {"time": e["time"],
                         "attrs": {a: v for a, v in e["attrs"].items() if v is not None}}
                        for e in events
                    ]
                    for var, events in vars_
                },
            }
        out.append(match_from_json(obj, partition_by, f"row {number}"))
    return sort_results(out)
