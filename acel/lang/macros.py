"""The NEXT macro (spec §3, seed 004 Appendix D.1).

``NEXT(R)`` is the first ``R`` after a contiguous run of non-``R`` events:

    R OR PROJECT[R]((((T1 OR ... OR Tm) AS u):+ FILTER u[type != 'R']) : R)

over the schema's types ``T1..Tm``.  The helper variable ``u`` is written
``__next_R``: it only lives inside ``PROJECT[R]``, which drops it (and the
``Ti`` variables) from every result, so it cannot interfere with a user's
variable even of the same name; it is still a valid identifier, so expanded
formulas print and parse like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from acel.lang.ast import (
    As,
    Atom,
    Attr,
    Compare,
    Contig,
    ContigPlus,
    FilterF,
    Formula,
    Lit,
    Next,
    Or,
    ProjectVars,
    VarPred,
    transform,
)


def next_variable(type_name: str) -> str:
    """The internal name of the macro's run variable ``u`` for ``NEXT(type_name)``."""
    return f"__next_{type_name}"


def next_macro(type_name: str, type_names: Sequence[str]) -> Formula:
    """The formula ``NEXT(type_name)`` stands for over the types ``type_names``."""
    if not type_names:
        raise ValueError("NEXT needs the schema's event types")
    u = next_variable(type_name)
    first: Formula = Atom(type_names[0])
    any_type = reduce(lambda acc, t: Or(acc, Atom(t)), type_names[1:], first)
    run = FilterF(
        ContigPlus(As(any_type, u)),
        VarPred(u, Compare("!=", Attr("type"), Lit(type_name))),
    )
    return Or(Atom(type_name), ProjectVars((type_name,), Contig(run, Atom(type_name))))


def expand_next(formula: Formula, type_names: Sequence[str]) -> Formula:
    """Replace every ``NEXT(R)`` in ``formula`` by its macro (other nodes unchanged)."""
    names = tuple(type_names)

    def rewrite(node: Formula) -> Formula:
        return next_macro(node.type, names) if isinstance(node, Next) else node

    return transform(formula, rewrite)
