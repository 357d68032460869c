"""The input-format registry (issue 34): a new format is one registered class, every
built-in format is reached through it, and input formats are no outputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import acel
from acel.app.cli import main
from acel.io import FORMATS, SourceOptions, file_format, open_events
from acel.io.readers import Reader, reader_for, readers, register, unregister
from acel.io.records import Row
from acel.lang.errors import DataError

QUERY = "A AS a ; B AS b"


class PipeReader(Reader):
    """A toy format: ``type|x`` lines, ``x`` an int."""

    name = "pipes"
    suffixes = (".pipes",)

    def rows(self, path: Path) -> Iterator[list[Row]]:
        lines = path.read_text().splitlines()
        yield [Row(n, n, {"type": t, "x": int(x)}) for n, (t, x) in
               enumerate((line.split("|") for line in lines), start=1)]


@pytest.fixture
def pipes() -> Iterator[PipeReader]:
    reader = register(PipeReader())
    try:
        yield reader
    finally:
        unregister(reader.name)


def test_a_registered_toy_format_runs_a_query(pipes: PipeReader, tmp_path: Path) -> None:
    data = tmp_path / "events.pipes"
    data.write_text("A|1\nB|2\nA|3\nB|4\n")
    assert FORMATS[".pipes"] == "pipes" and file_format(data) == "pipes"
    stream = open_events(data, options=SourceOptions(time_col="x"))
    assert stream.schema.kinds == (("x", "int"),)
    got = acel.run(QUERY, str(data), time_col="x").to_json_lines()
    expected = acel.run(QUERY, [{"type": t, "x": x} for t, x in (("A", 1), ("B", 2), ("A", 3), ("B", 4))],
                        time_col="x").to_json_lines()
    assert got == expected and len(got) == 3


def test_an_unregistered_format_is_gone(tmp_path: Path) -> None:
    register(PipeReader())
    unregister("pipes")
    with pytest.raises(DataError, match="unknown event file format '.pipes'"):
        reader_for(tmp_path / "e.pipes")
    assert ".pipes" not in FORMATS


def test_a_taken_suffix_is_refused() -> None:
    class Other(PipeReader):
        name = "other"
        suffixes = (".csv",)

    with pytest.raises(ValueError, match=".csv"):
        register(Other())
    assert reader_for("x.csv").name == "csv"


def test_the_built_in_formats_are_registered_readers() -> None:
    names = [r.name for r in readers()]
    assert names[:3] == ["jsonl", "csv", "parquet"]
    assert {FORMATS[s] for s in (".jsonl", ".ndjson", ".json", ".csv", ".parquet", ".pq")} == set(names[:3])
    assert all(r.spark_format for r in readers()[:3])


def test_an_input_only_format_is_no_output(pipes: PipeReader, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Output formats are their own registry: ``--out x.pipes`` is one clear error line,
    not a Parquet file under that name."""
    data = tmp_path / "e.jsonl"
    data.write_text('{"type": "A", "x": 1}\n{"type": "B", "x": 2}\n')
    out = tmp_path / "r.pipes"
    code = main(["run", QUERY, "--data", str(data), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "unknown output format '.pipes'" in err and len(err.strip().splitlines()) == 1


def test_the_walk_of_one_stream_dispatches_once() -> None:
    """``tools/walk.py`` (issue 34): ``open_events`` reaches the format's reader through
    one registry lookup (a lookup in ``BY_SUFFIX``, no call into the registry), and
    ``source.py`` is entered at most 3 times in the whole run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("walk", Path(__file__).parents[1] / "tools" / "walk.py")
    assert spec is not None and spec.loader is not None
    walk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walk)
    for fmt, reader in (("jsonl", "readers/jsonl.py"), ("csv", "readers/csv.py")):
        report = walk.walk(fmt, 20)
        assert report["walk"][:2] == ["source.py", reader]
        assert report["entries"]["source.py"] <= 3 and "readers/registry.py" not in report["entries"]
