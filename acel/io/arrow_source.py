"""Arrow sources (Parquet files, pyarrow Tables, DataFrames): checked column by column.

A first pass over the columns infers the schema and the order facts with Arrow's
compute functions; a column Arrow cannot check (a nested type, a schema the columns
do not fit) sends the source through the row-wise passes (:mod:`acel.io.row_passes`),
which name each row that is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from acel.io.options import SourceOptions
from acel.io.records import Inference, Problem, Problems, Row, with_time_column
from acel.io.row_passes import ordered, require_columns, rows_stream
from acel.io.stream import Attrs, EventStream, Facts
from acel.io.values import MAX_ATTRIBUTES, first_duplicate, time_key, too_many_attributes
from acel.lang.errors import DataError
from acel.lang.schema import Schema


def arrow_stream(
    source: str, batches: Callable[[], Iterator[Any]], names: list[str], options: SourceOptions
) -> EventStream:
    """Parquet files, pyarrow Tables, DataFrames: column-wise where the data allows."""
    time_col, schema = options.time_col, options.schema
    if not names:  # not even a column (``pd.DataFrame()``): no events
        return EventStream(
            source, schema or Schema.of({}), lambda: iter(()), Facts(), time_col=time_col, sort=False
        )
    _check_names(source, names, options)

    def rows() -> Iterator[list[Row]]:  # the row-wise fallback
        return arrow_rows(batches)

    if not all(plain_type(f.type) for f in _first_schema(batches, names)):
        return rows_stream(source, rows, options)
    try:
        inferred, facts = _infer_columns(source, batches, names, options)
    except DataError:
        if schema is None:
            raise
        inferred = None  # the row-wise check reports every problem, the schema's too
    if schema is not None:
        inferred = _columns_fit(schema, inferred, time_col) if inferred is not None else None
        if inferred is None:
            return rows_stream(source, rows, options)
    assert inferred is not None
    columns = {f.name: f.type for f in _first_schema(batches, names)}
    facts.int64 = all(_fits_int64(t) for t in columns.values())
    events = _ArrowEvents(batches, inferred, options, columns, sort=time_col is not None and not facts.sorted_by_time)
    return EventStream(source, inferred, events.batches, facts, time_col=time_col, sort=events.sort,
                       chunk=options.chunk, arrow=events.arrow)


def _check_names(source: str, names: list[str], options: SourceOptions) -> None:
    """The type and time columns present, not too many columns, no name twice."""
    require_columns(source, names, options)
    if len(names) > MAX_ATTRIBUTES + 1:
        raise DataError(f"{source}: {too_many_attributes(len(names) - 1, 'the table')}")
    duplicate = first_duplicate(names)
    if duplicate is not None:
        raise DataError(f"{source}: duplicate column name {duplicate!r}")


def arrow_rows(batches: Callable[[], Iterator[Any]]) -> Iterator[list[Row]]:
    """Record batches as records (NULLs left out, NaN as NULL), numbered from 1."""
    number = 0
    for batch in batches():
        out = []
        for record in _normalised(batch).to_pylist():
            number += 1
            out.append(Row(number, None, {k: v for k, v in record.items() if v is not None}))
        yield out


class _ArrowEvents:
    """The checked columns of an Arrow source as events: maps or Arrow batches, in order."""

    def __init__(self, batches: Callable[[], Iterator[Any]], schema: Schema, options: SourceOptions,
                 columns: dict[str, Any], *, sort: bool) -> None:
        self.source_batches = batches
        self.schema = schema
        self.options = options
        self.type_col, self.time_col, self.chunk = options.type_col, options.time_col, options.chunk
        self.sort = sort
        # ints become floats where the attribute is float but its column holds integers
        self.floats = tuple(
            a for a, k in schema.kinds if k == "float" and a in columns and not _is_floating(columns[a])
        )

    def batches(self) -> Iterator[list[Attrs]]:
        if not self.sort and not self.floats and self.type_col == "type":
            # nothing to convert or sort: Arrow's dictionaries are the events
            for batch in self.source_batches():
                yield _normalised(batch).to_pylist()
            return
        yield from self.converted()

    def converted(self) -> Iterator[list[Attrs]]:
        return ordered(self._keyed(), self.sort, self.chunk)

    def _keyed(self) -> Iterator[list[tuple[Any, Attrs]]]:
        type_col, time_col, floats, sort = self.type_col, self.time_col, self.floats, self.sort
        for batch in self.source_batches():
            records = _normalised(batch).to_pylist()
            out = []
            for record in records:
                record["type"] = record.pop(type_col) if type_col != "type" else record["type"]
                for column in floats:
                    if type(record.get(column)) is int:
                        record[column] = float(record[column])
                out.append((time_key(record.get(time_col)) if sort else 0, record))
            yield out

    def arrow(self) -> Iterator[Any]:
        from acel.io.columns import arrow_schema, as_columns, as_record_batches

        target = arrow_schema(self.schema)
        if self.sort:
            return as_record_batches(self.converted(), target)
        return (as_columns(_normalised(batch), self.options, target) for batch in self.source_batches())


def event_columns(batch: Any, type_col: str, target: Any) -> Any:
    """One record batch of a checked, unsorted Arrow source laid out as its events
    (NaN → NULL, the type column as ``type``, each column cast to its kind): what
    :meth:`EventStream.arrow_batches` yields for it, for a Spark task reading a
    Parquet file in place (``acel.spark_backend.in_place``)."""
    from acel.io.columns import as_columns

    return as_columns(_normalised(batch), SourceOptions(type_col=type_col), target)


def _fits_int64(arrow_type: Any) -> bool:
    """Whether every value of an Arrow type is an int64 when an int (uint64 may not be)."""
    import pyarrow as pa

    return not pa.types.is_unsigned_integer(arrow_type) or arrow_type.bit_width < 64


def _columns_fit(given: Schema, found: Schema, time_col: str | None) -> Schema | None:
    """The given schema (its open kinds taken from the columns) when every type and
    attribute the columns hold is declared with a kind the values fit (an int column
    fits a float attribute); ``None`` sends the data through the row-wise check, which
    names each row that does not fit."""
    declared = {t: set(given.attributes(t)) for t in given.type_names()}
    kinds = dict(given.kinds)
    for type_name in found.type_names():
        allowed = declared.get(type_name)
        if allowed is None:
            return None
        if any(a not in allowed and a != time_col for a in found.attributes(type_name)):
            return None
    for attr, kind in found.kinds:
        want = kinds.get(attr)
        if want is None:
            kinds[attr] = kind
        elif want != kind and not (kind == "int" and want == "float"):
            return None
    schema = Schema.of({t: list(given.attributes(t)[1:]) for t in given.type_names()}, kinds)
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [])
    return schema


def _first_schema(batches: Callable[[], Iterator[Any]], names: list[str]) -> list[Any]:
    for batch in batches():
        return list(batch.schema)
    return []


def _is_floating(arrow_type: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(arrow_type))


def plain_type(arrow_type: Any) -> bool:
    import pyarrow as pa

    t = arrow_type
    return bool(
        pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_null(t)
    )


def _normalised(batch: Any) -> Any:
    """NaN → NULL in float columns (spec §1: NaN means missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    changed = False
    for column in batch.columns:
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
            changed = True
        columns.append(column)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _infer_columns(
    source: str,
    batches: Callable[[], Iterator[Any]],
    names: list[str],
    options: SourceOptions,
) -> tuple[Schema, Facts]:
    """The first pass over clean Arrow batches, column by column: per batch, the type
    column's problems, the time column's order, the watched attributes' order, each
    column's kind and which attributes each type mentions."""
    time_col, watch = options.time_col, options.watch
    problems = Problems(source)
    inference = Inference(options)
    facts = Facts(monotone={a: True for a in watch})
    last: dict[str, Any] = {}
    number = 0
    kinds: dict[str, str] = {}
    for batch in batches():
        batch = _normalised(batch)
        n = batch.num_rows
        if not _check_types(batch, options, number, problems):
            number += n
            continue
        if time_col is not None:
            _check_times(batch, time_col, number, problems, facts, last)
        _watch_order(batch, watch, facts, last)
        _column_kinds(batch, names, options, number, problems, kinds)
        _mentions(batch, names, options, inference)
        if options.observe is not None:
            options.observe(batch)
        number += n
        facts.count += n
    problems.raise_if_any()
    present = {a for _, attrs in inference.mentioned.items() for a in attrs}
    schema = Schema.of(
        {t: list(a) for t, a in inference.mentioned.items()},
        {n_: k for n_, k in kinds.items() if n_ in present},
    )
    return schema, facts


def _check_types(batch: Any, options: SourceOptions, number: int, problems: Problems) -> bool:
    """Problems of the type column (NULL, empty, not text; a clashing ``type`` column);
    False when the column is not text at all (the batch tells nothing more)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    type_col = options.type_col

    types = batch.column(type_col)
    if not (pa.types.is_string(types.type) or pa.types.is_large_string(types.type)):
        for i, value in enumerate(types.to_pylist()):
            message = (
                "event type is NULL"
                if value is None
                else f"event type must be a non-empty string, found {value!r}"
            )
            problems.add(Problem(number + i + 1, None, type_col, message))
        return False
    bad = pc.or_kleene(pc.is_null(types), pc.equal(types, ""))
    if pc.any(bad).as_py():
        for i, value in enumerate(types.to_pylist()):
            if value is None:
                problems.add(Problem(number + i + 1, None, type_col, "event type is NULL"))
            elif value == "":
                problems.add(
                    Problem(number + i + 1, None, type_col, "event type must be a non-empty string, found ''")
                )
    if type_col != "type" and "type" in batch.schema.names:
        clash = batch.column("type")
        for i in range(batch.num_rows):
            if clash[i].is_valid:
                problems.add(
                    Problem(number + i + 1, None, "type", f"a 'type' column clashes with the type column {type_col!r}")
                )
    return True


def _check_times(batch: Any, time_col: str, number: int, problems: Problems, facts: Facts,
                 last: dict[str, Any]) -> None:
    """Problems of the time column (NULL, not a time) and whether it is sorted so far."""
    import pyarrow as pa

    times = batch.column(time_col)
    if not (pa.types.is_integer(times.type) or pa.types.is_floating(times.type)):
        for i, value in enumerate(times.to_pylist()):
            try:
                key = time_key(value)
            except ValueError as error:
                problems.add(Problem(number + i + 1, None, time_col, str(error)))
                continue
            if facts.sorted_by_time:
                if "@time" in last and key < last["@time"]:
                    facts.sorted_by_time = False
                last["@time"] = key
        return
    if times.null_count:
        for i in range(batch.num_rows):
            if not times[i].is_valid:
                problems.add(Problem(number + i + 1, None, time_col, "the time value is NULL"))
    facts.sorted_by_time = facts.sorted_by_time and _non_decreasing(times, last, "@time")


def _watch_order(batch: Any, watch: Sequence[str], facts: Facts, last: dict[str, Any]) -> None:
    """Whether each watched numeric attribute still never decreases."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for attr in watch:
        if attr in batch.schema.names and facts.monotone.get(attr, False):
            column = batch.column(attr)
            if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
                facts.monotone[attr] = _non_decreasing(pc.drop_null(column), last, attr)


def arrow_kind(t: Any) -> str | None:
    """The attribute kind of an Arrow type (None: not one of ours)."""
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    return None


def _column_kinds(batch: Any, names: list[str], options: SourceOptions, number: int, problems: Problems,
                  kinds: dict[str, str]) -> None:
    """Each non-empty column's kind (into ``kinds``); ±infinity in float columns reported."""
    import pyarrow as pa

    for name in names:
        if name == options.type_col:
            continue
        t = batch.schema.field(name).type
        if pa.types.is_floating(t):
            _report_infinities(problems, batch.column(name), name, number)
        kind = arrow_kind(t)
        if kind is not None and batch.column(name).null_count < batch.num_rows:
            kinds[name] = kind


def _mentions(batch: Any, names: list[str], options: SourceOptions, inference: Inference) -> None:
    """Which attributes each type mentions (a non-NULL value in some row of that type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    type_col = options.type_col
    n = batch.num_rows
    valid = [n_ for n_ in names if n_ != type_col]
    # A column without NULL in this batch is mentioned by every type the batch holds: only
    # the columns with NULLs need counting per type (a group-by per batch was a third of
    # reading a dense file).
    sparse = [c for c in valid if batch.column(c).null_count > 0]
    if sparse and n:
        table = pa.Table.from_batches([batch.select([type_col, *sparse])])
        counts = table.group_by(type_col).aggregate([(c, "count") for c in sparse])
        for record in counts.to_pylist():
            type_value = record[type_col]
            if not isinstance(type_value, str) or not type_value:
                continue
            mentioned = [c for c in valid if c not in sparse or record[f"{c}_count"] > 0]
            inference.add_mentions(type_value, mentioned)
    elif n:
        for type_value in pc.unique(batch.column(type_col)).to_pylist():
            if isinstance(type_value, str) and type_value:
                inference.add_mentions(type_value, valid)


def _report_infinities(problems: Problems, column: Any, name: str, offset: int) -> None:
    """±infinity in a float column: a problem per row (see ``records.infinity_message``)."""
    import pyarrow.compute as pc

    from acel.io.records import infinity_message

    infinite = pc.fill_null(pc.is_inf(column), False)
    if not pc.any(infinite).as_py():
        return
    for i, (flag, value) in enumerate(zip(infinite.to_pylist(), column.to_pylist())):
        if flag:
            problems.add(Problem(offset + i + 1, None, name, infinity_message(value)))


def _non_decreasing(column: Any, last: dict[str, Any], name: str) -> bool:
    """Whether a numeric Arrow column never decreases (and starts at or above ``last[name]``)."""
    import pyarrow.compute as pc

    if len(column) == 0:
        return True
    first = column[0].as_py()
    if name in last and last[name] is not None and first is not None and first < last[name]:
        return False
    last[name] = column[len(column) - 1].as_py()
    if len(column) < 2:
        return True
    return bool(pc.all(pc.greater_equal(column.slice(1), column.slice(0, len(column) - 1))).as_py() is not False)

