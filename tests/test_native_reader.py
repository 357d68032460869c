"""The native JSON Lines reader against the pure-Python one (issue 23).

For every text -- valid, broken, hostile -- ``ACEL_NATIVE=1`` and ``ACEL_NATIVE=0`` give
the same schema, the same events in the same batches and the same order facts, or the
same one-line error.  The pure path stays the fallback when the extension is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acel.io import native_scan, open_events, record_pass
from acel.io.columns import ColumnSpec, blocks_of_rows
from acel.io.native_switch import NativeUnavailable
from acel.lang.errors import DataError
from acel.lang.schema import Schema

native = pytest.importorskip("acel.io._native_reader")

OPTIONS: list[dict[str, Any]] = [{}, {"time_col": "ts"}, {"watch": ["v"]}, {"time_col": "ts", "watch": ["v"]}]
SCHEMAS = [
    Schema.of({"A": ["ts", "v", "w"], "B": ["ts", "v"], "C": ["ts"]}, {"ts": "int", "v": "int", "w": "str"}),
    Schema.of({"A": ["ts", "v"], "B": ["v"]}, {"ts": "float", "v": "float"}),
    Schema.of({"A": ["ts", "v"], "B": ["ts", "v"], "C": ["ts", "v"]}, {"ts": "int"}),  # v's kind open
]
OPTIONS += [{"schema": schema} for schema in SCHEMAS] + [{"schema": SCHEMAS[0], "time_col": "ts"}]


def outcome(path: Path, mode: str, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    """What a reader makes of a file: schema, batches, facts (int64 aside), or the error."""
    monkeypatch.setenv("ACEL_NATIVE", mode)
    try:
        stream = open_events(path, **options)
        batches = list(stream.batches())
    except DataError as error:
        return ("error", str(error))
    facts = stream.facts
    noted = None if facts is None else (facts.count, facts.sorted_by_time, facts.plain, facts.monotone)
    return (stream.schema, batches, noted, stream.sort, stream.read)


def same(path: Path, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    pure = outcome(path, "0", monkeypatch, **options)
    fast = outcome(path, "1", monkeypatch, **options)
    assert fast == pure
    return pure


# ------------------------------------------------------------------ examples

W0 = [{"type": t, "ts": i, "v": (i * 37) % 100} for i, t in enumerate("ABBCABBBCA" * 5)]


def write(tmp_path: Path, text: str | bytes, name: str = "e.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.mark.parametrize("options", OPTIONS)
def test_w0_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]) -> None:
    got = same(write(tmp_path, lines(W0)), monkeypatch, **options)
    if "schema" not in options:
        assert [a for b in got[1] for a in b] == W0


HOSTILE = [
    '{"type":"A","v":1,"v":2}\n',  # a key twice
    '{"type":"A","v":1,"v" :2}\n',  # a key twice, spaced (issue 36 D10)
    '{"type":"A","v" :1,"v":2}\n{"type":"A","v":1,"v"\t:2}\n',
    '{"type":"A","v":"a\\"b"}\n',  # an escape
    '{"type":"A","v":"\\ud800"}\n',  # a lone surrogate
    '{"type":"A","v":123456789012345678901234567890}\n',  # beyond 64 bits
    '{"type":"A","v":9223372036854775807}\n{"type":"A","v":1}\n',  # 19 digits
    '{"type":"A","v":1e400}\n',  # overflow
    '{"type":"A","v":1.5}\n{"type":"A","v":2}\n',  # int and float mix as float
    '{"type":"A","v":{"x":1}}\n',  # nested
    '{"type":"A","v":[1]}\n',
    '[1,2]\n',
    '{"type":"A","v":1}\n{"type":"A","v":"x"}\n',  # mixed kinds
    '{"type":"A","v":NaN}\n',
    '{"type":"A","v":Infinity}\n',
    '{"type":"A","v":null}\n{"type":"A"}\n',
    '{"type":1,"v":1}\n',
    '{"type":"","v":1}\n',
    '{"v":1}\n',
    '{"type":"A","ts":"2020-01-01","v":1}\n{"type":"A","ts":"x","v":1}\n',
    '{"type":"A","ts":3,"v":1}\n{"type":"A","ts":2,"v":1.0}\n\n  \n{"type":"B","ts":1}\r\n',
    '{"type":"A","v":1}',  # no final newline
    '\ufeff{"type":"A","v":1}\n',  # a BOM
    '{"type":"A" , "v" : -0 , "w":-0.0,"x":true,"y":false}  \n',
    '{"type":"A","v":1}\x0c\n',
    '{"type":"A","v":"caf\u00e9 \u2028"}\n',
    '{"type":"A","v":01}\n',
    '{"type":"A","v":1.}\n',
    '{}\n',
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("options", OPTIONS)
def test_hostile_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, options: dict[str, Any]) -> None:
    same(write(tmp_path, text), monkeypatch, **options)


@pytest.mark.parametrize("line", [
    b'{"type":"A","v":1,"v" :2}', b'{"type":"A","v":1,"v"\t:2}', b'{"type":"A","v" :1,"v":2}',
    b'{"type":"A","v"  :  1 , "v"\r:2}', b'{"type":"A","v":1,"v":2}', b'{"type":"A","s":"\\":","v":1,"v" :2}',
])
def test_a_key_twice_however_spaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: bytes) -> None:
    """Issue 36 D10: whitespace before a colon hid a repeated key from the fast check, and the
    last value was kept silently; both paths now report it with the one message."""
    got = same(write(tmp_path, b'{"type":"A","v":0}\n' + line + b"\n"), monkeypatch)
    assert got[0] == "error"
    assert "row 2 (line 2): duplicate key: key 'v' appears twice (1, then 2)" in got[1]


def test_bad_utf8_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = same(write(tmp_path, b'{"type":"A","v":1}\n{"type":"A","v":"\xff"}\n'), monkeypatch)
    assert got[0] == "error" and "row 2 (line 2)" in got[1] and "not UTF-8" in got[1]


def test_long_file_crosses_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_pass, "BLOCK", 100)
    records = W0 * 400 + [{"type": "A", "ts": 10**30, "v": 1}]
    got = same(write(tmp_path, lines(records)), monkeypatch, time_col="ts")
    assert sum(len(b) for b in got[1]) == len(records) and max(len(b) for b in got[1]) == 8192


def test_fallback_when_not_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def refuse(name: str, package: str | None = None) -> Any:
        if name == "acel.io._native_reader":
            raise ImportError("not built")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", refuse)
    path = write(tmp_path, lines(W0))
    monkeypatch.setenv("ACEL_NATIVE", "auto")
    assert native_scan.reader() is None
    assert [a for b in open_events(path).batches() for a in b] == W0
    monkeypatch.setenv("ACEL_NATIVE", "1")
    with pytest.raises(NativeUnavailable, match="not built"):
        open_events(path)


def test_arrow_batches_hold_the_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    monkeypatch.setenv("ACEL_NATIVE", "1")
    records: list[dict[str, Any]] = [*W0, {"type": "C", "ts": 99, "v": 2.5, "w": None}]
    stream = open_events(write(tmp_path, lines(records)))
    arrow = stream.arrow_batches()
    assert arrow is not None
    table = pa.Table.from_batches(list(arrow))
    assert table.schema.names == ["ts", "type", "v", "w"]  # w: mentioned, only ever NULL
    assert [str(t) for t in table.schema.types] == ["int64", "string", "double", "string"]
    expected = [{"ts": r["ts"], "type": r["type"], "v": float(r["v"]), "w": None} for r in records]
    assert table.to_pylist() == expected
    assert stream.read == len(records)


def test_arrow_batches_decline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACEL_NATIVE", "1")
    wide = write(tmp_path, '{"type":"A","v":99999999999999999999}\n')
    assert open_events(wide).arrow_batches() is None  # beyond int64
    monkeypatch.setenv("ACEL_NATIVE", "0")
    assert open_events(write(tmp_path, lines(W0))).arrow_batches() is None  # not known to fit


def test_arrow_batches_from_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "v": r["v"] if r["type"] != "C" else None} for r in W0]), path)
    stream = open_events(path)
    arrow = stream.arrow_batches()
    assert arrow is not None
    rows = pa.Table.from_batches(list(arrow)).to_pylist()
    again = [dict(sorted(a.items())) for b in open_events(path).batches() for a in b]
    assert rows == again


# ------------------------------------------------------------------ properties

KEYS = st.sampled_from(["type", "ts", "v", "w", "é"])
VALUES = st.one_of(
    st.sampled_from(["A", "B", "", "x\"y", "\u2028", "\ud800"]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.just([1]),
)


@st.composite
def json_text(draw: st.DrawFn) -> bytes:
    out = []
    for _ in range(draw(st.integers(0, 8))):
        choice = draw(st.integers(0, 9))
        if choice == 0:
            out.append(draw(st.sampled_from([b"", b"  ", b"{", b"nul", b"[]", b"\xff", b"{\"type\":\"A\",}"])))
        else:
            pairs = draw(st.lists(st.tuples(KEYS, VALUES), max_size=4))
            body = ",".join(json.dumps(k) + ":" + json.dumps(v) for k, v in pairs)
            if choice == 1:
                body = body.replace(":", " : ", 1)
            line = "{" + body + "}"
            out.append(line.encode("utf-8", "surrogatepass"))
    sep = draw(st.sampled_from([b"\n", b"\r\n"]))
    return sep.join(out) + draw(st.sampled_from([b"", sep]))


@given(text=json_text(), options=st.sampled_from(OPTIONS))
def test_native_equals_pure(tmp_path_factory: pytest.TempPathFactory, text: bytes, options: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("p") / "e.jsonl"
    path.write_bytes(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(path, monkeypatch, **options)


# ------------------------------------------------------------------ CSV

CSV_HOSTILE = [
    "type,ts,v\nA,1,5\nB,2,\n\nC,3, 7 \r\n",
    '"type","ts","v"\nA,1,5\n',  # a quoted header (as pyarrow writes it)
    'type,ts,v\nA,1,"5"\n',  # a quote: the Python reader
    "type,ts,v\nA,1,5\nB,2\n",  # ragged
    "type,ts,v\nA,1,5\n,2,3\n",  # no type
    "type,ts,v\nA,1,1.5\nA,2,nan\nA,3,inf\n",
    "type,ts,v\nA,1,1.5\nA,2,-.5e3\nA,3,+7\n",
    "type,ts,v\nA,1,true\nA,2,FALSE\n",
    "type,ts,v\nA,1,x\nA,2,5\n",
    "type,ts,v\nA,3,5\nA,2,4\nA,1,\n",
    "type,ts,v\nA,1,١٢\n",  # Unicode digits: Python's int
    "type,ts,v\nA,1,\u00a05\n",  # a Unicode space
    "type,ts,v\nA,1,café\n",
    "type,ts,v\nA,1,123456789012345678901234\n",
    "type,ts,v\nA,1,5\x1f\n",
    "type,ts,v\nA,1,5\rB,2,3\n",
    "\ufefftype,ts,v\nA,1,5",
    "type,ts,v\n",
    "type\nA\n \n",
]


@pytest.mark.parametrize("text", CSV_HOSTILE)
@pytest.mark.parametrize("options", OPTIONS)
def test_hostile_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, options: dict[str, Any]) -> None:
    same(write(tmp_path, text, "e.csv"), monkeypatch, **options)


def test_csv_w0_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "type,ts,v\n" + "".join(f"{r['type']},{r['ts']},{r['v']}\n" for r in W0)
    got = same(write(tmp_path, text, "e.csv"), monkeypatch, time_col="ts")
    assert [a for b in got[1] for a in b] == W0


CELLS = st.one_of(
    st.sampled_from(["", "A", "B", " 5", "5 ", "-0", "+3", "1.5", ".5", "5.", "1e3", "nan", "inf", "TRUE",
                     "false", "x", "é", "\u00a05", '"q"', '"a,b"', "9" * 20, "\t"]),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


@st.composite
def csv_text(draw: st.DrawFn) -> bytes:
    width = draw(st.integers(1, 4))
    header = ["type", "ts", "v", "w"][:width]
    out = [",".join(header)]
    for _ in range(draw(st.integers(0, 8))):
        cells = draw(st.lists(CELLS, min_size=width - (draw(st.integers(0, 9)) == 0), max_size=width))
        out.append(",".join(cells))
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    return (sep.join(out) + draw(st.sampled_from(["", sep]))).encode("utf-8")


@given(text=csv_text(), options=st.sampled_from(OPTIONS))
def test_native_csv_equals_pure(tmp_path_factory: pytest.TempPathFactory, text: bytes, options: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("p") / "e.csv"
    path.write_bytes(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(path, monkeypatch, **options)


@pytest.mark.parametrize(
    ("name", "text", "options"),
    [
        ("e.jsonl", lines(W0), {}),
        ("e.jsonl", lines(W0), {"schema": Schema.of({t: ["ts", "v"] for t in "ABC"}, {"ts": "int", "v": "int"})}),
        ("e.csv", "type,ts,v\n" + "".join(f"{r['type']},{r['ts']},{r['v']}\n" for r in W0), {"time_col": "ts"}),
        ("e.csv", "type,ts,v\n" + "".join(f"{r['type']},{r['ts']},{r['v']}\n" for r in W0),
         {"schema": Schema.of({t: ["ts", "v"] for t in "ABC"}, {"ts": "int", "v": "int"})}),
    ],
)
def test_the_scanner_reads_the_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str,
                                      options: dict[str, Any]) -> None:
    """The native path is taken (not silently the pure one): the scanner makes the events."""
    calls: list[str] = []

    class Counting:
        def __getattr__(self, attr: str) -> Any:
            calls.append(attr)
            return getattr(native, attr)

    monkeypatch.setattr(native_scan, "reader", lambda: Counting())
    events = [a for b in open_events(write(tmp_path, text, name), **options).batches() for a in b]
    assert events == W0 and "emit" in calls


@pytest.mark.parametrize("options", [{"type_col": "kind"}, {"type_col": "kind", "time_col": "t"}])
def test_arrow_batches_from_parquet_as_the_dicts(tmp_path: Path, options: dict[str, Any]) -> None:
    """Arrow's own batches, laid out: the type column renamed, int32 and float32 widened,
    NaN NULL, ints beyond 2^53 exact, sorted by time when asked: as the dicts give them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from acel.io.columns import arrow_schema, as_record_batches

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({
        "kind": pa.array(["A", "B", "A"]),
        "t": pa.array([3, 1, 2], pa.int32()),
        "v": pa.array([1, None, 2**60], pa.int64()),
        "w": pa.array([1.5, float("nan"), 2.0], pa.float32()),
    }), path)
    arrow = open_events(path, **options).arrow_batches()
    assert arrow is not None
    got = pa.Table.from_batches(list(arrow)).to_pylist()
    stream = open_events(path, **options)
    expected = pa.Table.from_batches(list(as_record_batches(stream.batches(), arrow_schema(stream.schema))))
    assert got == expected.to_pylist()
    assert {"t": 2, "type": "A", "v": 2**60, "w": 2.0} in got
    assert [r["w"] for r in got if r["type"] == "B"] == [None]  # NaN is NULL
    if "time_col" in options:
        assert [r["t"] for r in got] == [1, 2, 3]


