"""Results of ``acel.spark.run`` shaped for people (issue 25 §4, issue 37 §2).

The executors write exact, engine-neutral columns (``vars`` as the §12 JSON text,
integer counts as DECIMAL(38,0) under their §12 names such as ``COUNT(*)``), which
``run_to_results`` and the command line read back.  A Spark user gets instead:

* ``vars``: a struct with one field per variable of the query, each the array of the
  events it binds, an event being ``struct<time: bigint, a: kind, …>`` with the
  attributes of that variable's types only (the checker's environment,
  :func:`acel.lang.checker.formula_env`), typed; ``time`` is the position of spec §12,
  and an attribute itself called ``time`` is shown as ``time_``; names Spark would take
  for one another (``A`` beside ``a``: it compares names case-insensitively) get
  ``_2``, ``_3``, … in sorted order (:func:`unique_name`);
* RETURN items under names that need no backticks (:func:`column_name`: ``count``,
  ``count_b``, ``sum_b_v``, ``max_s_price``), integer counts and sums as ``bigint``
  (``counts="long"``); a value past 2^63 − 1 fails the action with one line naming
  the item, never wraps or turns NULL, and ``counts="decimal"`` keeps DECIMAL(38,0).

All of it is lazy: column expressions in the JVM, no job and no Python per row.  A
JSON value that does not fit its field fails the job (``FAILFAST``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from acel.lang.ast import CountStar, ReturnAttr, ReturnItem
from acel.lang.checker import attribute_kinds, formula_env
from acel.lang.clauses import item_name

from .executor import WINDOW_HI, WINDOW_LO, item_columns

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from acel.lang.ast import Query
    from acel.lang.schema import Schema

    from .layout import Layout

Counts = Literal["long", "decimal"]


class Source(Protocol):
    """What shaping reads of the events: their attribute kinds and event types."""

    @property
    def kinds(self) -> dict[str, str]: ...

    @property
    def schema(self) -> Schema: ...


class Planned(Protocol):
    """A planned frame of the executors' columns (a batch run's ``run.Planned`` or a
    stream's ``streaming.PlannedStream``): the same query gives the same shaped schema."""

    @property
    def frame(self) -> DataFrame: ...

    @property
    def query(self) -> Query: ...

    @property
    def layout(self) -> Layout: ...

    @property
    def stream(self) -> Source: ...

_SPARK_TYPE = {"int": "bigint", "float": "double", "str": "string", "bool": "boolean"}
"""Spark's type for each value kind; an attribute of unknown or mixed kind stays text."""
LONG_MAX = (1 << 63) - 1
POSITION = "time"
"""The event field holding the position (spec §12 calls it ``time``)."""


def column_name(item: ReturnItem) -> str:
    """A RETURN item's column name without backticks: ``COUNT(*)`` → ``count``,
    ``COUNT(b)`` → ``count_b``, ``SUM(b.v)`` → ``sum_b_v``; a key attribute keeps its name."""
    if isinstance(item, CountStar):
        return "count"
    if isinstance(item, ReturnAttr):
        return item.name
    parts = [item.func.lower(), item.var] + ([item.attr] if item.attr is not None else [])
    return "_".join(parts)


def column_names(
    items: tuple[ReturnItem, ...], keys: tuple[str, ...], taken: tuple[str, ...] = ()
) -> dict[int, str]:
    """Each item's column name (items naming a key have none: the key column is theirs),
    made unique against the ``keys``, ``taken`` (window columns) and the items before
    it by a suffix ``_2``, ``_3``, …"""
    used = {name.casefold() for name in (*keys, *taken)}
    return {i: unique_name(column_name(items[i]), used) for i in item_columns(items, keys)}


