"""Aggregation Complex Event Automata: the model (``acel.acea.model.automaton``, below the
compiler) and the engines that run it (``acel.acea.engine``, above it)."""
