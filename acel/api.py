"""The Python API behind ``import acel``: parse, check, compile and run queries.

Everything a user needs is here and re-exported by :mod:`acel`; the modules
below it (parser, checker, compiler, engines, io) are the implementation.
Queries may be given as text, as a :class:`Query`, or as a syntax tree
(:class:`acel.lang.ast.Query`); schemas as a :class:`~acel.lang.schema.Schema`, a
dictionary ``{type: [attribute, ...]}`` or the path of a schema file.
Every error is an :class:`~acel.lang.errors.AcelError` whose text is what the
command line prints (queries: line, column and a caret).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from acel.engines import BatchRun, Engine, resolve
from acel.lang import ast
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError, DataError
from acel.lang.schema import Schema

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from acel.acea.engine import Runner
    from acel.acea.model.automaton import ACEA
    from acel.io.options import SourceOptions
    from acel.io.source import EventStream
    from acel.lang.parser import Locations

QueryLike = Union["Query", str, ast.Query]
"""Query text, a parsed :class:`Query`, or a syntax tree."""
SchemaLike = Union[Schema, Mapping[str, Any], str, Path, None]
"""A Schema, ``{type: [attribute, ...]}`` (or the schema file's JSON), a schema file path."""
EngineLike = Union[str, Engine, BatchRun]
"""A registry name (``optimized``, ``oracle``, ``automaton``, ``sase``, ``spark``), an
:class:`~acel.engines.Engine`, or a function ``fn(query, events, schema)``."""
Result = Union[Match, TrendRow]


# ------------------------------------------------------------------ queries


class Query:
    """A parsed ACEL query.  ``str(query)`` is its canonical text; ``query.ast`` its
    syntax tree; ``query.text`` the text it was parsed from (kept for error positions)."""

    __slots__ = ("_locations", "ast", "text")

    def __init__(
        self, tree: ast.Query, text: str | None = None, locations: Locations | None = None
    ) -> None:
        self.ast = tree
        self.text = text
        self._locations = locations

    @staticmethod
    def parse(text: str) -> Query:
        """Parse query text (spec §6, §11); a syntax error names line and column."""
        from acel.lang.parser import parse_query_located

        tree, locations = parse_query_located(text)
        return Query(tree, text, locations)

    def __str__(self) -> str:
        from acel.lang.printer import format_query

        return format_query(self.ast)

    def __repr__(self) -> str:
        return f"acel.Query({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Query) and other.ast == self.ast

    def __hash__(self) -> int:
        return hash(self.ast)

    @property
    def types(self) -> tuple[str, ...]:
        """The event types the query reads (``NEXT(R)`` reads ``R``), in order of appearance."""
        found = (n.type for n in ast.formula_nodes(self.ast.formula)
                 if isinstance(n, (ast.Atom, ast.Next)))
        return tuple(dict.fromkeys(found))

    def check(self, schema: SchemaLike) -> Query:
        """Check names against ``schema`` (raises a located error); returns ``self``."""
        from acel.lang.checker import check_query

        check_query(self.ast, as_schema(schema) or Schema.of({}), locations=self._locations,
                    text=self.text)
        return self

    def compile(self, schema: SchemaLike = None) -> CompiledQuery:
        """:func:`compile` of this query."""
        return compile(self, schema)

    def run(self, data: Any, engine: EngineLike = "optimized", **options: Any) -> Results:
        """:func:`run` of this query."""
        return run(self, data, engine, **options)


def parse(text: str) -> Query:
    """Parse ACEL query text: ``str(parse("SELL as x;BUY"))`` is ``'SELL AS x ; BUY'``."""
    return Query.parse(text)


def as_query(query: QueryLike) -> Query:
    """``query`` as a :class:`Query` (text is parsed)."""
    if isinstance(query, Query):
        return query
    if isinstance(query, str):
        return Query.parse(query)
    if isinstance(query, ast.Query):
        return Query(query)
    if isinstance(query, ast.FORMULA_TYPES):
        return Query(ast.Query(query))  # type: ignore[arg-type]
    raise TypeError(f"not a query: {query!r} (give text or acel.parse(text))")


def as_schema(schema: SchemaLike) -> Schema | None:
    """``schema`` as a :class:`Schema` (``None`` stays ``None``)."""
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, (str, Path)):
        from acel.io import read_schema

        return read_schema(schema)
    if isinstance(schema, Mapping):
        try:
            return Schema.from_json(schema)
        except ValueError as error:
            raise DataError(str(error)) from None
    raise TypeError(f"not a schema: {schema!r} (give a Schema, a dict or a file path)")


