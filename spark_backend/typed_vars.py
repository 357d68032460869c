"""The ``vars`` column of complex events as typed Spark data (issue 25 §4).

The executors write ``vars`` as the §12 JSON text (exact, and the same bytes every
engine writes).  A Spark user wants columns: ``vars`` becomes a map from variable to
the array of its events, each ``struct<time: bigint, attrs: struct<...>>`` with one
field per attribute the query can see (the stream's columns and AGG outputs, the
layout :class:`acel.io.results.MatchLayout` gives ``to_arrow``).  The conversion is a
lazy ``from_json`` in the JVM; a value that does not fit its field (an integer past
64 bits) fails the job rather than becoming NULL (``FAILFAST``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acel.lang.checker import attribute_kinds

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from .run import Planned

_SPARK_TYPE = {"int": "bigint", "float": "double", "str": "string", "bool": "boolean"}
"""Spark's type for each value kind; an attribute of unknown or mixed kind stays text."""


def vars_type(planned: Planned) -> Any:
    """``map<string, array<struct<time: bigint, attrs: struct<a: kind, …>>>>`` for a run."""
    from pyspark.sql import types as T

    kinds = attribute_kinds(planned.query, planned.stream.kinds)
    kinds["type"] = "str"
    attrs = T.StructType([
        T.StructField(name, T._parse_datatype_string(_SPARK_TYPE.get(kinds[name], "string")))
        for name in sorted(kinds)
    ])
    event = T.StructType([T.StructField("time", T.LongType()), T.StructField("attrs", attrs)])
    return T.MapType(T.StringType(), T.ArrayType(event))


def typed(planned: Planned) -> DataFrame:
    """The planned frame with ``vars`` typed (RETURN rows are returned unchanged)."""
    from pyspark.sql import functions as F

    frame = planned.frame
    if planned.layout.mode != "matches":
        return frame
    parsed = F.from_json(F.col("vars"), vars_type(planned), {"mode": "FAILFAST"})
    return frame.withColumn("vars", parsed)


__all__ = ["typed", "vars_type"]
