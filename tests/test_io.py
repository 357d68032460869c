"""Event files in (spec §1, §9, §12): formats, inference, time sort, and precise errors."""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.io import (
    events_from_arrow,
    events_from_dataframe,
    events_from_records,
    infer_cell_kind,
    read_events,
    read_schema,
    time_key,
    write_schema,
)
from acel.lang.errors import DataError
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import SPEC_STOCK_ROWS

DATA = Path(__file__).parent / "data"

SPEC_STREAM = SPEC_STOCK_ROWS


def spec_events(**extra: list[object]) -> list[Event]:
    out = []
    for i, (t, name, price) in enumerate(SPEC_STREAM):
        attrs: dict[str, object] = {"type": t, "name": name, "price": price}
        for column, values in extra.items():
            attrs[column] = values[i]
        out.append(Event.make(i, attrs))  # type: ignore[arg-type]
    return out


def error_of(path: Path | str, **kwargs: object) -> str:
    with pytest.raises(DataError) as info:
        read_events(path, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


# ----------------------------------------------------------------- good files


def test_jsonl_spec_stream_and_inferred_schema() -> None:
    events, schema = read_events(DATA / "stocks.jsonl")
    assert events == spec_events()
    assert [e.time for e in events] == list(range(7))
    assert schema.type_names() == ("BUY", "SELL")
    assert schema.attributes("SELL") == ("type", "name", "price")
    assert dict(schema.kinds) == {"name": "str", "price": "int"}


def test_csv_time_column_stable_sort_keeps_the_column() -> None:
    events, schema = read_events(DATA / "stocks.csv", time_col="ts")
    # SELL INTL and BUY INTL tie at ts=20: input order (SELL first) is kept.
    assert events == spec_events(ts=[0, 10, 20, 20, 40, 50, 60])
    assert "ts" in schema.attributes("BUY")


def test_csv_without_time_column_keeps_line_order() -> None:
    events, _ = read_events(DATA / "stocks.csv")
    assert [e.get("ts") for e in events] == [60, 0, 20, 20, 10, 40, 50]


def test_csv_schema_matches_jsonl() -> None:
    events, _ = read_events(DATA / "stocks.csv", time_col="ts",
                            schema=read_schema(DATA / "stocks_schema.json"))
    assert [e.get("price") for e in events] == [p for _, _, p in SPEC_STREAM]


def test_csv_kind_inference_and_nulls(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text(
        "type,i,f,b,s,mixed,empty\n"
        "A,1,1.5,true,x,1,\n"
        "A,-2,2,FALSE,007,2.5,\n"
        "B,,,,,,\n"
    )
    events, schema = read_events(path)
    assert events[0] == Event.make(0, {"type": "A", "i": 1, "f": 1.5, "b": True, "s": "x", "mixed": 1.0})
    assert events[1] == Event.make(1, {"type": "A", "i": -2, "f": 2.0, "b": False, "s": "007", "mixed": 2.5})
    assert events[2] == Event.make(2, {"type": "B"})
    assert isinstance(events[1].get("f"), float) and isinstance(events[1].get("mixed"), float)
    assert dict(schema.kinds) == {"i": "int", "f": "float", "b": "bool", "s": "str", "mixed": "float"}
    # A type only gets attributes it actually carries (B's cells are all empty).
    assert schema.attributes("B") == ("type",)


def test_csv_type_column_is_text_even_when_numeric(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("kind,x\n1,2\n2,3\n")
    events, schema = read_events(path, type_col="kind")
    assert [e.type for e in events] == ["1", "2"]
    assert events[0] == Event.make(0, {"type": "1", "x": 2})


def test_infer_cell_kind() -> None:
    assert infer_cell_kind(["1", "+2", "-3"]) == "int"
    assert infer_cell_kind(["1", "2.0", "1e3"]) == "float"
    assert infer_cell_kind(["1", "nan", "inf"]) == "float"
    assert infer_cell_kind(["Nan", "Inf"]) == "str"  # names, not numbers
    assert infer_cell_kind(["True", "false"]) == "bool"
    assert infer_cell_kind(["1", "x"]) == "str"
    assert infer_cell_kind(["1_000"]) == "str"


def test_type_column_renamed(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"event": "SELL", "price": 1}\n{"event": "BUY", "price": 2}\n')
    events, schema = read_events(path, type_col="event")
    assert events == [Event.make(0, {"type": "SELL", "price": 1}), Event.make(1, {"type": "BUY", "price": 2})]
    assert "event" not in schema.all_attributes()


def test_json_array_file_and_jsonl_null(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps([{"type": "A", "x": 1, "y": None}, {"type": "A", "x": 2.5}]))
    events, schema = read_events(path)
    assert events == [Event.make(0, {"type": "A", "x": 1.0}), Event.make(1, {"type": "A", "x": 2.5})]
    assert schema.attributes("A") == ("type", "x", "y")  # y is mentioned, hence known
    assert schema.kind("x") == "float" and schema.kind("y") is None


def test_parquet_with_timestamps_and_nulls(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "type": ["SELL", "BUY", "SELL"],
            "price": [101.0, None, 80.0],
            "when": pd.to_datetime(["2013-01-01 00:02", "2013-01-01 00:00", "2013-01-01 00:01"]),
        }
    )
    path = tmp_path / "e.parquet"
    frame.to_parquet(path)
    events, schema = read_events(path, time_col="when")
    base = int(dt.datetime(2013, 1, 1, tzinfo=dt.timezone.utc).timestamp())
    assert events == [
        Event.make(0, {"type": "BUY", "when": base}),
        Event.make(1, {"type": "SELL", "price": 80.0, "when": base + 60}),
        Event.make(2, {"type": "SELL", "price": 101.0, "when": base + 120}),
    ]
    assert schema.attributes("BUY") == ("type", "when")


def test_records_and_dataframe_share_the_checks() -> None:
    records: list[dict[str, object]] = [{"type": "A", "x": 1}, {"x": 2}]
    with pytest.raises(DataError, match=r"row 2, column 'type': missing event type"):
        events_from_records(records)
    frame = pd.DataFrame({"type": ["A", "B"], "x": [1.0, math.nan], "t": [2, 1]})
    events, _ = events_from_dataframe(frame, time_col="t")
    assert events == [Event.make(0, {"type": "B", "t": 1}), Event.make(1, {"type": "A", "x": 1.0, "t": 2})]
    with pytest.raises(DataError, match="the type column 'kind' is not in the header"):
        events_from_dataframe(frame, type_col="kind")


def test_schema_conversions_int_to_float_and_integral_float_to_int() -> None:
    schema = Schema.of({"A": ["x", "y"]}, {"x": "float", "y": "int"})
    events, _ = events_from_records([{"type": "A", "x": 1, "y": 2.0}], schema=schema)
    assert isinstance(events[0].get("x"), float) and events[0].get("x") == 1.0
    assert isinstance(events[0].get("y"), int) and events[0].get("y") == 2
    with pytest.raises(DataError, match=r"value 2.5 is float, but the schema says int"):
        events_from_records([{"type": "A", "y": 2.5}], schema=schema)
    with pytest.raises(DataError, match=r"value True is bool, but the schema says int"):
        events_from_records([{"type": "A", "y": True}], schema=schema)


def test_time_key() -> None:
    assert time_key(3) == 3
    assert time_key(" 7 ") == 7
    assert time_key("2.5") == 2.5
    assert time_key("1970-01-01T00:01:00Z") == 60
    for bad in (None, True, "noon", math.nan):
        with pytest.raises(ValueError):
            time_key(bad)


def test_schema_file_round_trip(tmp_path: Path) -> None:
    schema = read_schema(DATA / "stocks_schema.json")
    assert schema == Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]},
                               {"name": "str", "price": "int"})
    write_schema(schema, tmp_path / "s.json")
    assert read_schema(tmp_path / "s.json") == schema
    bare = tmp_path / "bare.json"
    bare.write_text('{"A": ["x"]}')
    assert read_schema(bare) == Schema.of({"A": ["x"]})


