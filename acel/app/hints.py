"""One-line warnings for results that are empty for a reason the user may not see.

Issue 24 item 15: an attribute no one can read makes every filter on it false
(spec §3: a missing attribute is NULL, and unknown is false), so a query can
compile to an automaton with no transition, or run to no result, without a
word.  These warnings name the attribute; they never change a result
(papers/io.md, "Hostile input").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from acel.lang import ast
from acel.lang.schema import Schema


def attributes_read(query: ast.Query) -> list[str]:
    """The attributes the query's pattern reads (filters, aggregates), in order."""
    names = (node.name for node in ast.walk(query.formula) if isinstance(node, ast.Attr))
    return list(dict.fromkeys(names))


def no_schema_warning(query: ast.Query) -> str | None:
    """``acel compile`` without ``--schema``/``--data``: the types have no attribute, so
    every condition on one is false (and its transitions are trimmed)."""
    names = attributes_read(query)
    if not names:
        return None
    shown = ", ".join(names)
    return (f"warning: without --schema or --data no attribute is known, so every condition on "
            f"{shown} is false and the automaton drops it; give --schema or --data")


class MissingAttributes:
    """Watches the events of a run for the attributes a given schema declares and the
    query reads; :meth:`error` names those no event had (never set, or always NULL),
    except the ones the user said may be ``absent`` (``acel run --absent``, issue 37).

    Called with each batch of attribute maps; once every watched attribute has been
    seen it does nothing more, so a run whose data has them pays almost nothing.
    """

    def __init__(self, query: ast.Query, schema: Schema, absent: Iterable[str] = ()) -> None:
        declared = set(schema.all_attributes()) - set(absent)
        self.missing = {name for name in attributes_read(query) if name in declared}
        self.order = [name for name in attributes_read(query) if name in self.missing]

    def __call__(self, batch: Iterable[Mapping[str, Any]]) -> None:
        missing = self.missing
        if not missing:
            return
        for attrs in batch:
            for name in [n for n in missing if attrs.get(n) is not None]:
                missing.discard(name)
            if not missing:
                return

    def error(self, read: int) -> str | None:
        """The error line after a run over ``read`` events, or ``None``."""
        names = [name for name in self.order if name in self.missing]
        if not names or read == 0:
            return None
        shown = ", ".join(repr(name) for name in names)
        it = "it" if len(names) == 1 else "them"
        return (f"the schema declares {shown} but no event of the data has {it}, so every "
                f"condition on {it} is false (a missing attribute is NULL); if the data may "
                f"lack {it}, say so with --absent {','.join(names)}")