# ------------------------------------------------------------------ typed columns

COLUMNS = ColumnSpec(("type", "ts", "v", "w", "x"), ("A", "B"))


def as_maps(events: list[dict[str, Any]], spec: ColumnSpec) -> list[dict[str, Any]]:
    """Events as the columns hold them: the spec's attributes, NULLs left out."""
    return [{n: e[n] for n in spec.names if e.get(n) is not None} for e in events]


def column_outcome(path: Path, monkeypatch: pytest.MonkeyPatch, spec: ColumnSpec, **options: Any) -> Any:
    """The events of the typed-column pass (blocks and the lines left as maps), or ``None``
    when the stream offers no columns, or the error."""
    monkeypatch.setenv("ACEL_NATIVE", "1")
    try:
        stream = open_events(path, **options)
        blocks = stream.column_blocks(spec)
        if blocks is None:
            return None
        out: list[dict[str, Any]] = []
        for block in blocks:
            out.extend(as_maps(block, spec) if isinstance(block, list) else block.rows())
    except DataError as error:
        return ("error", str(error))
    return out, stream.read


def same_columns(path: Path, monkeypatch: pytest.MonkeyPatch, spec: ColumnSpec = COLUMNS,
                 **options: Any) -> Any:
    """The column pass holds exactly the pure reader's events (or fails alike)."""
    pure = outcome(path, "0", monkeypatch, **options)
    got = column_outcome(path, monkeypatch, spec, **options)
    if got is None:
        return None
    if pure[0] == "error":
        assert got == pure
        return got
    events = [e for batch in pure[1] for e in batch]
    assert got == (as_maps(events, spec), pure[4])
    return got


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_lines_in_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    same_columns(write(tmp_path, text), monkeypatch)


