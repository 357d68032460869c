"""A stream's results shaped as a batch run's (issue 37 §2): ``acel.spark.stream`` gives
the columns of ``acel.spark.run`` for the same query (``vars`` one struct per variable,
RETURN columns without backticks, counts ``bigint``), and the same rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_spark_streaming import (
    EVENTS,
    SCHEMA,
    SLIDING,
    SPARK_COLUMNS,
    TRAILING,
    Folder,
    _plan,
    _source,
    make_events,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]

CASES = [(EVENTS, None), (TRAILING, "t"), (SLIDING, "t")]
"""Complex events without and with PARTITION BY, and RETURN rows with SLIDE windows
and integer counts."""


def _batch(spark: Any, path: Path, query: str, time_col: str | None, **kw: Any) -> Any:
    import acel.spark

    frame = spark.read.schema(SPARK_COLUMNS).json(str(path))
    return acel.spark.run(query, frame, schema=SCHEMA, time_col=time_col, **kw)


@pytest.mark.parametrize(("query", "time_col"), CASES)
def test_a_stream_has_the_batch_runs_columns(spark: Any, tmp_path: Path, query: str,
                                             time_col: str | None) -> None:
    """Same query, same schema: shaped by default, and with ``vars="json"`` and
    ``counts="decimal"`` (the §12 text, DECIMAL(38,0) counts) as a batch run has them."""
    import acel.spark

    folder = Folder(tmp_path)
    folder.land(make_events(5, seed=1))
    source = _source(spark, folder.path)
    streamed = acel.spark.stream(query, source, schema=SCHEMA, time_col=time_col)
    batch = _batch(spark, folder.path / "part-0000.jsonl", query, time_col)
    assert streamed.isStreaming
    assert streamed.schema == batch.schema
    names = streamed.schema.simpleString()
    assert "COUNT(*)" not in names and "decimal" not in names and "vars:string" not in names
    raw = acel.spark.stream(query, source, schema=SCHEMA, time_col=time_col, vars="json",
                            counts="decimal")
    assert raw.schema == _batch(spark, folder.path / "part-0000.jsonl", query, time_col,
                                vars="json", counts="decimal").schema
    if query != SLIDING:  # complex events: the executors' own columns
        assert raw.schema == _plan(spark, folder.path, query, time_col=time_col).frame.schema
    with pytest.raises(acel.AcelError, match="counts='int'"):
        acel.spark.stream(query, source, schema=SCHEMA, counts="int")


def _rows(frame: Any) -> list[str]:
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str)
                  for r in frame.collect())


def test_a_shaped_stream_writes_the_batch_runs_rows(spark: Any, tmp_path: Path) -> None:
    """Both keyed cases through a Parquet sink to the end row: the rows a batch run of
    the same query on the same events shows (typed ``vars``, ``bigint`` counts)."""
    from acel.spark_backend.streaming import end_row

    import acel.spark

    events = make_events(60, seed=7)
    runs = []
    for n, (query, time_col) in enumerate(CASES[1:]):
        folder = Folder(tmp_path / str(n))
        folder.land(events)
        folder.land([end_row()])
        frame = acel.spark.stream(query, _source(spark, folder.path), schema=SCHEMA,
                                  time_col=time_col, delay=1)
        out = tmp_path / str(n) / "out"
        running = (frame.writeStream.format("parquet").outputMode("append")
                   .option("checkpointLocation", str(tmp_path / str(n) / "ck"))
                   .option("path", str(out)).trigger(availableNow=True).start())
        runs.append((query, time_col, folder, out, running))
    for query, time_col, folder, out, running in runs:
        running.awaitTermination(600)
        want = _rows(_batch(spark, folder.path / "part-0000.jsonl", query, time_col))
        # a type and a variable, ``A`` and ``a``: Spark's case-insensitive Parquet reader
        # takes the shaped fields ``A`` and ``a_2`` as they are
        read = spark.read.parquet(str(out))
        if "vars" in read.columns:
            assert {"A", "a_2"} <= {f.name for f in read.schema["vars"].dataType.fields}
        got = _rows(read)
        assert got == want and len(want) > 0, query