def test_bad_schema_files(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"types": {"A": ["x"]}, "kinds": {"x": "integer"}}')
    with pytest.raises(DataError, match="attribute 'x' has kind 'integer'"):
        read_schema(path)
    path.write_text('{"types": {"A": "x"}}')
    with pytest.raises(DataError, match="list of attribute names"):
        read_schema(path)
    path.write_text('{"types": ')
    with pytest.raises(DataError, match="bad JSON at line 1"):
        read_schema(path)


# ----------------------------------------------------------------- malformed files


def test_missing_type() -> None:
    message = error_of(DATA / "bad_missing_type.jsonl")
    assert message.splitlines() == [
        f"{DATA / 'bad_missing_type.jsonl'}: 2 bad rows:",
        "  row 2 (line 2), column 'type': missing event type",
        "  row 4 (line 4), column 'type': event type is NULL",
    ]


def test_wrong_kind_against_schema() -> None:
    message = error_of(DATA / "bad_wrong_kind.csv", schema=read_schema(DATA / "stocks_schema.json"))
    assert "1 bad row:" in message
    assert "row 2 (line 3), column 'price': 'one hundred' is not an int, but the schema says int" in message


def test_wrong_kind_in_json_against_schema(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"type": "SELL", "name": "MSFT", "price": "101"}\n')
    message = error_of(path, schema=read_schema(DATA / "stocks_schema.json"))
    assert "row 1 (line 1), column 'price': value '101' is str, but the schema says int" in message


