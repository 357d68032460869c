"""Results in the interchange formats of spec §12: written as they come, read back.

Complex events (:class:`~acel.lang.clauses.Match`) and RETURN rows
(:class:`~acel.lang.clauses.TrendRow`) become canonical JSON Lines
(:mod:`acel.io.lines`), CSV or Parquet.  A :class:`ResultWriter` takes the
results of a run in the order they become final — complex events grouped by
the position that ends them, which is the order of §12 once each group is
sorted — and writes them at once, never holding more than one group; RETURN
rows are few and are sorted by key and window at the end (or written as
their window closes, for a live stream).  A file is written under a
temporary name in its own folder and renamed when complete, so a crash, a
full disk or Ctrl-C never leaves a file that looks finished (nor destroys
the previous one).
"""

from __future__ import annotations

import importlib
import io
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Union

from acel.io.lines import LineEncoder, PreparedEvent, clean, value_json
from acel.io.native_switch import wanted
from acel.io.output_formats import output_for, output_named
from acel.io.result_order import is_match, row_order, sort_results
from acel.io.result_order import ordered_lines as ordered_lines
from acel.io.result_order import to_json_lines as to_json_lines
from acel.io.result_reading import JSON_FIELDS
from acel.io.result_reading import from_json_lines as from_json_lines
from acel.io.result_reading import match_from_json as match_from_json
from acel.io.result_reading import matches_from_table as matches_from_table
from acel.io.result_reading import read_results as read_results
from acel.io.result_reading import read_table as read_table
from acel.io.result_reading import rows_from_json_lines as rows_from_json_lines
from acel.io.targets import open_direct, open_partial, special_target
from acel.lang.clauses import Key, Match, TrendRow
from acel.lang.errors import AcelError, DataError
from acel.lang.events import Event, OptValue

Results = Union[Sequence[Match], Sequence[TrendRow]]


_FIRST_FOUR = itemgetter(0, 1, 2, 3)
"""(end, query, start, line): the order of complex events in a file (spec §12)."""

NativeLines = Any
"""``_native_writer.match_lines(pending, PreparedEvent, limit)`` (``acel/io/native/writer.c``)."""


def native_match_lines() -> NativeLines | None:
    """The C line writer (issue 23) when ``ACEL_NATIVE`` wants it and it was built
    (``None``: :meth:`ResultWriter._flush`'s pure-Python lines, the reference)."""
    try:  # by name, as a module of this package
        available = importlib.import_module("acel.io._native_writer").match_lines
    except ImportError:
        available = None
    if not wanted(available is not None, "the extension acel.io._native_writer is not built "
                  "(pip install -e . with a C compiler)"):
        return None
    return available



# ----------------------------------------------------------------- dict forms


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


# ----------------------------------------------------------------- tables


def row_table(rows: Sequence[Any]) -> tuple[list[str], list[list[OptValue]]]:
    """RETURN rows as a flat table in output order: the key attributes,
    ``window_lo, window_hi`` (with SLIDE), then the items not already written."""
    ordered = sort_results(rows)
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


def table_columns(results: Results) -> tuple[list[str], list[list[OptValue]]]:
    """Flat columns and rows for CSV, in output order.

    Complex events: ``start, end, key, vars`` (key and vars as canonical JSON).
    RETURN rows: see :func:`row_table`.
    """
    items = list(results)
    if not items:
        return [], []
    if is_match(items[0]):
        encoder = LineEncoder()
        body = [_match_cells(encoder, m) for m in sort_results(items)]
        return ["start", "end", "key", "vars"], body  # type: ignore[return-value]
    return row_table(items)


def _match_cells(encoder: LineEncoder, m: Any) -> list[Any]:
    line = json.loads(encoder.match(m))
    return [
        m.event.start,
        m.event.end,
        json.dumps(line.get("key", {}), separators=(",", ":"), sort_keys=True, ensure_ascii=False),
        json.dumps(line["vars"], separators=(",", ":"), sort_keys=True, ensure_ascii=False),
    ]


def _csv_cell(value: OptValue) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        from acel.io.values import int_text

        return int_text(value)
    return str(value)


