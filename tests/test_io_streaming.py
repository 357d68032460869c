"""The streaming readers: stable external time sort, order facts, checks per record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acel.io import open_events, read_schema
from acel.io.sorting import sort_by_time
from acel.lang.errors import DataError
from acel.lang.schema import Schema


@given(st.lists(st.integers(0, 5), max_size=40), st.integers(1, 7))
def test_the_external_sort_is_the_stable_sort(keys: list[int], chunk: int) -> None:
    items = [(key, {"n": n}) for n, key in enumerate(keys)]
    got = [attrs["n"] for attrs in sort_by_time(iter(items), chunk=chunk)]
    assert got == [n for n, _ in sorted(enumerate(keys), key=lambda pair: pair[1])]


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_file_longer_than_the_sort_chunk_is_sorted_through_spilled_runs(tmp_path: Path) -> None:
    records = [{"type": "A", "ts": (7 * k) % 10, "k": k} for k in range(25)]
    path = _jsonl(tmp_path / "e.jsonl", records)
    stream = open_events(path, time_col="ts", chunk=3)
    assert stream.sort and stream.facts is not None and not stream.facts.sorted_by_time
    got = [(e.get("ts"), e.get("k")) for e in stream.events()]
    assert got == sorted(((r["ts"], r["k"]) for r in records), key=lambda p: p[0])


def test_a_sorted_file_is_not_sorted_again_and_its_order_is_known(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "e.jsonl", [{"type": "A", "ts": k // 2, "x": -k} for k in range(10)])
    stream = open_events(path, time_col="ts", watch=["x"])
    assert not stream.sort and stream.monotone("ts") is True
    assert stream.monotone("x") is False  # file order is stream order: x decreases
    plain = open_events(path, watch=["ts", "x"])
    assert plain.monotone("ts") is True and plain.monotone("x") is False


def test_a_given_schema_checks_records_as_they_stream_and_reports_them_all(tmp_path: Path) -> None:
    records: list[dict[str, object]] = [{"type": "A", "v": k} for k in range(20)]
    records[5]["v"] = "five"
    records[12]["w"] = 1
    path = _jsonl(tmp_path / "e.jsonl", records)
    schema = Schema.of({"A": ["v"]}, {"v": "int"})
    stream = open_events(path, schema=schema)
    handed: list[int] = []
    with pytest.raises(DataError) as error:
        for batch in stream.batches():
            handed.extend(e["v"] for e in batch)
    assert "2 bad rows" in str(error.value)
    assert "row 6 (line 6), column 'v'" in str(error.value)
    assert "row 13 (line 13), column 'w'" in str(error.value)
    assert handed == []  # the batch holding the first problem never reached the engine


def test_a_schema_file_round_trip_gives_the_one_pass_reader_the_same_events(tmp_path: Path) -> None:
    from acel.io import write_schema

    records = [{"type": "A" if k % 3 else "B", "v": k, "f": k / 2} for k in range(30)]
    path = _jsonl(tmp_path / "e.jsonl", records)
    two = open_events(path)
    write_schema(two.schema, tmp_path / "s.json")
    one = open_events(path, schema=read_schema(tmp_path / "s.json"))
    assert one.events() == two.events()


def _events(path: Path, schema: Schema | None, **kw: object) -> list[dict[str, object]]:
    stream = open_events(path, schema=schema, **kw)  # type: ignore[arg-type]
    return [{k: v for k, v in e.items() if v is not None} for b in stream.batches() for e in b]


def test_parquet_with_a_fitting_schema_reads_column_wise_with_the_same_events(tmp_path: Path) -> None:
    """A given schema the columns fit takes the columnar path: same events as the row-wise
    check (an int column of a float attribute becomes floats), the schema's kinds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"type": ["A", "B", "A"], "ts": [3, 1, 2], "v": [1, 2, None]}), path)
    schema = Schema.of({"A": ["ts", "v"], "B": ["ts", "v"]}, {"ts": "int", "v": "float"})
    events = _events(path, schema, time_col="ts")
    assert events == [{"type": "B", "ts": 1, "v": 2.0}, {"type": "A", "ts": 2},
                      {"type": "A", "ts": 3, "v": 1.0}]
    assert all(type(e.get("v", 0.0)) is float for e in events)
    assert dict(open_events(path, schema=schema).schema.kinds)["v"] == "float"
    # a schema without kinds takes the columns' kinds
    open_kinds = open_events(path, schema=Schema.of({"A": ["ts", "v"], "B": ["ts", "v"]}))
    assert dict(open_kinds.schema.kinds) == {"ts": "int", "v": "int"}


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        (Schema.of({"A": ["v"]}, {"v": "int"}), "unknown event type 'B'"),
        (Schema.of({"A": ["v"], "B": []}, {"v": "int"}), "attribute 'v' is not in the schema of type 'B'"),
        (Schema.of({"A": ["v"], "B": ["v"]}, {"v": "str"}), "the schema says str"),
    ],
)
def test_parquet_that_does_not_fit_the_schema_names_its_rows(
    tmp_path: Path, schema: Schema, words: str
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"type": ["A", "B"], "v": [1, 2]}), path)
    with pytest.raises(DataError, match="row 2" if "type" in words else "row 1") as info:
        _events(path, schema)
    assert words in str(info.value)
