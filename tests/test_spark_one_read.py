"""The driver reads a Parquet file read in place once (issue 31): the key and ``ON``
facts are counted from the batches the reader's check reads (``file_facts.Tally``),
and they equal the facts of the second read they replace (``ACEL_SPARK_ONE_READ=0``).

No Spark session: ``in_place.check`` is the driver's pyarrow work alone.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from acel.lang.schema import Schema


def _write(path: Path, columns: dict[str, Any], group: int) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path, row_group_size=group)
    return str(path)


def _columns(n: int, seed: int, *, float_keys: bool = False, float_axis: bool = False) -> dict[str, Any]:
    """Keys NULL (and NaN) on some rows, ``ts`` never decreasing with NULLs on keyless
    rows, a text key, a float column with NaN."""
    import pyarrow as pa

    rng = random.Random(seed)
    types, ts, k, s, f = [], [], [], [], []
    t = 0
    for _ in range(n):
        t += rng.choice([0, 1, 1])
        key = None if rng.random() < 0.1 else rng.randrange(12)
        types.append(rng.choice("AABC"))
        ts.append(None if key is None and rng.random() < 0.5 else (t + 0.5 if float_axis else t))
        if float_keys:
            k.append(float("nan") if key is None and rng.random() < 0.5 else (None if key is None else key / 2))
        else:
            k.append(key)
        s.append(None if rng.random() < 0.05 else rng.choice(["x", "y", "z"]))
        f.append(rng.choice([float("nan"), 1.5, None]))
    return {"type": types, "ts": pa.array(ts, pa.float64() if float_axis else pa.int64()),
            "k": pa.array(k, pa.float64() if float_keys else pa.int32()), "s": s, "f": f}


def _handed(monkeypatch: Any) -> list[Any]:
    """What each ``Tally.facts`` call handed over (``None``: counted again)."""
    from acel.spark_backend import file_facts

    handed: list[Any] = []
    original = file_facts.Tally.facts

    def spy(self: Any, layout: Any, kinds: dict[str, str]) -> Any:
        handed.append(original(self, layout, kinds))
        return handed[-1]

    monkeypatch.setattr(file_facts.Tally, "facts", spy)
    return handed


def _both(monkeypatch: Any, path: str, **kw: Any) -> tuple[Any, Any]:
    from acel.spark_backend import in_place

    monkeypatch.setenv(in_place.ONE_READ_ENV, "0")
    twice = in_place.check(path, **kw)
    monkeypatch.setenv(in_place.ONE_READ_ENV, "1")
    once = in_place.check(path, **kw)
    return twice, once


@pytest.mark.parametrize("group", [7, 100, 5000])
@pytest.mark.parametrize("float_keys, float_axis", [(False, False), (True, True)])
@pytest.mark.parametrize("keys", [("k",), ("k", "s"), ("s", "type"), ()])
def test_the_facts_of_one_read_equal_the_second_reads(
    tmp_path: Path, monkeypatch: Any, group: int, float_keys: bool, float_axis: bool, keys: tuple[str, ...]
) -> None:
    path = _write(tmp_path / "e.parquet", _columns(3000, group, float_keys=float_keys, float_axis=float_axis), group)
    kw = {"type_col": "type", "time_col": None, "schema": None, "keys": keys, "axes": ("ts",)}
    handed = _handed(monkeypatch)
    twice, once = _both(monkeypatch, path, **kw)
    assert twice is not None and once == twice
    assert len(handed) == 1 and handed[0] is once.facts  # counted in the check's own read
    assert once.facts.axis["ts"][0] is True
    if keys:
        assert once.facts.sizes and sum(once.facts.sizes.values()) <= 3000


def test_an_out_of_order_axis_and_many_keys_are_counted_alike(tmp_path: Path, monkeypatch: Any) -> None:
    from acel.spark_backend.scan import MAX_KEYS

    n = MAX_KEYS + 50
    columns = {"type": ["A", "B"] * (n // 2), "ts": list(range(n))[::-1], "k": list(range(n))}
    path = _write(tmp_path / "e.parquet", columns, 333)
    twice, once = _both(monkeypatch, path, type_col="type", time_col=None, schema=None, keys=("k",),
                        axes=("ts",))
    assert once == twice and once.facts.sizes is None and once.facts.axis["ts"][0] is False


def test_another_type_column_and_a_key_named_type(tmp_path: Path, monkeypatch: Any) -> None:
    columns = {"kind": ["A", "B", "C", "B"] * 50, "ts": list(range(200)), "k": [1, 2] * 100}
    path = _write(tmp_path / "e.parquet", columns, 30)
    twice, once = _both(monkeypatch, path, type_col="kind", time_col=None, schema=None,
                        keys=("type", "k"), axes=("ts",))
    assert once == twice and once.facts.sizes == {("A", 1): 50, ("B", 2): 100, ("C", 1): 50}


def test_a_schema_making_an_int_key_a_float_counts_it_again(tmp_path: Path, monkeypatch: Any) -> None:
    """The column's int64 is not the events' float64: the tally hands nothing over and
    the facts come from the second read, as before (keys as floats)."""
    columns = {"type": ["A", "B"] * 50, "ts": list(range(100)), "k": [1, 2, 3, 4] * 25}
    path = _write(tmp_path / "e.parquet", columns, 30)
    schema = Schema.of({"A": ["ts", "k"], "B": ["ts", "k"]}, {"ts": "int", "k": "float"})
    handed = _handed(monkeypatch)
    twice, once = _both(monkeypatch, path, type_col="type", time_col=None, schema=schema, keys=("k",),
                        axes=("ts",))
    assert handed == [None]
    assert once == twice and set(once.facts.sizes) == {(1.0,), (2.0,), (3.0,), (4.0,)}
    assert all(type(k[0]) is float for k in once.facts.sizes)


def test_a_key_no_event_holds_and_an_all_null_axis(tmp_path: Path, monkeypatch: Any) -> None:
    import pyarrow as pa

    columns = {"type": ["A", "B"] * 20, "ts": pa.array([None] * 40, pa.int64()), "k": [1] * 40}
    path = _write(tmp_path / "e.parquet", columns, 7)
    for keys in [("k",), ("nokey",)]:
        twice, once = _both(monkeypatch, path, type_col="type", time_col=None, schema=None, keys=keys,
                            axes=("ts",))
        assert once == twice


@pytest.mark.parametrize("seed", range(6))
def test_bracketed_slices_cut_to_the_rows_a_second_read_counts(tmp_path: Path, monkeypatch: Any,
                                                                seed: int) -> None:
    """The check's marks of the ``ON`` axis bracket each slice's rows; cut to the exact
    rows from the bracket's own rows, every slice gets ``slice_cuts``'s rows (the axis
    read again over the whole file), with NULLs, ties and marks inside a slice."""
    import pyarrow.parquet as pq
    from acel.spark_backend import direct_read, file_facts
    from acel.spark_backend.partitioning import Slicing

    monkeypatch.setattr(file_facts, "AXIS_STEP", 37)
    rng = random.Random(seed)
    float_axis = seed % 2 == 1
    n = 5000
    path = _write(tmp_path / "e.parquet", _columns(n, seed, float_axis=float_axis), rng.choice([64, 700, 5000]))
    checked = _both(monkeypatch, path, type_col="type", time_col=None, schema=None, keys=("k",),
                    axes=("ts",))[1]
    index = checked.place.index["ts"]
    assert list(index.rows[:3]) == [0, 37, 74] and index.rows[-1] == n
    axis = pq.read_table(path)
    length = rng.choice([1, 7, 50, 333])
    slicing = Slicing(length, rng.choice([0, 3, 11]), rng.choice([0, 5]))
    last = int(checked.facts.axis["ts"][2] // length)
    exact = direct_read.slice_cuts(path, "ts", slicing, -1, last + 1)
    for (k, lo, hi), (k2, b_lo, b_hi, start, end) in zip(
            exact, direct_read.bracketed_cuts(index, slicing, -1, last + 1)):
        assert k == k2 and b_lo <= lo and hi <= b_hi
        got = direct_read.exact_rows(axis.slice(b_lo, b_hi - b_lo), "ts", b_lo, start, end)
        assert got == (lo, hi)