def output_format(path: str | Path | None, fmt: str | None = None) -> str:
    """``jsonl``, ``csv`` or ``parquet`` (:mod:`acel.io.output_formats`) from ``fmt`` or the
    file extension (default jsonl)."""
    if fmt is not None:
        return output_named(fmt).name
    if path is None:
        return "jsonl"
    return output_for(path).name


def check_output(path: str | Path | None, inputs: Iterable[str | Path] = ()) -> str:
    """The output format, after checking that ``path`` can be written and is no input.

    Done before any data is read: a missing folder or an output that would
    overwrite the events is reported at once.
    """
    kind = output_format(path)
    if path is None:
        return kind
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise DataError(f"{path}: cannot write results: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise DataError(f"{path}: cannot write results: the folder {str(folder)!r} is not writable")
    if target.is_dir():
        raise DataError(f"{path}: cannot write results: it is a folder")
    for source in inputs:
        if str(source) == "-":
            continue
        try:
            same = target.exists() and Path(source).exists() and target.samefile(source)
        except OSError:
            same = False
        if same or target.resolve() == Path(source).resolve():
            raise DataError(f"{path}: the output would overwrite the input {source}; choose another --out")
    return kind


# ----------------------------------------------------------------- writing


class OutputError(AcelError):
    """The results cannot be written (a full disk, a device error)."""


class _Interrupts:
    """Ctrl-C (or SIGTERM, when a handler of its own is installed) while a write is under
    way: noted, raised when the write is whole."""

    writing = 0
    pending = False
    deferred: tuple[Callable[[int, Any], Any], int] | None = None
    """SIGTERM's own handler and the signal, to call when the write is whole (issue 36
    D11: raised between a write and its count, it left the count at 0)."""


_SIGINT = _Interrupts()


def _on_sigint(signum: int, frame: object) -> None:
    if _SIGINT.writing:
        _SIGINT.pending = True
        return
    raise KeyboardInterrupt


def _deferring(handler: Callable[[int, Any], Any]) -> Callable[[int, Any], Any]:
    """``handler`` (SIGTERM's), called only between writes."""

    def on_signal(signum: int, frame: Any) -> None:
        if _SIGINT.writing:
            _SIGINT.deferred = (handler, signum)
            return
        handler(signum, frame)

    return on_signal


def _raise_deferred() -> None:
    """Raise the interrupt a write held back, now that no write is under way."""
    if _SIGINT.writing:
        return
    if _SIGINT.deferred is not None:
        (handler, signum), _SIGINT.deferred = _SIGINT.deferred, None
        _SIGINT.pending = False
        handler(signum, None)
    if _SIGINT.pending:
        _SIGINT.pending = False
        raise KeyboardInterrupt


@contextmanager
def interrupts_between_writes() -> Iterator[None]:
    """While this holds, Ctrl-C (SIGINT) never lands inside a :class:`ResultWriter` write.

    The interrupt is raised as soon as the write under way is complete, so
    standard output ends with a whole line and a file holds whole records.
    Only the main thread can install a signal handler; elsewhere this does
    nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_sigint)
    term = signal.getsignal(signal.SIGTERM)
    if callable(term):
        signal.signal(signal.SIGTERM, _deferring(term))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if callable(term):
            signal.signal(signal.SIGTERM, term)
        _SIGINT.pending = False
        _SIGINT.deferred = None


class ResultWriter:
    """Writes results as they become final (see the module doc).

    :meth:`add` takes complex events that all end at one position (or that
    end at increasing positions, group after group) or RETURN rows;
    :meth:`close` finishes the file (rows sorted, temporary file renamed);
    :meth:`abort` keeps what was written under the ``.partial`` name and
    says so.  ``stream`` writes text to an open binary handle (stdout)
    instead of a file; ``live`` writes RETURN rows as they come and flushes
    after every batch (following a live stream).  ``workload`` tags every
    line with its query (spec §6.1): call :meth:`add` with ``query=``.
    """

    def __init__(
        self,
        path: str | Path | None,
        fmt: str | None = None,
        *,
        stream: IO[bytes] | None = None,
        live: bool = False,
        workload: bool = False,
        limit: int | None = None,
        kinds: Mapping[str, str] | None = None,
        key_names: Sequence[str] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.limit = limit
        self.kinds = dict(kinds) if kinds is not None else None
        """Attribute → kind (schema and AGG outputs): the typed Parquet columns of
        complex events; without it they are found from the results written."""
        self.key_names = tuple(key_names) if key_names is not None else None
        """The PARTITION BY attributes (the Parquet ``key`` struct)."""
        """Write at most this many results (the first ones in output order)."""
        self.kind = output_format(path, fmt)
        if self.kind == "parquet" and self.path is None:
            raise DataError("Parquet output needs a file (--out FILE.parquet)")
        self.live = live
        self.workload = workload
        self.encoder = LineEncoder()
        self.native = native_match_lines() if self.kind == "jsonl" else None
        """The C writer of complex events' lines (unkeyed, no query name; else ``None``
        or its own fallback: the pure-Python lines of :meth:`_flush`)."""
        self.written = 0
        self.finished = False
        """Whether :meth:`close` completed the file (an interrupt held back until then
        finds it whole)."""
        self.rows: list[tuple[Any, str | None]] = []
        self.pending: list[tuple[Any, str | None]] = []
        self.partial: Path | None = None
        self.handle: IO[bytes] | None = None
        self.csv_header: list[str] | None = None
        self.parquet: Any = None
        self.parquet_rows: list[list[Any]] = []
        self.layout: MatchLayout | None = None
        if self.path is None:
            self.handle = stream if stream is not None else sys.stdout.buffer
            self.own = False
        elif special_target(self.path):
            self.handle = open_direct(self.path, self.kind)
            self.own = True
        else:
            self.handle, self.partial = open_partial(self.path)
            self.own = True

    # -------------------------------------------------------------- adding

    def add(self, results: Sequence[Any], query: str | None = None) -> None:
        """One group of final results (see the class doc)."""
        with self._writing():
            self._add(results, query)

    def flush(self) -> None:
        """Write the complex events added so far (they end before every later one)."""
        with self._writing():
            self._flush()

    def close(self) -> int:
        """Write what is held (RETURN rows, in order), finish the file; the count written."""
        with self._writing():
            return self._close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write: Ctrl-C waits until it is whole (see :func:`interrupts_between_writes`),
        and a failing device (a full disk) is an :class:`OutputError` naming the file."""
        _SIGINT.writing += 1
        try:
            yield
        except BrokenPipeError:
            raise  # a closed pipe (``| head``): the command line stops quietly
        except OSError as error:
            where = str(self.path) if self.path is not None else "standard output"
            raise OutputError(
                f"{where}: cannot write results: {error.strerror or error}"
            ) from None
        finally:
            _SIGINT.writing -= 1
        _raise_deferred()

    def _add(self, results: Sequence[Any], query: str | None = None) -> None:
        if not results:
            return
        if is_match(results[0]):
            self.pending.extend((m, query) for m in results)
        else:
            for row in results:
                if self.live and self.kind == "jsonl" and not self.full:
                    self._lines([self.encoder.row(row, query)])
                else:
                    self.rows.append((row, query))

    def _flush(self) -> None:
        if self.pending:
            pending, self.pending = self.pending, []
            if self.native is None or not self._native_flush(pending):
                self._flush_matches(pending)
        if self.live and self.handle is not None:
            self.handle.flush()

    def _native_flush(self, pending: list[tuple[Any, str | None]]) -> bool:
        """The lines of ``pending`` by the C writer; ``False`` (nothing written) when one
        of them is outside its fragment (a key, a query name, a complex event not
        prepared as text, a position beyond 64 bits)."""
        limit = None if self.limit is None else max(0, self.limit - self.written)
        native = self.native
        assert native is not None
        done = native(pending, PreparedEvent, limit)
        if done is None:
            return False
        text, count = done
        assert self.handle is not None
        self.handle.write(text)
        self.written += count
        return True

    def _flush_matches(self, pending: list[tuple[Any, str | None]]) -> None:
        """The complex events of ``pending`` in spec §12 order (the reference path)."""
        encoder = self.encoder
        keyed = [
            (m.event.end, q or "", m.event.start, encoder.match(m, q), m) for m, q in pending
        ]
        keyed.sort(key=_FIRST_FOUR)
        if self.limit is not None:
            keyed = keyed[: max(0, self.limit - self.written)]
        if self.kind == "jsonl":
            self._lines([item[3] for item in keyed])
        elif self.kind == "csv":
            self._csv_matches([(item[4], item[1] or None) for item in keyed])
        else:
            self._parquet_matches([(item[4], item[1] or None, item[3]) for item in keyed])

    @property
    def full(self) -> bool:
        """Whether ``limit`` results have been written (complex events: stop reading)."""
        return self.limit is not None and self.written >= self.limit

    def _lines(self, lines: list[bytes]) -> None:
        assert self.handle is not None
        self.handle.write(b"".join(line + b"\n" for line in lines))
        self.written += len(lines)

    # -------------------------------------------------------------- CSV

    def _csv_matches(self, items: list[tuple[Any, str | None]]) -> None:
        import csv  # here: a JSON Lines run never loads it (start-up, issue 23)

        assert self.handle is not None
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        if self.csv_header is None:
            self.csv_header = ["start", "end", "key", "vars"] + (["query"] if self.workload else [])
            writer.writerow(self.csv_header)
        for match, query in items:
            cells = _match_cells(self.encoder, match)
            if self.workload:
                cells.append(query or "")
            writer.writerow(cells)
        self.handle.write(text.getvalue().encode("utf-8"))
        self.written += len(items)

    # -------------------------------------------------------------- Parquet

    def _parquet_matches(self, items: list[tuple[Any, str | None, bytes]]) -> None:
        for match, query, _line in items:
            self.parquet_rows.append([match, query])
        if len(self.parquet_rows) >= 65536:
            self._parquet_flush()

    def _parquet_flush(self) -> None:
        import pyarrow.parquet as pq

        if not self.parquet_rows:
            return
        matches = [m for m, _ in self.parquet_rows]
        if self.layout is None:
            self.layout = MatchLayout.of(matches, self.kinds, self.workload, self.key_names)
        table = self.layout.table(self.parquet_rows)
        if self.parquet is None:
            assert self.partial is not None
            self.parquet = pq.ParquetWriter(self.handle, table.schema)
        self.parquet.write_table(table)
        self.written += len(self.parquet_rows)
        self.parquet_rows = []

    # -------------------------------------------------------------- closing

    def _close(self) -> int:
        self._flush()
        if self.rows:
            self._write_rows()
        if self.kind == "parquet":
            self._parquet_flush()
            if self.parquet is not None:
                self.parquet.close()
            elif self.written == 0 and self.partial is not None:
                import pyarrow.parquet as pq

                layout = MatchLayout.of([], self.kinds, self.workload, self.key_names)
                pq.write_table(layout.table([]), self.handle)
        if self.own and self.handle is not None:
            self.handle.close()
        elif self.handle is not None:
            self.handle.flush()
        if self.own and self.partial is not None and self.path is not None:
            os.replace(self.partial, self.path)
        self.finished = True
        return self.written

    def abort(self) -> str:
        """Stop after an error or Ctrl-C: keep what was written as ``FILE.partial``, say so.

        Never raises (the run is failing already): a write that fails here
        (the disk is still full) leaves what is there.
        """
        _SIGINT.writing += 1  # a second Ctrl-C must not cut the last lines in half
        try:
            try:
                self._flush()
            except Exception:  # noqa: BLE001 - keep what is there
                pass
            if self.parquet is not None:
                try:
                    self.parquet.close()
                except Exception:  # noqa: BLE001
                    pass
            try:
                if self.own and self.handle is not None:
                    self.handle.close()
                elif self.handle is not None:
                    self.handle.flush()
            except Exception:  # noqa: BLE001
                pass
        finally:
            _SIGINT.writing -= 1
            _SIGINT.pending = False
            _SIGINT.deferred = None
        if self.finished and self.path is not None:
            return f"all {self.written:,} results written to {self.path}"
        if self.partial is not None and self.partial.exists():
            return (f"{self.written:,} results written to {self.partial}, which is incomplete "
                    f"({self.path} was not written)")
        if self.own and self.path is not None:
            return f"{self.written:,} results written to {self.path} (incomplete)"
        return f"{self.written:,} results written (incomplete)"

    def _write_rows(self) -> None:
        rows = self.rows
        self.rows = []
        encoder = self.encoder
        ordered = sorted(
            ((q or "", row_order(r), encoder.row(r, q), r, q) for r, q in rows),
            key=lambda item: item[:3],
        )
        if self.limit is not None:
            ordered = ordered[: max(0, self.limit - self.written)]
        if self.kind == "jsonl":
            self._lines([item[2] for item in ordered])
            return
        header, table = row_table([item[3] for item in ordered])
        if self.workload:
            header = ["query", *header]
            table = [[item[4], *cells] for item, cells in zip(ordered, table)]
        if self.kind == "csv":
            import csv  # here: a JSON Lines run never loads it (start-up, issue 23)

            assert self.handle is not None
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(header)
            for cells in table:
                writer.writerow([_csv_cell(v) for v in cells])
            self.handle.write(text.getvalue().encode("utf-8"))
            self.written += len(table)
            return
        _write_row_parquet(header, table, self.handle)  # type: ignore[arg-type]
        self.written += len(table)


