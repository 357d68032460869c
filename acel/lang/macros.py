"""The macros: NEXT (spec §3, seed 004 Appendix D.1) and the quantifiers (spec §3.2).

``NEXT(R)`` is the first ``R`` after a contiguous run of non-``R`` events:

    R OR PROJECT[R]((((T1 OR ... OR Tm) AS u):+ FILTER u[type != 'R']) : R)

over the schema's types ``T1..Tm``.  The helper variable ``u`` is written
``__next_R``: it only lives inside ``PROJECT[R]``, which drops it (and the
``Ti`` variables) from every result, so it cannot interfere with a user's
variable even of the same name; it is still a valid identifier, so expanded
formulas print and parse like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import reduce
from itertools import combinations

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
    Opt,
    Or,
    Plus,
    ProjectVars,
    Repeat,
    Seq,
    SeqNot,
    VarPred,
    children,
    contains,
    transform,
    with_children,
)
from acel.lang.errors import AcelCheckError
from acel.lang.expansion import too_large


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


# ------------------------------------------------------------------ quantifiers (spec §3.2)

_CHAIN = (Seq, Contig, SeqNot)


@dataclass(frozen=True)
class _Gap:
    """What stands between two elements of a chain: its connector and its NOTs."""

    connector: str
    excluded: tuple[Formula, ...]


def _chain(node: Formula) -> tuple[list[Formula], list[_Gap]]:
    """A left-associative ``;``/``:`` chain as its elements and the gaps between them."""
    elements: list[Formula] = []
    gaps: list[_Gap] = []
    while isinstance(node, _CHAIN):
        elements.append(node.right)
        if isinstance(node, SeqNot):
            gaps.append(_Gap(";", node.excluded))
        else:
            gaps.append(_Gap(";" if isinstance(node, Seq) else ":", ()))
        node = node.left
    elements.append(node)
    elements.reverse()
    gaps.reverse()
    return elements, gaps


def _join(left: Formula, gap: _Gap, right: Formula) -> Formula:
    if gap.excluded:
        return SeqNot(left, gap.excluded, right)
    return Seq(left, right) if gap.connector == ";" else Contig(left, right)


def _present(element: Formula) -> Formula:
    """An element as it stands when kept: ``ψ?`` is ``ψ``, ``ψ*`` is ``ψ+``."""
    if isinstance(element, Opt):
        return Plus(element.formula) if element.star else element.formula
    return element


def _variant(elements: list[Formula], gaps: list[_Gap], kept: list[int]) -> Formula:
    """The chain with only the elements at ``kept``; dropped gaps merge their NOTs."""
    if any(g.excluded for g in gaps[: kept[0]]) or any(g.excluded for g in gaps[kept[-1]:]):
        raise ValueError("an optional element at the edge of a sequence cannot stand next to NOT")
    current = _present(elements[kept[0]])
    for before, index in zip(kept, kept[1:]):
        between = gaps[before:index]
        excluded = tuple(x for g in between for x in g.excluded)
        # the connector after the dropped elements: ((A ; B?) : C) without B is A : C,
        # as expanding the inner node first would give (text never mixes them, §3.2)
        connector = between[-1].connector
        current = _join(current, _Gap(connector, excluded), _present(elements[index]))
    return current


def _expand_chain(node: Formula) -> Formula:
    """``A ; B? ; C`` = ``(A ; B ; C) OR (A ; C)``: every choice of the optional elements,
    all kept first, joined by ``OR`` (spec §3.2)."""
    elements, gaps = _chain(node)
    optional = [i for i, e in enumerate(elements) if isinstance(e, Opt)]
    required = [i for i, e in enumerate(elements) if not isinstance(e, Opt)]
    if not required:
        raise ValueError("a sequence needs an element without '?' or '*' (spec §3.2)")
    variants: list[Formula] = []
    for drop in range(len(optional) + 1):
        for dropped in combinations(optional, drop):
            kept = sorted(set(required) | (set(optional) - set(dropped)))
            variants.append(_variant(elements, gaps, kept))
    return reduce(Or, variants[1:], variants[0])


def _has_optional(node: Formula) -> bool:
    return isinstance(node, _CHAIN) and any(isinstance(e, Opt) for e in _chain(node)[0])


def repeat_macro(node: Repeat) -> Formula:
    """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` (and ``:`` forms) as ``;``, ``:``, ``+`` and ``OR``."""

    def copies(n: int) -> Formula:
        join: type[Seq] | type[Contig] = Contig if node.contiguous else Seq
        return reduce(lambda acc, _: join(acc, node.formula), range(n - 1), node.formula)

    if node.high is None:
        plus = ContigPlus(node.formula) if node.contiguous else Plus(node.formula)
        if node.low == 1:
            return plus
        return (Contig if node.contiguous else Seq)(copies(node.low - 1), plus)
    options = [copies(n) for n in range(node.low, node.high + 1)]
    return reduce(Or, options[1:], options[0])


def clamp_repeat(node: Repeat, longest: int) -> Repeat:
    """``node`` with bounds above ``longest + 1`` lowered to ``longest + 1``: the same
    results on any stream of at most ``longest`` events.

    Every copy of ``φ`` reads at least one event, and the copies of ``φ{k}`` read
    events at distinct positions, so ``φ{k}`` with ``k > longest`` has no result;
    ``φ{n..m}`` loses only such ``k``.  The oracle expands the clamped node, so a
    bound of 10^6 costs it the length of its (small) stream, not 10^6 copies.
    """
    cap = longest + 1
    low = min(node.low, cap)
    high = None if node.high is None else min(node.high, cap)
    if (low, high) == (node.low, node.high):
        return node
    return replace(node, low=low, high=high)


def expand_quantifiers(
    formula: Formula,
    *,
    longest: int | None = None,
    keep: Callable[[Repeat], bool] | None = None,
) -> Formula:
    """``formula`` with every ``φ{n,m}``, ``ψ?`` and ``ψ*`` replaced by its expansion
    (spec §3.2); the same object when it has none.  Every evaluator runs this first.

    A chain is expanded at its root, or below it where its last element is required
    (``;`` distributes over ``OR``, so ``(A ; B? ; C) ; D`` expands the same either way).

    ``longest``: the stream has at most this many events, so bounds above it are
    lowered first (:func:`clamp_repeat`; the oracle's case).  ``keep``: repetitions
    for which it is true stay ``Repeat`` nodes (their ``φ`` expanded): the compiler
    builds those as counters (``compiler/counter.py``) instead of copies.
    """

    def finish(node: Formula) -> Formula:
        return _expand_chain(node) if _has_optional(node) else node

    def rewrite(node: Formula) -> Formula:
        if isinstance(node, _CHAIN):
            right = finish(node.right)
            if isinstance(node, SeqNot):
                node = SeqNot(node.left, tuple(finish(x) for x in node.excluded), right)
            elif right is not node.right:
                node = type(node)(node.left, right)
            elements, _ = _chain(node)
            if not isinstance(elements[-1], Opt) and _has_optional(node):
                return _expand_chain(node)
            return node
        node = with_children(node, [finish(kid) for kid in children(node)])
        if not isinstance(node, Repeat):
            return node
        if longest is not None:
            node = clamp_repeat(node, longest)
        if keep is not None and keep(node):
            return node
        return repeat_macro(node)

    if not contains(formula, (Repeat, Opt)):
        return formula
    # before expanding: it could take hours and gigabytes
    too_big = too_large(formula, keep=keep, longest=longest)
    if too_big is not None:
        raise AcelCheckError(too_big)
    return finish(transform(formula, rewrite))