def test_w0_in_columns_crosses_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_pass, "BLOCK", 100)
    monkeypatch.setattr(record_pass, "BATCH", 64)
    records = W0 * 40 + [{"type": "C", "ts": 2**70, "v": 1}, {"type": "Q", "ts": 1.5, "v": None}] + W0
    got = same_columns(write(tmp_path, lines(records)), monkeypatch)
    assert got is not None and len(got[0]) == len(records) == got[1]


def test_columns_hold_floats_as_the_dicts_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An int of a float attribute is a float in its column, as in the dict path."""
    records = [{"type": "A", "ts": 1, "v": 2.5}, {"type": "B", "ts": 2, "v": 3}, {"type": "A", "ts": 3}]
    got = same_columns(write(tmp_path, lines(records)), monkeypatch, COLUMNS.with_floats(["v"]))
    assert got is not None and [type(e.get("v")) for e in got[0]] == [float, float, type(None)]


def test_no_columns_without_the_scanner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure reader (ACEL_NATIVE=0, or the extension not built) offers no columns, nor does
    a stream sorted by time: the engine reads attribute maps, as before."""
    path = write(tmp_path, lines(W0))
    monkeypatch.setenv("ACEL_NATIVE", "0")
    assert open_events(path).column_blocks(COLUMNS) is None
    monkeypatch.setenv("ACEL_NATIVE", "auto")
    monkeypatch.setattr(native_scan, "reader", lambda: None)
    assert open_events(path).column_blocks(COLUMNS) is None
    monkeypatch.undo()
    shuffled = W0[3:] + W0[:3]
    assert column_outcome(write(tmp_path, lines(shuffled), "s.jsonl"), monkeypatch, COLUMNS, time_col="ts") is None