def _write_row_parquet(header: list[str], table: list[list[Any]], path: Any) -> None:
    """RETURN rows in Parquet with typed columns: exact integers as int64 when they fit,
    else DECIMAL(38, 0), else their decimal text; a column mixing kinds as JSON text."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = []
    for index, _name in enumerate(header):
        column = [cells[index] for cells in table]
        ints = [v for v in column if isinstance(v, int) and not isinstance(v, bool)]
        if ints and all(isinstance(v, int) and not isinstance(v, bool) or v is None for v in column):
            top = max(abs(v) for v in ints)
            if top < 2**63:
                arrays.append(pa.array(column, pa.int64()))
            elif top < 10**38:
                arrays.append(
                    pa.array([None if v is None else decimal.Decimal(v) for v in column], pa.decimal128(38, 0))
                )
            else:
                from acel.io.values import int_text

                arrays.append(pa.array([None if v is None else int_text(v) for v in column], pa.string()))
            continue
        try:
            arrays.append(pa.array(column))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            arrays.append(
                pa.array([None if v is None else value_json(v).decode() for v in column], pa.string())
            )
    pq.write_table(pa.Table.from_arrays(arrays, names=header), path)


def write_results(results: Results, path: str | Path | None = None, *, fmt: str | None = None,
                  stream: IO[str] | None = None) -> int:
    """Write results to ``path`` (or ``stream``/stdout when ``None``); returns the count written."""
    kind = output_format(path, fmt)
    if path is None and stream is not None:
        text = results_to_string(results, kind)
        stream.write(text)
        return len(results)
    writer = ResultWriter(path, fmt)
    try:
        writer.add(list(results))
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def results_to_string(results: Results, fmt: str = "jsonl") -> str:
    """The text a file of format ``fmt`` (jsonl or csv) would hold."""
    buffer = io.BytesIO()
    writer = ResultWriter(None, fmt, stream=buffer)
    writer.add(list(results))
    writer.close()
    return buffer.getvalue().decode("utf-8")


# ----------------------------------------------------------------- typed Parquet

_ARROW_OF_KIND = {"int": "int64", "float": "float64", "str": "string", "bool": "bool_"}


class MatchLayout:
    """The typed Parquet columns of complex events (spec §12 in a columnar form).

    ``start``, ``end`` (int64), ``key`` (a struct of the PARTITION BY
    attributes, with PARTITION BY), ``query`` (workloads) and ``vars``: a map
    from variable to the list of its events, each ``{time: int64, attrs:
    struct}`` where the struct has one typed field per attribute the query can
    see (the schema's and AGG outputs', ``type`` included; NULL where an event
    lacks it).  An attribute of unknown or mixed kind is stored as its JSON
    text.  :func:`matches_from_table` reads it back.
    """

    def __init__(self, attrs: dict[str, str], key: dict[str, str] | None, workload: bool) -> None:
        import pyarrow as pa

        self.attrs = attrs
        self.key = key
        self.workload = workload

        def arrow(kind: str) -> Any:
            return getattr(pa, _ARROW_OF_KIND.get(kind, "string"))()

        self.attr_type = pa.struct([(name, arrow(kind)) for name, kind in attrs.items()])
        event_type = pa.struct([("time", pa.int64()), ("attrs", self.attr_type)])
        self.vars_type = pa.map_(pa.string(), pa.list_(event_type))
        fields = [("start", pa.int64()), ("end", pa.int64())]
        if key is not None:
            self.key_type = pa.struct([(name, arrow(kind)) for name, kind in key.items()])
            fields.append(("key", self.key_type))
        if workload:
            fields.append(("query", pa.string()))
        fields.append(("vars", self.vars_type))
        encoded = [f"vars.{n}" for n, k in attrs.items() if k not in _ARROW_OF_KIND]
        encoded += [f"key.{n}" for n, k in (key or {}).items() if k not in _ARROW_OF_KIND]
        self.schema = pa.schema(fields, metadata={JSON_FIELDS: json.dumps(encoded)})

    @staticmethod
    def of(
        matches: Sequence[Any],
        kinds: Mapping[str, str] | None,
        workload: bool,
        key_names: Sequence[str] | None = None,
    ) -> MatchLayout:
        """The layout for these results: ``kinds`` for the attributes and ``key_names``
        for the PARTITION BY key (both found in the results when not given)."""
        from acel.io.values import kind_of

        found: dict[str, set[str]] = {}
        keys: dict[str, set[str]] = {}
        for m in matches:
            for name, value in m.key:
                keys.setdefault(name, set()).add(kind_of(value))
            for _, bag in m.event.vars:
                for event in bag:
                    for name, value in event.attrs:
                        found.setdefault(name, set()).add(kind_of(value))
        attrs: dict[str, str] = {}
        for name in sorted(set(found) | set(kinds or {}) | {"type"}):
            seen = found.get(name, set())
            given = (kinds or {}).get(name)
            if name == "type" and not seen:
                attrs[name] = "str"
            elif given in _ARROW_OF_KIND and seen <= {given, "int"} and not (given == "int" and "float" in seen):
                attrs[name] = given
            elif len(seen) == 1:
                attrs[name] = next(iter(seen))
            elif seen == {"int", "float"}:
                attrs[name] = "float"
            else:
                attrs[name] = "mixed"
        key = None
        if key_names:
            key = {name: attrs.get(name) or (kinds or {}).get(name) or "mixed" for name in key_names}
        elif keys:
            key = {name: (next(iter(k)) if len(k) == 1 else "mixed") for name, k in keys.items()}
        return MatchLayout(attrs, key, workload)

    def _value(self, name: str, value: Any) -> Any:
        kind = self.attrs.get(name, "mixed")
        if kind == "mixed" or kind not in _ARROW_OF_KIND:
            return None if value is None else value_json(value).decode()
        if kind == "float" and type(value) is int:
            return float(value)
        if kind == "int" and type(value) is int and not -(2**63) <= value < 2**63:
            raise DataError(
                f"attribute {name!r} = {value} does not fit a Parquet int64 column; "
                "write JSON Lines or CSV (they hold integers of any size)"
            )
        return value

    def table(self, rows: Sequence[Sequence[Any]]) -> Any:
        """``rows`` of ``[match, query]`` as a table of :attr:`schema`."""
        import pyarrow as pa

        names = list(self.attrs)
        starts, ends, keys, queries, vars_ = [], [], [], [], []
        for match, query in rows:
            ce = match.event
            starts.append(ce.start)
            ends.append(ce.end)
            if self.key is not None:
                keys.append({name: self._key(name, v) for name, v in match.key})
            queries.append(query or "")
            entries = []
            for var, bag in ce.vars:
                events = []
                for event in bag:
                    values = dict(event.attrs)
                    events.append(
                        {"time": event.time,
                         "attrs": {name: self._value(name, values.get(name)) for name in names}}
                    )
                entries.append((var, events))
            vars_.append(entries)
        columns: list[Any] = [pa.array(starts, pa.int64()), pa.array(ends, pa.int64())]
        if self.key is not None:
            columns.append(pa.array(keys, self.key_type))
        if self.workload:
            columns.append(pa.array(queries, pa.string()))
        columns.append(pa.array(vars_, self.vars_type))
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _key(self, name: str, value: Any) -> Any:
        assert self.key is not None
        if self.key.get(name) not in _ARROW_OF_KIND:
            return value_json(value).decode()
        return value
