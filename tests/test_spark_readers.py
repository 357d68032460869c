"""Spark's input side finds formats in the reader registry (issue 34): ``frames.load`` and
the streaming folder read each registered format with its Spark source and options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spark_fixtures import SPARK_MARKS

from acel.lang.errors import DataError

pytestmark = SPARK_MARKS

ROWS = [{"type": "A", "x": 1}, {"type": "B", "x": 2}]


def _write(folder: Path, name: str) -> Path:
    path = folder / name
    if name.endswith((".parquet", ".pq")):
        pq.write_table(pa.Table.from_pylist(ROWS), path)
    elif name.endswith(".csv"):
        path.write_text("type,x\n" + "".join(f"{r['type']},{r['x']}\n" for r in ROWS))
    else:
        path.write_text("".join(f'{{"type": "{r["type"]}", "x": {r["x"]}}}\n' for r in ROWS))
    return path


@pytest.mark.parametrize("name", ["e.jsonl", "e.ndjson", "e.csv", "e.parquet", "e.pq"])
def test_load_reads_every_registered_format(spark: Any, tmp_path: Path, name: str) -> None:
    from acel.spark_backend.frames import load

    frame, source = load(spark, str(_write(tmp_path, name)))
    assert source.endswith(name)
    assert sorted((r["type"], int(r["x"])) for r in frame.collect()) == [("A", 1), ("B", 2)]


def test_load_refuses_an_unknown_format(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend.frames import load

    path = tmp_path / "e.xml"
    path.write_text("<e/>")
    with pytest.raises(DataError, match="unknown event file format '.xml'"):
        load(spark, str(path))


def test_a_stream_folder_takes_registered_formats(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend.streaming import folder_files, folder_stream

    _write(tmp_path, "a.csv")
    (tmp_path / "notes.txt").write_text("not events")
    assert [Path(p).name for p in folder_files(str(tmp_path))] == ["a.csv"]
    frame, schema = folder_stream(spark, str(tmp_path))
    assert frame.isStreaming and schema.type_names() == ("A", "B")
