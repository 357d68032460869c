"""Coverage-guided fuzzing of the query front end and the compiler (issue 24).

Each input is query text: parsed, printed and parsed again (the same tree),
checked against a schema that knows every name the examples use, compiled when
small, and run on a tiny stream by the optimized engine.  Every failure must be
an :class:`acel.AcelError` (one clear line); anything else is a crash.

    .venv/bin/python tools/fuzz_queries.py CORPUS -dict=fuzz_queries.dict -runs=100000 -timeout=20

(``fuzz_queries.dict``, the new syntax's tokens, is written beside ``CORPUS``.)

Needs ``atheris`` (``pip install -e '.[fuzz]'``).  Crashes become regression
examples in ``tests/test_io_hostile.py``; figures in ``papers/io.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["acel", "lark"]):
    import acel.acea.engine
    import acel.compiler
    import acel.reference.oracle

    import acel
    import acel.api
    import acel.lang.checker
    import acel.lang.parser
    import acel.lang.printer
    from acel.lang import ast
    from acel.lang.errors import AcelError
    from acel.lang.expansion import expansion_cost
    from acel.lang.schema import Schema

REPO = Path(__file__).resolve().parents[1]
TYPES = ("A", "B", "C", "SELL", "BUY", "Stock", "News")
ATTRS = ("v", "w", "name", "price", "volume", "ts", "kind", "company")
SCHEMA = Schema.of({t: list(ATTRS) for t in TYPES}, {"name": "str", "kind": "str", "company": "str"})
EVENTS = [
    {"type": t, "v": i % 3, "w": i, "name": "ab"[i % 2], "price": 10 * i, "volume": i,
     "ts": i, "kind": "x", "company": "c"}
    for i, t in enumerate(("A", "B", "A", "C", "SELL", "BUY"))
]
MAX_NODES = 14
"""Compile and run only queries whose formula has at most this many nodes."""


def _nodes(formula: ast.Formula) -> int:
    """The formula's nodes once its quantifiers are expanded (``A{344}`` is 687 of them,
    too many to compile in the fuzzer's time limit under instrumentation)."""
    return max(sum(1 for _ in ast.walk(formula)), expansion_cost(formula).size)


def one_query(text: str) -> None:
    """Parse, print, re-parse, check, compile and run ``text``; only AcelError may escape."""
    try:
        query = acel.parse(text)
    except AcelError as error:
        assert str(error), "an error without a message"
        return
    again = acel.parse(str(query))
    assert again.ast == query.ast, f"printing changed the query: {text!r} -> {str(query)!r}"
    try:
        acel.check(query, SCHEMA)
        if _nodes(query.ast.formula) > MAX_NODES:
            return
        compiled = acel.compile(query, SCHEMA)
        if compiled.size()["states"] > 400:
            return
        list(acel.run(query, EVENTS, schema=SCHEMA))
    except AcelError as error:
        assert str(error), "an error without a message"


def test_one(data: bytes) -> None:
    """The atheris entry point: the bytes as UTF-8 text (invalid bytes replaced)."""
    one_query(data.decode("utf-8", "replace"))


HOSTILE = (
    "A ; " + " ; ".join(["B?"] * 30) + " ; C",
    "A ; " + " ; ".join(f"(B AS b{i})?" for i in range(20)) + " ; C",
    "A ; " + " ; ".join(["B*"] * 25) + " ; C",
    "A ; B? ; C* ; (B AS y)? ; A",
    "A{2,5}{3,7}{10,20}",
    "((A{1,30}){1,30}){1,30}",
    "A{20000}",
    "A{100000} ; B",
    "A:{2,3} ; B{2,} : C{1,2}",
    "RETURN COUNT(*) PATTERN (A AS x)+ FILTER x[v > RUNNING AVG(v)]",
    "(A AS x)+ FILTER x[v > RUNNING SUM(v)] WITHIN 1000000000 EVENTS",
    "RETURN COUNT(*) PATTERN ((A AS x)+ ; B)+ FILTER x[v > PREV(v)]",
    "RETURN COUNT(*) PATTERN (A AS x)+ ; (B AS y) FILTER y[v >= FIRST(x.v) AND v <= LAST(x.v)]",
    "SELECT MAX (A AS x)+ ; B",
    "SELECT NEXT (A AS x)+ ; B WITHIN 3 EVENTS",
    "SELECT LAST (A AS x)+ ; B",
    "SELECT STRICT (A AS x)+ ; B",
    "(A AS x)+ ; B AFTER MATCH SKIP TO LAST x",
    "(A AS x)+ ; B AFTER MATCH SKIP PAST LAST ROW",
)
"""Issue 35's hostile shapes: quantifiers, optional elements and stars, histories,
selection strategies and skips (seeds, and tokens for the dictionary)."""
TOKENS = ("?", "*", "{", "}", "{2}", "{1,3}", "{2,}", ":{", ",", "RUNNING", "PREV(", "FIRST(",
          "LAST(", "SELECT", "MAX", "NEXT", "STRICT", "AFTER MATCH SKIP", "TO LAST",
          "PAST LAST ROW", "TO NEXT ROW", "TO FIRST", "WITHIN", "EVENTS", "RETURN", "COUNT(*)")


def seeds(corpus: Path) -> None:
    """Put the project's example queries and issue 35's hostile shapes into ``corpus``
    (once), and the new syntax's tokens into ``fuzz_queries.dict`` beside it."""
    corpus.mkdir(parents=True, exist_ok=True)
    for path in sorted((REPO / "examples").glob("**/*.acel")):
        target = corpus / f"seed-{path.parent.name}-{path.name}"
        if not target.exists():
            target.write_bytes(path.read_bytes())
    for index, text in enumerate(HOSTILE):
        target = corpus / f"seed-hostile-{index}.acel"
        if not target.exists():
            target.write_text(text, encoding="utf-8")
    words = "".join(f'"{token}"\n' for token in TOKENS)
    (corpus.parent / "fuzz_queries.dict").write_text(words, encoding="utf-8")


def main() -> None:
    """Run atheris with the given libFuzzer arguments (the first: the corpus folder)."""
    args = sys.argv
    corpus = next((Path(a) for a in args[1:] if not a.startswith("-")), None)
    if corpus is not None:
        seeds(corpus)
    atheris.Setup(args, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
