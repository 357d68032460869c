"""A query's syntax tree as JSON, and back: the structured form adapters read.

Every node is an object ``{"node": CLASS, field: value, ...}`` whose fields are the
dataclass fields of :mod:`acel.lang.ast` (tuples as arrays; literals as JSON values).
``from_json(to_json(q)) == q`` for every query, so an adapter in any language can
read the tree instead of parsing ACEL text (``papers/conformance.md``, the protocol).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from acel.lang import ast, ast_terms
from acel.lang.errors import AcelError

NODE = "node"
"""The key naming a node's class."""

_CLASSES: dict[str, type] = {
    name: cls for name, cls in vars(ast).items()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls)
    and cls.__module__ in (ast.__name__, ast_terms.__name__)
}


def to_json(node: Any) -> Any:
    """``node`` (a :class:`~acel.lang.ast.Query` or any node below one) as JSON values."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        out: dict[str, Any] = {NODE: type(node).__name__}
        for f in dataclasses.fields(node):
            out[f.name] = to_json(getattr(node, f.name))
        return out
    if isinstance(node, (tuple, list)):
        return [to_json(item) for item in node]
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise AcelError(f"ast_json: cannot write {type(node).__name__}")


def from_json(value: Any) -> Any:
    """The node that :func:`to_json` wrote (arrays become tuples)."""
    if isinstance(value, dict):
        name = value.get(NODE)
        cls = _CLASSES.get(str(name))
        if cls is None:
            raise AcelError(f"ast_json: unknown node {name!r}")
        fields = {f.name for f in dataclasses.fields(cls)}
        extra = set(value) - fields - {NODE}
        if extra:
            raise AcelError(f"ast_json: {name} has no field {sorted(extra)[0]!r}")
        return cls(**{k: from_json(v) for k, v in value.items() if k != NODE})
    if isinstance(value, list):
        return tuple(from_json(item) for item in value)
    return value


def query_to_json(query: ast.Query) -> dict[str, Any]:
    """The query's tree as a JSON object (``{"node": "Query", "formula": ..., ...}``)."""
    out = to_json(query)
    assert isinstance(out, dict)
    return out


def query_from_json(value: Any) -> ast.Query:
    """A :class:`~acel.lang.ast.Query` from :func:`query_to_json`'s object."""
    query = from_json(value)
    if not isinstance(query, ast.Query):
        raise AcelError("ast_json: the top node is not a Query")
    return query