def test_the_pure_adapter_equals_the_scanner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``blocks_of_rows`` (the adapter for streams without the scanner) gives the same blocks."""
    records = W0 + [{"type": "Z", "ts": 99, "v": 2**64}, {"type": "B", "ts": 100, "x": True, "w": "s"},
                     {"type": "Y", "ts": 101, "w": "t"}] + W0
    path = write(tmp_path, lines(records))
    monkeypatch.setenv("ACEL_NATIVE", "1")
    scanned = list(open_events(path).column_blocks(COLUMNS) or [])
    adapted = list(blocks_of_rows(COLUMNS, open_events(path).batches()))
    assert [b if isinstance(b, list) else (b.rows(), b.types) for b in scanned] == [
        b if isinstance(b, list) else (b.rows(), b.types) for b in adapted
    ]


@given(text=json_text())
def test_columns_equal_pure(tmp_path_factory: pytest.TempPathFactory, text: bytes) -> None:
    path = tmp_path_factory.mktemp("c") / "e.jsonl"
    path.write_bytes(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        same_columns(path, monkeypatch)


@pytest.mark.parametrize("text", CSV_HOSTILE)
def test_hostile_csv_in_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    same_columns(write(tmp_path, text, "e.csv"), monkeypatch, ColumnSpec(("type", "ts", "v"), ("A",)))


def test_csv_w0_in_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_pass, "BATCH", 16)
    body = "".join(f"{r['type']},{r['ts']},{r['v']}\n" for r in W0)
    got = same_columns(write(tmp_path, "type,ts,v\n" + body, "w0.csv"), monkeypatch,
                       ColumnSpec(("type", "ts", "v"), ("A", "B")))
    assert got is not None and len(got[0]) == len(W0)
