"""What expanding a formula's quantifiers would cost, known before expanding (issue 35).

``φ{n,m}``, ``ψ?`` and ``ψ*`` are sugar (spec §3.2): every evaluator compiles
their expansion (:func:`acel.lang.macros.expand_quantifiers`).  Thirty ``B?``
in a sequence expand to 2^30 sequences, ``A{1,3000}`` to 4.5 million nodes,
``A{20000}`` to a chain 20,000 deep: each ran out of time, memory or stack
before any message.  :func:`expansion_cost` computes the size and depth of the
expansion by arithmetic over the unexpanded tree (no expansion, no recursion),
so a query whose expansion passes :data:`MAX_EXPANDED_NODES` or
:data:`MAX_EXPANDED_DEPTH` is refused at once in one located line
(``papers/io.md``, "Hostile input").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from acel.lang import ast as A

MAX_EXPANDED_NODES = 4_000
"""The most formula nodes an expansion may have: ``A ; B? … ; C`` with eight ``B?``
(256 sequences, 3,071 nodes) compiles in about 3 s; twice that is past 20 s."""
MAX_EXPANDED_DEPTH = 400
"""The deepest an expansion may nest (``A{400}`` is a chain of 400 ``;``): the compiler
and the oracle walk it recursively, two stack frames a level, under Python's 1,000."""

_CHAIN = (A.Seq, A.Contig, A.SeqNot)


@dataclass(frozen=True)
class Cost:
    """The expansion of a formula: ``variants`` alternatives (an unfinished chain with
    optional elements has several) of ``size`` nodes in all, the deepest ``depth`` deep."""

    size: int
    depth: int
    variants: int = 1

    def finished(self) -> Cost:
        """The alternatives joined by a left-deep ``OR`` chain, as the macro joins them."""
        extra = self.variants - 1
        return Cost(self.size + extra, self.depth + extra)


def _repeat(inner: Cost, node: A.Repeat) -> Cost:
    """``φ{n,m}``: the ``OR`` of ``φ ; … ; φ`` with ``n`` to ``m`` copies; ``φ{n,}``:
    ``n - 1`` copies then ``φ+`` (:func:`acel.lang.macros.repeat_macro`)."""
    s, d, low = inner.size, inner.depth, node.low
    if node.high is None:
        if low == 1:
            return Cost(s + 1, d + 1)
        return Cost(low * s + low, max(d + low - 2, d + 1) + 1)
    high = node.high
    options = high - low + 1
    copies = (low + high) * options // 2  # Σ k for k = low..high
    # the option of k copies is d + k - 1 deep, under a left-deep OR chain of ``options``
    depth = d + low - 1 + (options if options > 1 else 0)
    return Cost(copies * s + (copies - options) + (options - 1), depth)


def _chain_step(node: A.Seq | A.Contig | A.SeqNot, left: Cost, right: Cost,
                optional_right: bool, excluded: list[Cost]) -> Cost:
    """A chain with one more element: ``variants`` double when it is optional."""
    extra = sum(x.size for x in excluded)
    depth = max([left.depth, right.depth, *(x.depth for x in excluded)]) + 1
    with_right = left.size + left.variants * (right.size + 1 + extra)
    if optional_right:
        return Cost(with_right + left.size, depth, left.variants * 2)
    return Cost(with_right, depth, left.variants)


def next_cost(types: int) -> Cost:
    """``NEXT(R)`` over ``types`` event types (:func:`acel.lang.macros.next_macro`):
    ``R OR PROJECT[R](((T1 OR … OR Tm) AS u):+ FILTER u[…] : R)``."""
    types = max(types, 1)
    return Cost(2 * types + 7, types + 6)


Keep = Callable[[A.Repeat], bool]
"""Which repetitions stay ``Repeat`` nodes (counters, ``compiler/counter.py``)."""


def every_repeat(node: A.Repeat) -> bool:
    """Every repetition kept: the least any evaluator expands (the checker's view, which
    knows neither the compiler's threshold nor the oracle's stream)."""
    return True


