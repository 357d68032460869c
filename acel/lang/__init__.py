"""The language core: AST, grammar, parser, printer, checker, predicates, aggregates,
events, schema, errors, the operator table and the query driver (layer 1, papers/README.md)."""