def schema_of(query: QueryLike) -> Schema:
    """A schema naming only the query's types, without attributes: enough to compile a
    query that reads no attribute, or to draw its automaton."""
    parsed = as_query(query)
    if ast.contains(parsed.ast.formula, ast.Next):
        raise AcelError("NEXT(R) expands over every type of the schema: give the schema")
    return Schema.of({name: [] for name in parsed.types})


def check(query: QueryLike, schema: SchemaLike) -> Query:
    """Parse (if text) and check ``query`` against ``schema``; a located error otherwise."""
    return as_query(query).check(schema)


# ------------------------------------------------------------------ compiling


class CompiledQuery:
    """A query compiled to an ACEA (spec §7).

    ``automaton`` is the query's (WITHIN included); leading and trailing
    ``NOT`` are not in it (the query driver applies them per window):
    ``negated`` holds their automata.  In Jupyter it draws itself
    (``_repr_svg_``), or shows :meth:`summary` when Graphviz is missing.
    """

    def __init__(self, query: Query, schema: Schema) -> None:
        from acel.compiler import compile_query

        self.query = query
        self.schema = schema
        self._compiled = compile_query(query.ast, schema)
        self.automaton: ACEA = self._compiled.automaton
        self.negated: tuple[ACEA, ...] = self._compiled.leading + self._compiled.trailing

    @property
    def dot(self) -> str:
        """The automaton as Graphviz DOT text (needs no Graphviz program)."""
        from acel.acea.model.render import to_dot

        return to_dot(self.automaton)

    def size(self) -> dict[str, int]:
        """States, transitions, registers, and loops (strongly connected components with
        a cycle: the ``+`` iterations and the skip loops of ``;``)."""
        from acel.acea.model.graph import sizes

        return sizes(self.automaton)

    def svg(self, detail: str = "short") -> str:
        """The automaton as SVG text; an :class:`AcelError` when Graphviz's ``dot`` is missing.
        ``detail="short"``: guards in the query's words, register updates in a numbered
        legend; ``"full"``: every register (issue 25)."""
        import graphviz

        from acel.acea.model.render import to_svg

        try:
            return to_svg(self.automaton, detail=detail)
        except graphviz.ExecutableNotFound:
            raise AcelError(
                "drawing needs Graphviz's dot program (apt-get install graphviz); "
                "the DOT text is in .dot"
            ) from None

    def render(self, path: str | Path, fmt: str | None = None, detail: str = "short") -> Path:
        """Write the picture (svg, png, pdf or dot, by ``fmt`` or the file suffix; ``detail``
        as in :meth:`svg`)."""
        from acel.acea.model.render import render

        return render(self.automaton, path, fmt, detail)

    def simplify(self) -> CompiledQuery:
        """The same query with constants folded and transitions whose predicates can
        never hold removed (sympy): a smaller picture, the same complex events."""
        from acel.acea.model.simplify import simplify

        out = object.__new__(CompiledQuery)
        out.query, out.schema, out._compiled = self.query, self.schema, self._compiled
        out.automaton = simplify(self.automaton)
        out.negated = tuple(simplify(a) for a in self.negated)
        return out

    def summary(self, detail: str = "short") -> str:
        """A plain-text description: the size, then every transition as ``p -> q: label``
        (``detail`` as in :meth:`svg`: short labels number their updates, listed last)."""
        from acel.acea.model.render import transition_lines

        size = ", ".join(f"{value} {name}" for name, value in self.size().items())
        automaton = self.automaton
        finals = ", ".join(map(str, sorted(automaton.finals))) or "none"
        lines = [f"ACEA of {self.query}", f"  {size}",
                 f"  initial state {automaton.initial}, final states {finals}"]
        labels, legend = transition_lines(automaton, detail)
        for t, label in zip(automaton.transitions, labels):
            lines.append(f"  {t.source} -> {t.target}: {(' | ' if detail == 'full' else ', ').join(label)}")
        lines.extend(f"  [{n}] {text}" for text, n in legend.items.items())
        if self.negated:
            lines.append(f"  ({len(self.negated)} leading/trailing NOT automata, applied per window)")
        return "\n".join(lines)

    def runner(self) -> Runner:
        """An incremental runner of this query (see :func:`acel.runner`)."""
        return runner(self.query, self.schema)

    def run(self, data: Any, engine: EngineLike = "optimized", **options: Any) -> Results:
        """:func:`run` of the compiled query (with its schema)."""
        return run(self.query, data, engine, schema=self.schema, **options)

    def _repr_svg_(self) -> str | None:
        """Jupyter's picture, scaled down to the cell's width when wider (issue 37: a
        1,507 px automaton put its final state off screen); ``None`` without Graphviz, so
        that the text is shown instead."""
        try:
            return fit_to_width(self.svg())
        except AcelError:
            return None

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.summary())

    def __repr__(self) -> str:
        size = self.size()
        return (f"<acel.CompiledQuery {str(self.query)!r}: {size['states']} states, "
                f"{size['transitions']} transitions, {size['registers']} registers>")


