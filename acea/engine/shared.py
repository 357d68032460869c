"""Shared trend aggregation for a workload of RETURN queries (HAMLET seed 003, A-Seq seed 001).

A workload's trend queries whose automata keep no register in any state
(sequences, Kleene ``+``, ``OR``, ``AS``, event predicates: the HAMLET and
A-Seq fragment) are counted together by a :class:`SharedPlan`, one per
(PARTITION BY, SLIDE) group.  Everything here is exact (Python integers) and
gives the rows each query gives alone (:class:`acel.acea.engine.Runner`).

**Linear propagation.**  Without registers, a configuration is just a state,
and each query's trend vectors (``[n, acc…]`` per state, :mod:`.trend`) are a
vector of scalars that every event maps *affinely*: reading an event adds to
each state the scalars of the states it is reached from (a count ``n``, or
``acc + c·n`` with the transition's contribution ``c``), keeps the states
that have a skip loop, clears the others, and injects ``1`` for a run that
starts at the event.  Final states are sinks, so each query's results are a
cumulative accumulator ``R`` (a scalar per component).

**One vector for the workload (A-Seq's prefix sharing, generalised).**  The
scalars of all queries of a group are merged by partition refinement: two
scalars whose in-edges (source class, transition label) are the same
multiset hold the same value at every step, so they get one entry.  Queries
with a common prefix (``A ; B ; C`` and ``A ; B ; D``) share the prefix's
entries, and a query that is a prefix of another (``A ; B``) reads its rows
from the other's state.  Transition labels are canonical (registers renamed),
so equal atoms of different queries have one label and are evaluated once per
event.

**Bursts (HAMLET's shared graphlets and snapshots).**  An event's effect is
fixed by its *signature*: its type, which transition labels fire and their
contributions.  Consecutive events with the same signature form a *burst*;
the workload's map for the burst is the signature's map to the power ``b``.
That map splits into small *cells* (the entries one signature writes, with
the entries they read): a query's Kleene sub-pattern ``T+`` is one cell, and
the cells of all queries sharing ``T+`` have the same *shape*.  The burst is
propagated once per shape (an affine power, computed from the shape's
coefficients and cached by length: HAMLET's shared graphlet), and each query
is touched once per burst to apply it to its entries at the burst start (its
snapshot): ``y ← 2^b·y + (2^b − 1)·x`` for ``T+`` counts.  Per-event work is
one signature per event, independent of the number of queries.

**The dynamic decision.**  When a burst ends, the plan compares the cost of
stepping its events one by one through every query's entries (``b`` times
the step's terms) with the cost of the shared burst (the burst code's terms
plus the shapes' powers not yet cached), and takes the cheaper (HAMLET's
benefit test of Definition 4.2, made per burst).  Either way the result is
the same exact integer.

**Windows.**  Queries of a group share the SLIDE ``s``: a run's class is
``⌊start/s⌋`` (the *pane*), one vector per live pane.  A pane's ``R`` entries
are cumulative, so the row of window ``k`` of a query is the sum of ``R`` over
panes ``≥ k`` at the moment the axis passes ``k·s + w`` (the query's own
``w``): queries with different WITHIN sizes share the panes (HAMLET's panes).
Bursts are cut where a pane starts or a window closes.  Without WITHIN
there is one pane.  What is not here (``WITHIN`` without ``SLIDE``, ``ON
attr`` windows, registers, MIN/MAX, enumeration) runs on its own runner in
the same pass (:mod:`acel.acea.engine.workload`).
"""

from __future__ import annotations

from acel.acea.engine.shared_eligibility import group_key, unshared_reason
from acel.acea.engine.shared_plan import Member, SharedPlan
from acel.acea.engine.shared_runner import SharedRunner

__all__ = ["Member", "SharedPlan", "SharedRunner", "group_key", "unshared_reason"]
