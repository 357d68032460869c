"""The automaton model (spec §7): ACEA, register expressions, graph work, rendering,
simplification and ambiguity (layer 3, below the compiler, papers/README.md)."""