def compile(query: QueryLike, schema: SchemaLike = None) -> CompiledQuery:
    """Compile ``query`` to an ACEA over ``schema`` (checked), else over the query's own names."""
    parsed = as_query(query)
    given = as_schema(schema)
    if given is None:
        given = schema_of(parsed)
    else:
        parsed.check(given)
    return CompiledQuery(parsed, given)


# ------------------------------------------------------------------ running


class Results:
    """The results of a run, computed as they are read.

    Iterating runs the engine over the events batch by batch and hands out
    each result once it is final, in the order of spec §12: complex events
    (:class:`~acel.lang.clauses.Match`) by end position, RETURN rows
    (:class:`~acel.lang.clauses.TrendRow`) by key and window once all are known.
    Each iteration runs the query again (a stream read from standard input
    only once); :meth:`to_list` keeps them.
    """

    def __init__(
        self, query: Query, stream: EventStream, engine: Engine, max_events: int | None = None
    ) -> None:
        self.query = query
        self.stream = stream
        self.engine = engine
        self.max_events = max_events

    @property
    def schema(self) -> Schema:
        """The schema the query was checked against (given, or inferred from the data)."""
        return self.stream.schema

    def groups(self) -> Iterator[list[Result]]:
        """The results in groups, each as soon as it is final (complex events: those
        ending at one position; RETURN rows: all of them, at the end)."""
        from acel.engines.running import result_groups
        from acel.io.results import sort_results

        groups = result_groups(self.query.ast, self.schema, self.stream, self.engine,
                               max_events=self.max_events)
        if self.query.ast.returns is None:
            for group in groups:
                yield sort_results(group)
            return
        rows = [row for group in groups for row in group]
        if rows:
            yield sort_results(rows)

    def __iter__(self) -> Iterator[Result]:
        for group in self.groups():
            yield from group

    def to_list(self) -> list[Result]:
        """Every result, in the order of spec §12."""
        return list(self)

    def to_json_lines(self) -> list[str]:
        """The canonical JSON Lines of spec §12 (one string per result, no newline)."""
        from acel.io.lines import LineEncoder

        encoder = LineEncoder()
        encode = encoder.row if self.query.ast.returns is not None else encoder.match
        return [encode(item).decode("utf-8") for item in self]  # type: ignore[arg-type]

    def write(self, path: str | Path, fmt: str | None = None) -> int:
        """Write the results to a file (``.jsonl``, ``.csv``, ``.parquet``, or ``fmt``) as
        ``acel run --out`` does, each group as it becomes final; returns how many."""
        from acel.io.results import ResultWriter
        from acel.lang.checker import attribute_kinds

        query = self.query.ast
        writer = ResultWriter(path, fmt, kinds=attribute_kinds(query, dict(self.schema.kinds)),
                              key_names=query.partition_by)
        try:
            for group in self.groups():
                writer.add(group)
                writer.flush()
            return writer.close()
        except BaseException:
            writer.abort()
            raise

    def to_arrow(self, form: str = "nested") -> pyarrow.Table:
        """A pyarrow Table.  ``form="nested"`` (the default) is the one ``acel run --out
        FILE.parquet`` writes: complex events as ``start, end``, ``key`` (a struct, with
        PARTITION BY) and ``vars`` (a map from variable to its typed events,
        :class:`acel.io.results.MatchLayout`); RETURN rows as the key attributes,
        ``window_lo, window_hi`` (with SLIDE) and one column per item.  ``form="flat"``:
        one column per variable attribute (``msft.price``; a bag's cells are lists);
        ``form="long"``: one row per (match, variable, event) (:mod:`acel.tables`)."""
        from acel.tables import arrow_table, check_form, columns_of

        if check_form(form) != "nested":
            returns = self.query.ast.returns is not None
            return arrow_table(columns_of(self.to_list(), form, returns))
        import tempfile

        import pyarrow.parquet as pq

        with tempfile.TemporaryDirectory(prefix="acel-results-") as folder:
            path = Path(folder) / "results.parquet"
            self.write(path)
            return pq.read_table(path)

    def to_pandas(self, form: str = "nested") -> pandas.DataFrame:
        """:meth:`to_arrow` as a pandas DataFrame (``form``: nested, flat or long).  An
        integer column with a missing value is pandas' nullable ``Int64``: plain pandas
        would make it float (``101.0``, issue 37)."""
        import pandas as pd
        import pyarrow as pa

        table = self.to_arrow(form)
        frame = table.to_pandas()
        for name, column in zip(table.column_names, table.columns):
            if pa.types.is_integer(column.type) and column.null_count:
                frame[name] = pd.array(column.to_pylist(), dtype="Int64")
        return frame

    def _repr_html_(self) -> str:
        """Jupyter's view: the first results as a flat table, and how many there are."""
        from acel.tables import html_table

        return html_table(self, self.query.ast.returns is not None, str(self.query))

    def __repr__(self) -> str:
        return (f"<acel.Results of {str(self.query)!r} on {self.stream.source} "
                f"({self.engine.name} engine)>")


