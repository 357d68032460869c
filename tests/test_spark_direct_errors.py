"""A Parquet file read in place (issue 31): bad rows give the single process's message.

The driver runs the single-process reader's check over the file before any task reads
it (``spark_backend/in_place.py``), so every message is that reader's, word for word:
one small file per check.  Where Spark has its own check (a missing ``ON`` value,
an integer past 64 bits), the file is copied as before and the message is the copy
path's, unchanged.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from spark_fixtures import SPARK_MARKS

from acel.lang.errors import DataError

pytestmark = SPARK_MARKS

QUERY = "RETURN k, COUNT(*) PATTERN A AS a ; B AS b PARTITION BY k WITHIN 3 ON ts"
BASE: dict[str, Any] = {"type": ["A", "B", "A", "B"], "ts": [1, 2, 3, 4], "k": [1, 1, 2, 2]}


def _write(path: Path, columns: dict[str, Any] | None = None, table: Any = None) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(table if table is not None else pa.table(columns), path)
    return str(path)


def _spark_error(spark: Any, data: Any, **kw: Any) -> str:
    import acel

    with warnings.catch_warnings(), pytest.raises(DataError) as caught:
        warnings.simplefilter("ignore")
        acel.spark.run(QUERY, data, session=spark, **kw)
    return str(caught.value)


def _single_error(path: str, **kw: Any) -> str:
    import acel

    with pytest.raises(DataError) as caught:
        list(acel.run(QUERY, path, **kw))
    return str(caught.value)


def _cases() -> list[Any]:
    import pyarrow as pa

    inf, nan = float("inf"), float("nan")
    return [
        pytest.param({**BASE, "type": ["A", None, "A", "B"]}, {}, "event type is NULL", id="null-type"),
        pytest.param({**BASE, "type": ["A", "", "A", "B"]}, {}, "non-empty string", id="empty-type"),
        pytest.param({**BASE, "ts": pa.array([1, None, 3, 4])}, {"time_col": "ts"}, "time value is NULL",
                     id="null-time"),
        pytest.param({**BASE, "ts": [1.0, nan, 3.0, 4.0]}, {"time_col": "ts"}, "time value is NULL",
                     id="nan-time"),
        pytest.param({**BASE, "f": [1.0, inf, 2.0, -inf]}, {}, "value -infinity", id="infinity"),
        pytest.param({**BASE, "ts": [1.0, inf, 3.0, 4.0]}, {}, "value +infinity", id="infinite-axis"),
        pytest.param({"kind": ["A", "B", "A", "B"], "type": ["x", None, None, None], "ts": [1, 2, 3, 4],
                      "k": [1, 1, 2, 2]}, {"type_col": "kind"}, "clashes with the type column",
                     id="type-clash"),
    ]


@pytest.mark.parametrize("columns, kw, part", _cases())
def test_a_bad_row_gives_the_single_process_message(
    spark: Any, tmp_path: Path, columns: dict[str, Any], kw: dict[str, Any], part: str
) -> None:
    path = _write(tmp_path / "bad.parquet", columns)
    message = _spark_error(spark, path, **kw)
    assert message == _single_error(path, **kw)
    assert part in message and path in message
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".acel-spark-")]


def test_a_duplicate_column_name_gives_the_single_process_message(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa

    table = pa.Table.from_arrays([pa.array(["A", "B"]), pa.array([1, 2]), pa.array([1, 1]), pa.array([5, 6])],
                                 names=["type", "ts", "k", "k"])
    path = _write(tmp_path / "dup.parquet", table=table)
    message = _spark_error(spark, path)
    assert message == _single_error(path) == f"{path}: duplicate column name 'k'"


def test_a_bare_dataframe_scan_reports_the_files_bad_rows(spark: Any, tmp_path: Path) -> None:
    """Checked on the driver before any job, naming the file, as the single process does."""
    path = _write(tmp_path / "bad.parquet", {**BASE, "type": ["A", None, "A", "B"]})
    message = _spark_error(spark, spark.read.parquet(path))
    assert message == _single_error(path)


@pytest.mark.parametrize("columns", [
    pytest.param("missing-on", id="missing-on"),
    pytest.param("past-int64", id="past-int64"),
])
def test_sparks_own_checks_copy_the_file_and_keep_their_message(
    spark: Any, tmp_path: Path, monkeypatch: Any, columns: str
) -> None:
    import pyarrow as pa
    from acel.spark_backend.in_place import IN_PLACE_ENV

    data = ({**BASE, "ts": pa.array([1, None, 3, 4])} if columns == "missing-on"
            else {**BASE, "u": pa.array([1, 2**63 + 5, 3, 4], pa.uint64())})
    path = _write(tmp_path / "bad.parquet", data)
    message = _spark_error(spark, path)
    monkeypatch.setenv(IN_PLACE_ENV, "0")
    assert message == _spark_error(spark, path)
    assert ("no numeric 'ts'" if columns == "missing-on" else "does not fit in 64 bits") in message


@pytest.mark.parametrize("as_frame", [False, True], ids=["path", "dataframe"])
def test_a_bad_row_in_a_later_row_group_names_that_row(
    spark: Any, tmp_path: Path, monkeypatch: Any, as_frame: bool
) -> None:
    """The check's own batches feed the key and ``ON`` counts (one read of the file):
    a bad row in the second row group still gives the single process's message, naming
    its row, on the path and on a bare scan, with the facts counted once or twice."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend.in_place import ONE_READ_ENV

    n = 40
    types: list[Any] = ["A", "B"] * (n // 2)
    types[27] = None  # row 28, in the second row group of 16 rows
    path = str(tmp_path / "bad.parquet")
    pq.write_table(pa.table({"type": types, "ts": list(range(n)), "k": [1, 2, 3, 4] * (n // 4)}), path,
                   row_group_size=16)
    expected = _single_error(path)
    assert "row 28" in expected and "event type is NULL" in expected
    for once in ("1", "0"):
        monkeypatch.setenv(ONE_READ_ENV, once)
        data = spark.read.parquet(path) if as_frame else path
        assert _spark_error(spark, data) == expected