def expansion_cost(formula: A.Formula, types: int = 0, *, keep: Keep | None = None,
                   longest: int | None = None) -> Cost:
    """The size and depth of ``expand_quantifiers(formula, keep=keep, longest=longest)``,
    by arithmetic (exact for the quantifiers, an upper bound where optional elements merge
    ``NOT`` gaps); iterative.  With ``types`` (the schema's event types), each ``NEXT``
    counts as its macro, which the compiler expands too; without, as one node."""
    costs: dict[int, Cost] = {}
    chained: set[int] = set()  # chains that are the left operand of a longer chain
    stack: list[tuple[A.Formula, bool]] = [(formula, False)]
    while stack:
        node, ready = stack.pop()
        kids = A.children(node)
        if not ready:
            if isinstance(node, _CHAIN) and isinstance(node.left, _CHAIN):
                chained.add(id(node.left))
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids)
            continue
        if types and isinstance(node, A.Next):
            costs[id(node)] = next_cost(types)
            continue
        costs[id(node)] = _cost(node, kids, costs, chained, keep, longest)
    top = costs[id(formula)]
    return top if id(formula) in chained else top.finished()


def _cost(node: A.Formula, kids: tuple[A.Formula, ...], costs: dict[int, Cost],
          chained: set[int], keep: Keep | None, longest: int | None) -> Cost:
    def done(kid: A.Formula) -> Cost:
        cost = costs[id(kid)]
        return cost if id(kid) in chained else cost.finished()

    if isinstance(node, A.Opt):
        inner = done(node.formula)
        present = Cost(inner.size + 1, inner.depth + 1) if node.star else inner
        return Cost(present.size, present.depth, 2)  # kept, or dropped (size 0)
    if isinstance(node, _CHAIN):
        left = costs[id(node.left)]
        if not isinstance(node.left, _CHAIN):
            left = left if isinstance(node.left, A.Opt) else done(node.left)
        right = costs[id(node.right)]
        optional = isinstance(node.right, A.Opt)
        if not optional:
            right = done(node.right)
        excluded = [done(x) for x in node.excluded] if isinstance(node, A.SeqNot) else []
        return _chain_step(node, left, right, optional, excluded)
    inner_costs = [done(kid) for kid in kids]
    if isinstance(node, A.Repeat):
        if longest is not None:  # as clamp_repeat: bounds past the stream's length
            cap = longest + 1
            high = None if node.high is None else min(node.high, cap)
            node = replace(node, low=min(node.low, cap), high=high)
        if keep is not None and keep(node):
            return Cost(inner_costs[0].size + 1, inner_costs[0].depth + 1)
        return _repeat(inner_costs[0], node)
    return Cost(1 + sum(c.size for c in inner_costs),
                1 + max((c.depth for c in inner_costs), default=0))


def too_large(formula: A.Formula, types: int = 0, *, keep: Keep | None = None,
              longest: int | None = None) -> str | None:
    """Why ``formula``'s expansion is too large to compile (one line), or ``None``
    (``types``: the schema's event types, which ``NEXT`` ranges over; ``keep`` and
    ``longest``: as for :func:`acel.lang.macros.expand_quantifiers`)."""
    if not A.contains(formula, (A.Repeat, A.Opt)):
        return None
    cost = expansion_cost(formula, types, keep=keep, longest=longest)
    if cost.size <= MAX_EXPANDED_NODES and cost.depth <= MAX_EXPANDED_DEPTH:
        return None
    if cost.size > MAX_EXPANDED_NODES:
        what = f"{_shown(cost.size)} formula nodes (at most {MAX_EXPANDED_NODES:,})"
    else:
        what = f"a formula {_shown(cost.depth)} levels deep (at most {MAX_EXPANDED_DEPTH:,})"
    return (f"this pattern's quantifiers and optional elements expand to {what}: "
            "use fewer optional elements ('?', '*') or smaller repetition bounds, "
            "e.g. φ+ for many repetitions (spec §3.2)")


def _shown(count: int) -> str:
    """A count as people read it: ``1,234,567``, or ``about 1.2·10^18`` when huge."""
    if count < 10**15:
        return f"{count:,}"
    if count.bit_length() > 10_000:  # str() of it may pass the interpreter's digit limit
        return f"about 2^{count.bit_length() - 1}"
    digits = str(count)
    return f"about {digits[0]}.{digits[1]}·10^{len(digits) - 1}"
