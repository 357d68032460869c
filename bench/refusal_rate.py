"""How often the compiled engines refuse a query the oracle answers (issue 32 item 3).

Draws queries with filters from the whole of spec §5.1 (``acel.testing.relating_queries``:
``!=``, OR across terms, FIRST/LAST in filters and in AGG, two other variables in one
comparison, PREV over any variable), keeps those the checker accepts and the oracle answers
on a short generated stream, and compiles each for the automaton engine and for the
optimized engine (which Spark runs on its executors; its compilation passes the query's
window bound, ``acel.compiler.events_bound``).  Prints the refusal rate and the refusals grouped
by their reason (``--list``: every refused query too).
``python bench/refusal_rate.py [N] [SEED] [--list]``.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass

from acel.acea import engine as optimized
from acel.compiler import compile_query
from acel.reference import oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis.strategies import SearchStrategy

from acel.lang.ast import Query
from acel.lang.checker import check_query
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.printer import format_query
from acel.testing import TEST_SCHEMA, streams
from acel.testing.strategies import relating_queries


@dataclass
class Rate:
    answered: int = 0
    refused: int = 0
    reasons: Counter[str] | None = None
    examples: dict[str, str] | None = None
    refusals: list[tuple[str, str]] | None = None
    """Every refused query (its reason, its text), for ``--list``."""

    @property
    def rate(self) -> float:
        return self.refused / self.answered if self.answered else 0.0


def _reason(message: str) -> str:
    """The refusal's reason without the query text (the part after the colon)."""
    message = re.sub(r"(FIRST|LAST)\(\w+\.\w+\) in AGG \w+\[\.\.\.\]", r"\1(Y.a) in AGG", message)
    return re.sub(r"compile .* in \S+\[.*\]: ", "compile: ", message).split(" (spec")[0]


def measure(n: int, seed: int = 0, queries: SearchStrategy[Query] | None = None) -> Rate:
    """Refusals among ``n`` drawn queries (default :func:`relating_queries`) that the checker
    accepts and the oracle answers.  The sample is drawn first and compiled afterwards, so
    it depends on the generators and the oracle only, not on what the compiler does."""
    answered: list[Query] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(queries if queries is not None else relating_queries(), streams(TEST_SCHEMA, max_len=5))
    def draw(query, stream) -> None:  # type: ignore[no-untyped-def]
        try:
            check_query(query, TEST_SCHEMA)
            oracle.run(query, stream, TEST_SCHEMA)
        except (AcelError, oracle.OracleTooLarge):
            return
        answered.append(query)

    fixed_seed(seed)(draw)()
    found = Rate(answered=len(answered), reasons=Counter(), examples={}, refusals=[])
    for query in answered:
        reason = _refusal(query)
        if reason is None:
            continue
        text = format_query(query).replace("\n", " ")
        found.refused += 1
        assert found.reasons is not None and found.examples is not None
        assert found.refusals is not None
        found.reasons[reason] += 1
        found.examples.setdefault(reason, text)
        found.refusals.append((reason, text))
    return found


def _refusal(query: Query) -> str | None:
    """Why a compiled engine refuses ``query`` (None: both compile it)."""
    try:
        compile_query(query, TEST_SCHEMA)  # the automaton engine (naive runs)
        optimized.run(query, [], TEST_SCHEMA)  # the optimized engine's (and Spark's) own
    except UnsupportedQuery as refusal:
        return _reason(str(refusal))
    except Exception as crash:  # a compiler defect: counted and shown, never hidden
        return f"CRASH {type(crash).__name__}: {crash}"
    return None


def main() -> None:
    listing = "--list" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--list"]
    n = int(args[0]) if args else 500
    seed = int(args[1]) if len(args) > 1 else 0
    from acel.testing import queries

    ours = measure(n, seed, queries(max_depth=3))
    print(f"the project's generated queries (acel.testing.queries): {ours.refused} of "
          f"{ours.answered} refused ({100 * ours.rate:.2f} %)")
    found = measure(n, seed)
    print(f"answered by the oracle: {found.answered}; refused by the compiled engines: "
          f"{found.refused} ({100 * found.rate:.2f} %)")
    assert found.reasons is not None and found.examples is not None
    for reason, count in found.reasons.most_common():
        print(f"  {count:5d}  {reason}\n         e.g. {found.examples[reason]}")
    if listing:  # every refused query under its reason
        assert found.refusals is not None
        for reason, text in sorted(found.refusals):
            print(f"{reason[:60]} | {text}")


if __name__ == "__main__":
    main()