def unique_name(base: str, used: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``, … when Spark would take it for a name in
    ``used`` (case-folded: Spark resolves names and reads Parquet case-insensitively,
    so ``A`` beside ``a`` is refused as ``COLUMN_ALREADY_EXISTS``); the result is added
    to ``used``."""
    name, n = base, 1
    while name.casefold() in used:
        n += 1
        name = f"{base}_{n}"
    used.add(name.casefold())
    return name


def _field(name: str, attrs: frozenset[str]) -> str:
    """An attribute's field name in an event struct (``time`` is the position)."""
    if name != POSITION:
        return name
    name += "_"
    while name in attrs:
        name += "_"
    return name


def json_type(planned: Planned) -> Any:
    """The §12 ``vars`` text as ``map<string, array<struct<time, attrs: struct<…>>>>``."""
    from pyspark.sql import types as T

    kinds = _kinds(planned)
    attrs = T.StructType([
        T.StructField(name, T._parse_datatype_string(_SPARK_TYPE.get(kinds[name], "string")))
        for name in sorted(kinds)
    ])
    event = T.StructType([T.StructField("time", T.LongType()), T.StructField("attrs", attrs)])
    return T.MapType(T.StringType(), T.ArrayType(event))


def _kinds(planned: Planned) -> dict[str, str]:
    kinds = attribute_kinds(planned.query, planned.stream.kinds)
    kinds["type"] = "str"
    return kinds


def variables(planned: Planned) -> dict[str, tuple[str, ...]]:
    """Each variable of the query with the attributes its events may carry, sorted
    (``type`` among them for stream events; an AGG variable's events carry its outputs)."""
    env = formula_env(planned.query.formula, planned.stream.schema)
    return {var: tuple(sorted(attrs)) for var, attrs in sorted(env.items())}


def _vars_column(planned: Planned) -> Column:
    """``vars`` as one struct field per variable (module docstring)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kinds = _kinds(planned)
    parsed = F.from_json(F.col("vars"), json_type(planned), {"mode": "FAILFAST"})
    fields = []
    taken: set[str] = set()
    for var, attrs in variables(planned).items():
        own = {POSITION.casefold()}
        names = {a: unique_name(_field(a, frozenset(attrs)), own) for a in attrs}
        event = T.StructType([T.StructField(POSITION, T.LongType())] + [
            T.StructField(names[a], T._parse_datatype_string(_SPARK_TYPE.get(kinds.get(a, ""), "string")))
            for a in attrs
        ])

        events = F.transform(parsed[var], _flattener(names))
        fields.append(
            F.coalesce(events, F.array().cast(T.ArrayType(event))).alias(unique_name(var, taken))
        )
    return F.struct(*fields)


def _flattener(names: dict[str, str]) -> Any:
    """``e -> struct(e.time, e.attrs.a AS names[a], …)`` (a one-argument function, as
    ``F.transform`` wants)."""
    from pyspark.sql import functions as F

    def flat(e: Column) -> Column:
        return F.struct(e[POSITION].alias(POSITION), *[e["attrs"][a].alias(n) for a, n in names.items()])

    return flat


def _count_column(column: Column, name: str, shown: str) -> Column:
    """A DECIMAL(38,0) column as ``bigint``; a value past 2^63 − 1 fails the action."""
    from pyspark.sql import functions as F

    fits = column.isNull() | ((column >= F.lit(-LONG_MAX - 1)) & (column <= F.lit(LONG_MAX)))
    message = F.concat(
        F.lit(f"{shown} = "), column.cast("string"),
        F.lit(" does not fit a long column; run with counts='decimal' (DECIMAL(38,0))"),
    )
    return F.when(fits, column.cast("long")).otherwise(F.raise_error(message)).alias(name)


def _rows(planned: Planned, counts: Counts) -> DataFrame:
    """RETURN rows under names without backticks, counts as ``bigint`` (``counts="long"``)."""
    from pyspark.sql import functions as F

    layout = planned.layout
    taken = tuple(layout.key_names) + ((WINDOW_LO, WINDOW_HI) if layout.window_kind is not None else ())
    names = column_names(layout.items, tuple(layout.key_names), taken[len(layout.key_names):])
    kinds = dict(zip(item_columns(layout.items, layout.key_names), layout.item_kinds))
    columns = [F.col(f"`{c}`") for c in taken]
    for i, name in names.items():
        shown = item_name(layout.items[i])
        column = F.col(f"`{shown}`")
        if kinds[i] == "decimal" and counts == "long":
            columns.append(_count_column(column, name, shown))
        else:
            columns.append(column.alias(name))
    return planned.frame.select(*columns)


def shaped(planned: Planned, counts: Counts = "long") -> DataFrame:
    """The planned frame as people read it: typed ``vars`` per variable, or RETURN rows
    with plain names and ``bigint`` counts (module docstring)."""
    if planned.layout.mode != "matches":
        return _rows(planned, counts)
    return planned.frame.withColumn("vars", _vars_column(planned))


__all__ = ["column_name", "column_names", "json_type", "shaped", "variables"]