def fit_to_width(svg: str) -> str:
    """``svg`` whose root element shrinks to its container's width (keeping its aspect
    through Graphviz's ``viewBox``) and never grows past its own size."""
    import re

    return re.sub(r"<svg\b", '<svg style="max-width:100%;height:auto"', svg, count=1)


def _watch(query: ast.Query) -> list[str]:
    within = query.within
    return [within.attr] if within is not None and within.attr else []


class EmptyData(DataError):
    """Data without a single event and no schema to check the query against."""

    def __init__(self, source: str) -> None:
        super().__init__(
            f"{source}: the data holds no events, so there is no schema to check the query "
            "against (give a schema to run it on an empty stream)"
        )
        self.source = source


def open_stream(
    data: Any,
    check: Callable[[Schema], object],
    options: SourceOptions | None = None,
) -> EventStream:
    """The event stream of ``data``, with ``check(schema)`` called on the schema the run
    will use (``options.schema``, or inferred from the data) before any event is run;
    ``options`` (:class:`acel.io.SourceOptions`): the type and time columns, the
    attributes of ``WITHIN … ON attr`` windows (``watch``), standard input's reorder
    bound and quiet-time advance.  One query: :func:`open_checked`; a workload
    (:mod:`acel.workload`) checks each of its queries."""
    from acel.io import SourceOptions, open_events

    options = options if options is not None else SourceOptions()
    schema = options.schema
    if schema is not None:
        check(schema)  # names checked before any data is read
    stream = open_events(data, options=options)
    if schema is None:
        if stream.facts is not None and stream.facts.count == 0:
            raise EmptyData(stream.source)
        check(stream.schema)
    elif stream.schema.kinds != schema.kinds:  # kinds the schema left open, read from the data
        check(stream.schema)
    return stream


def open_checked(query: Query, data: Any, options: SourceOptions | None = None) -> EventStream:
    """The event stream of ``data``, and ``query`` checked against its schema (given in
    ``options``, or inferred from the data); the query's ``WITHIN … ON`` attribute is
    watched.  Nothing is run yet."""
    from dataclasses import replace

    from acel.io import SourceOptions

    options = replace(options if options is not None else SourceOptions(), watch=tuple(_watch(query.ast)))
    return open_stream(data, query.check, options)


def run(
    query: QueryLike,
    data: Any,
    engine: EngineLike = "optimized",
    *,
    schema: SchemaLike = None,
    type_col: str = "type",
    time_col: str | None = None,
    max_events: int | None = None,
) -> Results:
    """Run ``query`` on ``data`` (a file, ``"-"``, dicts, pandas or pyarrow): lazy :class:`Results`;
    events sorted by ``time_col`` if given, the query checked against ``schema`` or the data's."""
    from acel.io import SourceOptions

    parsed = as_query(query)
    chosen = resolve(engine)
    stream = open_checked(parsed, data, SourceOptions(type_col=type_col, time_col=time_col, schema=as_schema(schema)))
    return Results(parsed, stream, chosen, max_events)


def runner(query: QueryLike, schema: SchemaLike = None, *, state: bytes | None = None) -> Runner:
    """An incremental runner: ``push(event)`` returns the results now final, ``finish()``,
    ``save()`` → bytes to resume from with ``state=`` (papers/streaming.md)."""
    from acel.acea.engine import Runner

    parsed = as_query(query)
    given = as_schema(schema) or schema_of(parsed)
    parsed.check(given)
    if state is not None:
        return Runner.restore(parsed.ast, given, state)
    return Runner(parsed.ast, given)


__all__ = [
    "CompiledQuery",
    "EmptyData",
    "EngineLike",
    "Query",
    "QueryLike",
    "Results",
    "SchemaLike",
    "as_query",
    "as_schema",
    "check",
    "compile",
    "open_checked",
    "open_stream",
    "parse",
    "run",
    "runner",
    "schema_of",
]