def test_bad_json_line_reported_with_other_bad_rows(tmp_path: Path) -> None:
    message = error_of(DATA / "bad_json_line.jsonl")
    assert "row 2 (line 3): bad JSON: Expecting ',' delimiter at column 46" in message
    path = tmp_path / "e.jsonl"
    path.write_text('{"price": 1}\n{oops\n[1, 2]\n')
    lines = error_of(path).splitlines()
    assert lines[1:] == [
        "  row 1 (line 1), column 'type': missing event type",
        "  row 2 (line 2): bad JSON: Expecting property name enclosed in double quotes at column 2",
        "  row 3 (line 3): expected a JSON object, found list",
    ]


def test_unparseable_and_missing_time() -> None:
    message = error_of(DATA / "bad_time.csv", time_col="ts")
    assert "2 bad rows" in message
    assert "row 2 (line 3), column 'ts': missing time value" in message
    assert "row 3 (line 4), column 'ts': cannot read time value 'noon'" in message


def test_time_column_not_in_header() -> None:
    message = error_of(DATA / "stocks.csv", time_col="when")
    assert "the time column 'when' is not in the header (columns: type, name, price, ts)" in message


def test_nested_values() -> None:
    message = error_of(DATA / "bad_nested.jsonl")
    assert "row 2 (line 2), column 'name': nested value (an object) is not allowed" in message
    assert "row 3 (line 3), column 'price': nested value (a list) is not allowed" in message


def test_unknown_attribute_and_type_against_schema() -> None:
    message = error_of(DATA / "bad_unknown_attr.jsonl", schema=read_schema(DATA / "stocks_schema.json"))
    lines = message.splitlines()
    assert lines[0].endswith("2 bad rows:")
    assert lines[1] == "  row 2 (line 2), column 'volume': attribute 'volume' is not in the schema of type 'SELL'"
    # row 3 mentions volume with null: a NULL is a missing attribute, not an error
    assert lines[2] == "  row 4 (line 4), column 'type': unknown event type 'HOLD' (the schema has BUY, SELL)"


