"""Selection strategies without listing candidates (issue 32, item 4).

``SELECT s PATTERN ((A OR B) AS x)+ ; C`` on ``n`` alternating A/B events and then
one C: at C there are ``2^n - 1`` candidate complex events and each strategy keeps
one.  The enumerator prunes the runs a strategy can never choose
(``acel.acea.engine.enumeration.Enumerator._pruned``, papers/engine.md), so NEXT and
LAST and MAX cost time linear in ``n``; the time per event at 10^4 and 10^5 shows it,
without a window and under ``WITHIN w EVENTS`` (there NEXT and LAST keep the best
runs of each start inside the window: time linear in ``n`` and in ``w``).

    python bench/strategies_bench.py [--sizes 10000 100000] [--windows 0 10]

Not part of the test suite (tests/test_selection.py has a 2,000-event check).
"""

from __future__ import annotations

import argparse
import json
import time

from acel.acea import engine

from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})


def alternating(n: int) -> list[Event]:
    """``n`` events A, B, A, … and then one C."""
    events = [Event.make(i, {"type": "AB"[i % 2], "v": i}) for i in range(n)]
    events.append(Event.make(n, {"type": "C", "v": 0}))
    return events


def measure(strategy: str, n: int, window: int = 0) -> dict[str, object]:
    """Wall time of the optimized engine on ``n`` alternating events (one run), under
    ``WITHIN window EVENTS`` (0: no window)."""
    within = f" WITHIN {window} EVENTS" if window else ""
    query = parse_query(f"SELECT {strategy} PATTERN ((A OR B) AS x)+ ; C{within}")
    events = alternating(n)
    began = time.perf_counter()
    found = engine.run(query, events, SCHEMA)
    seconds = time.perf_counter() - began
    assert len(found) == 1, f"{strategy}: {len(found)} complex events"
    return {"strategy": strategy, "within": window or None, "events": n + 1, "seconds": round(seconds, 3),
            "us_per_event": round(1e6 * seconds / (n + 1), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--windows", type=int, nargs="+", default=[0, 10],
                        help="WITHIN w EVENTS for each w (0: no window)")
    args = parser.parse_args()
    for w in args.windows:
        for s in ("NEXT", "LAST", "MAX"):
            for n in args.sizes:
                print(json.dumps(measure(s, n, w)), flush=True)


if __name__ == "__main__":
    main()
