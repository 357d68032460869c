"""ACEL → ACEA compiler (seed 004 Theorem 6.2, Appendix C; spec §7)."""

from acel.compiler.compile import CompiledQuery, compile_formula, compile_query, events_bound
from acel.compiler.construct import CompileError

__all__ = ["CompileError", "CompiledQuery", "compile_formula", "compile_query", "events_bound"]