def test_missing_type_column_in_csv_header(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("name,price\nMSFT,1\n")
    assert "the type column 'type' is not in the header (columns: name, price); name it with --type-col" in error_of(path)


def test_ragged_csv_rows_and_bad_headers(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("type,x\nA,1\nA,1,2\nA\n")
    message = error_of(path)
    assert "row 2 (line 3): 3 fields, but the header has 2" in message
    assert "row 3 (line 4): 1 fields, but the header has 2" in message
    path.write_text("type,x,x\nA,1,2\n")
    assert "duplicate column name 'x'" in error_of(path)
    path.write_text("")
    assert "empty CSV file" in error_of(path)


def test_parquet_bad_rows(tmp_path: Path) -> None:
    table = pa.table({"type": ["A", None, "B"], "x": [[1], [2], None]})
    path = tmp_path / "e.parquet"
    pq.write_table(table, path)
    message = error_of(path)
    assert "2 bad rows" in message  # never dropped silently
    assert "row 1, column 'x': nested value (a list) is not allowed" in message
    assert "row 2, column 'type': missing event type" in message


def test_many_bad_rows_counted_first_five_shown(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text("".join(f'{{"x": {i}}}\n' for i in range(12)))
    lines = error_of(path).splitlines()
    assert lines[0].endswith("12 bad rows (12 problems, the first 5 shown):")
    assert len(lines) == 6 and lines[-1].startswith("  row 5 (line 5)")


def test_non_string_type_and_type_clash(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"type": 3}\n{"kind": "A", "type": "B"}\n')
    assert "row 1 (line 1), column 'type': event type must be a non-empty string, found 3" in error_of(path)
    assert "row 2 (line 2), column 'type': a 'type' column clashes with the type column 'kind'" in error_of(
        path, type_col="kind"
    )


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "e.xml"
    path.write_text("<x/>")
    assert "unknown event file format '.xml'" in error_of(path)


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_events(tmp_path / "nope.jsonl")


# ----------------------------------------------------------------- round trip property

names = st.text(alphabet="abcXYZ_", min_size=1, max_size=4).filter(lambda s: s not in ("type", "t"))
int_values = st.integers(min_value=-(2**40), max_value=2**40)
float_values = st.floats(allow_nan=False, allow_infinity=False, width=64)
str_values = st.text(alphabet="abc xyz,\"'é", min_size=1, max_size=5).filter(lambda s: s.strip() == s)


@st.composite
def typed_records(draw: st.DrawFn) -> tuple[Schema, list[dict[str, object]]]:
    kinds = draw(st.dictionaries(names, st.sampled_from(["int", "float", "str", "bool"]), max_size=4))
    types = draw(st.lists(st.sampled_from(["A", "B", "C"]), min_size=1, max_size=3, unique=True))
    by_kind = {"int": int_values, "float": float_values, "str": str_values, "bool": st.booleans()}
    records = []
    for _ in range(draw(st.integers(0, 8))):
        record: dict[str, object] = {"type": draw(st.sampled_from(types)), "t": draw(st.integers(0, 3))}
        for attr, kind in kinds.items():
            if draw(st.booleans()):
                record[attr] = draw(by_kind[kind])
        records.append(record)
    schema = Schema.of({t: [*kinds, "t"] for t in types}, {**kinds, "t": "int"})
    return schema, records


def _write(records: list[dict[str, object]], path: Path, columns: list[str]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif path.suffix == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for r in records:
                writer.writerow(["" if r.get(c) is None else repr(r[c]) if isinstance(r[c], float)
                                 else str(r[c]).lower() if isinstance(r[c], bool) else r[c]
                                 for c in columns])
    else:
        pq.write_table(pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in records]), path)


@settings(max_examples=max(20, settings().max_examples // 3))  # writes files
@given(typed_records(), st.sampled_from([".jsonl", ".csv", ".parquet"]))
def test_every_format_round_trips_with_a_schema(
    tmp_path_factory: pytest.TempPathFactory, data: tuple[Schema, list[dict[str, object]]], suffix: str
) -> None:
    schema, records = data
    if suffix == ".parquet" and not records:
        return
    path = tmp_path_factory.mktemp("rt") / f"events{suffix}"
    _write(records, path, ["type", *dict(schema.kinds)])
    events, got_schema = read_events(path, schema=schema, time_col="t")
    order = sorted(range(len(records)), key=lambda i: records[i]["t"])  # type: ignore[arg-type,return-value]
    assert events == [Event.make(pos, records[i]) for pos, i in enumerate(order)]  # type: ignore[arg-type]
    assert got_schema == schema
    # without a schema the same events come back, with kinds inferred
    inferred_events, inferred = read_events(path, time_col="t")
    assert inferred_events == events  # (1 == 1.0: an int-looking float column may come back int)
    assert {kind for _, kind in inferred.kinds} <= {"int", "float", "str", "bool"}


def test_jsonl_string_with_unicode_line_separator(tmp_path: Path) -> None:
    """U+2028 inside a JSON string is data, not a line break."""
    path = tmp_path / "e.jsonl"
    path.write_text('{"type": "A", "s": "x\u2028y"}\n{"type": "A"}\n', encoding="utf-8")
    events, _ = read_events(path)
    assert [e.get("s") for e in events] == ["x\u2028y", None]


def test_time_column_joins_a_given_schema() -> None:
    """The time column stays an attribute even when the schema file does not list it."""
    events, schema = read_events(DATA / "stocks.csv", time_col="ts",
                                 schema=read_schema(DATA / "stocks_schema.json"))
    assert schema.attributes("SELL") == ("type", "name", "price", "ts")
    assert schema.kind("ts") == "int"
    assert events[0].get("ts") == 0


def _same_schema(a: Schema, b: Schema) -> bool:
    """Equal up to the order of each type's attributes."""
    return a.kinds == b.kinds and [(t, set(x)) for t, x in a.types] == [(t, set(x)) for t, x in b.types]


@settings(max_examples=max(20, settings().max_examples // 3))
@given(typed_records(), st.booleans())
def test_arrow_fast_path_equals_the_row_path(
    data: tuple[Schema, list[dict[str, object]]], sort: bool
) -> None:
    schema, records = data
    columns = ["type", *dict(schema.kinds)]
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in records])
    time_col = "t" if sort else None
    if not records:
        return
    fast = events_from_arrow(table, time_col=time_col)
    slow = events_from_records(
        [{k: v for k, v in r.items() if v is not None} for r in table.to_pylist()], time_col=time_col
    )
    assert fast[0] == slow[0]
    assert [e.attrs for e in fast[0]] == [e.attrs for e in slow[0]]  # same value types too
    assert _same_schema(fast[1], slow[1])


def test_arrow_fast_path_sort_is_stable_and_nan_is_null() -> None:
    table = pa.table({"type": ["A", "B", "C", "D"], "t": [1, 0, 1, 0], "x": [1.5, math.nan, None, 2.0]})
    events, schema = events_from_arrow(table, time_col="t")
    assert [e.type for e in events] == ["B", "D", "A", "C"]
    assert events[0] == Event.make(0, {"type": "B", "t": 0})
    assert schema.attributes("B") == ("type", "t") and schema.attributes("A") == ("type", "t", "x")
    # a NULL type is reported with its row
    with pytest.raises(DataError, match="row 2, column 'type': event type is NULL"):
        events_from_arrow(pa.table({"type": ["A", None]}))


def test_arrow_inference_counts_only_columns_with_nulls_per_type() -> None:
    """Each type mentions the attributes it has a value of: a column without NULL in a
    batch is mentioned by every type there (no count per type), one with NULLs only by the
    types holding a value, one all NULL by none (arrow_source._mentions)."""
    import pyarrow as pa

    from acel.io import open_events

    mixed = pa.table({"type": ["A", "B", "A", "B"], "v": [1, None, 2, None], "w": [1.5, 2.5, 3.5, 4.5],
                      "z": [None, None, None, None]})
    schema = open_events(mixed).schema
    assert [(t, schema.attributes(t)) for t in schema.type_names()] == [("A", ("type", "v", "w")), ("B", ("type", "w"))]
    assert dict(schema.kinds) == {"v": "int", "w": "float"}
    dense = open_events(pa.table({"type": ["A", "B"], "v": [1, 2], "w": [1.5, 2.5]})).schema
    assert [(t, dense.attributes(t)) for t in dense.type_names()] == [("A", ("type", "v", "w")), ("B", ("type", "v", "w"))]
