"""The JSON form of a query's syntax tree (acel.lang.ast_json): from JSON back to the tree
that parsing the text gives (issue 33, the adapter protocol)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from acel.lang.ast_json import from_json, query_from_json, query_to_json
from acel.lang.errors import AcelError
from acel.lang.parser import parse_query
from acel.lang.printer import format_query
from acel.testing import queries, trend_queries


@settings(max_examples=150)
@given(queries(top_negation=True) | trend_queries())
def test_json_round_trip_equals_parsing_the_text(query) -> None:  # type: ignore[no-untyped-def]
    text = format_query(query)
    back = query_from_json(json.loads(json.dumps(query_to_json(query))))
    assert back == parse_query(text) == query


def test_the_json_form_of_a_small_query() -> None:
    assert query_to_json(parse_query("A ; B WITHIN 2 EVENTS")) == {
        "node": "Query",
        "formula": {"node": "Seq", "left": {"node": "Atom", "type": "A"},
                    "right": {"node": "Atom", "type": "B"}},
        "returns": None, "partition_by": [], "within": {"node": "Window", "size": 2, "attr": None},
        "slide": None, "select": "ALL", "skip": None,
    }


@pytest.mark.parametrize(("value", "message"), [
    ({"node": "Nope"}, "unknown node 'Nope'"),
    ({"node": "Atom", "type": "A", "extra": 1}, "Atom has no field 'extra'"),
])
def test_bad_json_is_one_line(value: object, message: str) -> None:
    with pytest.raises(AcelError, match=message):
        from_json(value)


def test_the_top_node_must_be_a_query() -> None:
    with pytest.raises(AcelError, match="not a Query"):
        query_from_json({"node": "Atom", "type": "A"})
