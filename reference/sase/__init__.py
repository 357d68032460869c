"""SASE+ (seed 002): its query form, the NFA^b, and the two-step baseline (spec §8).

- ``parse_sase(text)``: SASE+ text to :class:`SaseQuery`;
- ``run_sase(q, stream)``: its matches, or its per-match RETURN rows;
- ``translate(q)``: the equivalent ACEL query (skip-till-any-match, no negation);
- ``two_step_trend(query, stream, schema)``: ACEL trend aggregation by
  enumerating every match, then aggregating;
- ``run(query, stream, schema)``: any ACEL query of the fragment (engine signature).
"""

from acel.reference.sase.ast import AggRef, Component, Ref, SaseQuery
from acel.reference.sase.compile import compile_sase
from acel.reference.sase.fragment import NotInFragment
from acel.reference.sase.nfa import STRATEGIES, NFAb, run_nfa
from acel.reference.sase.parser import parse_sase
from acel.reference.sase.run import run_sase, run_sase_file, run_sase_text, sase_matches
from acel.reference.sase.translate import NotTranslatable, translate
from acel.reference.sase.two_step import check_fragment, run, two_step_trend

__all__ = [
    "STRATEGIES",
    "AggRef",
    "Component",
    "NFAb",
    "NotInFragment",
    "NotTranslatable",
    "Ref",
    "SaseQuery",
    "check_fragment",
    "compile_sase",
    "parse_sase",
    "run",
    "run_nfa",
    "run_sase",
    "run_sase_file",
    "run_sase_text",
    "sase_matches",
    "translate",
    "two_step_trend",
]
