"""Raw input records, their problems, the per-record check and schema inference: the
names every reader imports, kept here (issue 34 moved their code).

:class:`Row`, :class:`RecordChecker` and :class:`Inference` live with the C scanner's loops
that call them for each record it leaves (:mod:`acel.io.record_pass`), :class:`Problem`
and :class:`Problems` in :mod:`acel.io.problems`; here are the records given in memory
and the time column a schema gains.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from acel.io.problems import MAX_SHOWN, Problem, Problems, infinity_message
from acel.io.record_pass import Inference, RecordChecker, Row, plain_values
from acel.io.values import MAX_ATTRIBUTES, lone_surrogate, surrogate_message, too_many_attributes
from acel.lang.events import Value
from acel.lang.schema import Schema


def memory_row(number: int, values: dict[str, object]) -> Row:
    """A record given in memory (a dict, a DataFrame row): a text value with a lone
    surrogate fails the row at once (files cannot hold one: their readers refuse it), as
    does a record of more than :data:`~acel.io.values.MAX_ATTRIBUTES` attributes."""
    if len(values) > MAX_ATTRIBUTES + 1:
        return Row(number, None, {}, too_many_attributes(len(values) - 1))
    for column, value in values.items():
        if type(value) is str and lone_surrogate(value):
            return Row(number, None, {}, surrogate_message(column), column)
    return Row(number, None, values)


def with_time_column(schema: Schema, time_col: str, carriers: Iterable[str], kinds: Iterable[str]) -> Schema:
    """The given schema plus the time column for every type that carries it.

    The time column stays an ordinary attribute (spec §1) even when the schema
    file does not list it, so engines that copy only schema attributes keep it.
    """
    carrier_set = set(carriers)
    types = {t: list(schema.attributes(t)[1:]) for t in schema.type_names()}
    changed = False
    for type_name, attrs in types.items():
        if type_name in carrier_set and time_col not in attrs:
            attrs.append(time_col)
            changed = True
    if not changed:
        return schema
    all_kinds = dict(schema.kinds)
    if time_col not in all_kinds:
        seen = set(kinds)
        if len(seen) == 1 or seen == {"int", "float"}:
            all_kinds[time_col] = "float" if "float" in seen else seen.pop()
    return Schema.of(types, all_kinds)


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


__all__ = [
    "MAX_SHOWN",
    "Inference",
    "Problem",
    "Problems",
    "RecordChecker",
    "Row",
    "Value",
    "infinity_message",
    "memory_row",
    "plain_values",
    "with_time_column",
]
