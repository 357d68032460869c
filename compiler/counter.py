"""``φ{n,m}`` as a counter, not copies (spec §3.2; issue 35; ``papers/compiler.md``).

The expansion of spec §3.2 (``φ{n}`` = n copies of φ joined by ``;``, ``φ{n,m}`` the
``OR`` of ``φ{n} … φ{m}``) costs ``Σ_{k=n..m} k`` copies of φ's automaton.  The
counter construction costs one copy plus one state whatever the bounds: it is the
construction of ``φ+`` (a state ``L`` between iterations, :func:`construct.iteration`)
with one register ``k`` counting the iterations started so far.  Its runs are the runs
of ``φ+`` (hence of ``φ ; φ ; …``) whose number of iterations lies in ``[n, m]``, i.e.
exactly the runs of the expansion, so ``⟦·⟧`` is the expansion's for *every* φ.

Which repetitions are counted and which are expanded: :func:`counted`.
"""

from __future__ import annotations

from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import Arith, Cmp, Combine, Const, Reg, RExpr, RPred, conj
from acel.compiler.automaton import Auto, assignment_of, rebuild
from acel.compiler.construct import skip_loop
from acel.compiler.context import Context

from acel.lang.ast import Repeat

EXPAND_LIMIT = 16
"""A repetition whose expansion has at most this many copies of φ is expanded (no
register: the native core and the unambiguity test see plain states); above it, it
is counted.  ``φ{n}`` has ``n`` copies, ``φ{n,m}`` ``n + … + m``, ``φ{n,}`` ``n``."""


def expansion_copies(node: Repeat) -> int:
    """How many copies of φ the expansion of ``node`` (spec §3.2) holds."""
    if node.high is None:
        return node.low
    return (node.low + node.high) * (node.high - node.low + 1) // 2


def counted(node: Repeat, limit: int | None = None) -> bool:
    """Whether the compiler builds ``node`` with a counter (else by the expansion);
    ``limit`` defaults to :data:`EXPAND_LIMIT`, read at each call (tests lower it)."""
    return expansion_copies(node) > (EXPAND_LIMIT if limit is None else limit)


def repetition(ctx: Context, auto: Auto, low: int, high: int | None, *, skip: bool) -> Auto:
    """``φ{low,high}`` (``high`` None: ``φ{low,}``) from φ's automaton; ``skip``: ``;``
    between copies (else ``:``).

    ``construct.iteration`` with a counter register ``k`` added to every transition:
    first steps out of ``q0`` set ``k := 1``; first steps out of ``L`` (a new
    iteration) set ``k := k + 1`` and require ``k ≤ high``; every other step, the
    skip loops of φ and of ``L`` included, keeps ``k``.  Steps into ``L`` require
    ``k < high`` (another iteration must fit), steps into ``F`` require ``k ≥ low``.
    For ``φ{low,}`` the counter saturates at ``low`` (``k := MIN(k + 1, low)``), so it
    takes at most ``low`` values.  Predicates read the new registers (spec §7), hence
    the bounds are on the value after the step.  N1 and N2 hold as for ``φ+``.
    """
    k = ctx.fresh("count")
    count = Reg(k)
    step: RExpr = Arith("+", count, Const(1))
    if high is None:
        step = Combine("MIN", step, Const(low))
    loop = auto.num_states
    out: list[Transition] = []

    def counted_copy(t: Transition, source: int, target: int) -> Transition:
        assignment = assignment_of(t)
        checks: list[RPred] = [t.predicate]
        if source == auto.initial:
            assignment[k] = Const(1)
        elif source == loop and t.source == auto.initial:
            assignment[k] = step
            if high is not None and target != loop:  # into L, ``k < high`` below is stronger
                checks.append(Cmp("<=", count, Const(high)))
        else:
            assignment[k] = count
        if target == loop and high is not None:
            checks.append(Cmp("<", count, Const(high)))
        if target in auto.finals and low > 1:
            checks.append(Cmp(">=", count, Const(low)))
        return rebuild(t, assignment=assignment, predicate=conj(*checks), source=source,
                       target=target)

    for t in auto.transitions:
        sources = [t.source] + ([loop] if auto.is_first(t) else [])
        targets = [t.target] + ([loop] if auto.is_last(t) else [])
        for s in sources:
            for g in targets:
                if s == auto.initial and g == loop and high == 1:
                    continue  # a second iteration can never fit
                if s == auto.initial and g in auto.finals and low > 1:
                    continue  # one iteration is too few
                out.append(counted_copy(t, s, g))
    if skip:
        keep = skip_loop(loop)
        out.append(rebuild(keep, assignment={k: count}))
    return Auto(auto.num_states + 1, auto.initial, auto.finals, tuple(out))
