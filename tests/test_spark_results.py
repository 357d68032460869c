"""``acel.spark.run``'s results shaped for people (issue 37 §2): ``vars`` one struct per
variable with that variable's attributes only, RETURN columns named without backticks,
integer counts as ``bigint`` with a loud fallback, nothing cached after an action."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from spark_fixtures import SPARK_MARKS, events_frame

import acel
from acel.lang.ast import CountStar, ReturnAgg, ReturnAttr
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import SPEC_STOCK_EVENTS, SPEC_STOCK_SCHEMA

pytestmark = SPARK_MARKS

EXAMPLE_3_2 = (
    "(SELL AS msft ; SELL AS intel ; SELL AS amzn) "
    "FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL'] "
    "AND amzn[name = 'AMZN' AND price < 2000]"
)


def _run(query: str, data: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return acel.spark.run(query, data, **kw)


def test_column_names_need_no_backticks() -> None:
    """``COUNT(*)`` → ``count``, ``SUM(b.v)`` → ``sum_b_v``; a clash gets ``_2``."""
    from acel.spark_backend.shaped import column_names

    items = (ReturnAttr("k"), CountStar(), ReturnAgg("SUM", "b", "v"), ReturnAgg("COUNT", "b", None),
             ReturnAgg("max", "s", "price"), ReturnAgg("COUNT", "b", None))
    assert column_names(items, ("k",)) == {
        1: "count", 2: "sum_b_v", 3: "count_b", 4: "max_s_price", 5: "count_b_2",
    }
    assert column_names((CountStar(),), ("count",), ("window_lo", "window_hi")) == {0: "count_2"}


def test_vars_hold_one_struct_per_variable_with_its_attributes(spark: Any) -> None:
    """Each variable's events carry its types' attributes only, typed, and the same
    content as the §12 JSON text that ``vars="json"`` keeps."""
    events = [Event.make(0, {"type": "SELL", "name": "MSFT", "price": 101}),
              Event.make(1, {"type": "BUY", "qty": 3, "venue": "X"}),
              Event.make(2, {"type": "SELL", "name": "INTL", "price": 80})]
    schema = Schema.of({"SELL": ["name", "price"], "BUY": ["qty", "venue"]},
                       {"name": "str", "price": "int", "qty": "int", "venue": "str"})
    data = events_frame(spark, events)
    query = "SELL AS s ; BUY AS b"
    typed = _run(query, data, schema=schema)
    texts = _run(query, data, schema=schema, vars="json")
    assert typed.schema["vars"].dataType.simpleString() == (
        "struct<BUY:array<struct<time:bigint,qty:bigint,type:string,venue:string>>,"
        "SELL:array<struct<time:bigint,name:string,price:bigint,type:string>>,"
        "b:array<struct<time:bigint,qty:bigint,type:string,venue:string>>,"
        "s:array<struct<time:bigint,name:string,price:bigint,type:string>>>"
    )
    assert texts.schema["vars"].dataType.simpleString() == "string"
    (row,) = typed.collect()
    (text,) = texts.collect()
    got = {var: [e.asDict() for e in bag] for var, bag in row["vars"].asDict().items()}
    want = {var: [{"time": e["time"], **e["attrs"]} for e in bag]
            for var, bag in json.loads(text["vars"]).items()}
    assert got == want
    assert got["b"] == [{"time": 1, "qty": 3, "type": "BUY", "venue": "X"}]
    shown = typed._jdf.showString(5, 0, False)
    assert "{0, MSFT, 101, SELL}" in shown and "NULL" not in shown.upper()


def test_return_counts_are_longs_under_plain_names(spark: Any) -> None:
    """The tour's trend query: ``name, count, max_s_price``, counts ``bigint``; the
    values are the single process's."""
    query = "RETURN name, COUNT(*), MAX(s.price) PATTERN (SELL AS s)+ FILTER s[INC(price)] PARTITION BY name"
    frame = _run(query, events_frame(spark, SPEC_STOCK_EVENTS), schema=SPEC_STOCK_SCHEMA)
    assert frame.schema.simpleString() == "struct<name:string,count:bigint,max_s_price:bigint>"
    got = sorted(tuple(r) for r in frame.select("name", "count", "max_s_price").collect())
    want = sorted((r.key[0][1], r.values[1][1], r.values[2][1])
                  for r in acel.run(query, [e.as_dict() for e in SPEC_STOCK_EVENTS],
                                    schema=SPEC_STOCK_SCHEMA))
    assert got == want and len(got) == 3


def test_a_count_past_a_long_fails_loudly_and_decimal_keeps_it(spark: Any) -> None:
    """2^64 − 1 trends of 64 events: ``bigint`` would wrap, so the action fails naming the
    item; ``counts="decimal"`` gives the exact value (the documented fallback)."""
    events = [Event.make(i, {"type": "A", "v": i}) for i in range(64)]
    data = events_frame(spark, events)
    query = "RETURN COUNT(*) PATTERN (A AS a)+"
    with pytest.raises(Exception, match=r"COUNT\(\*\) = 18446744073709551615 does not fit a long"):
        _run(query, data).collect()
    exact = _run(query, data, counts="decimal")
    assert exact.schema.simpleString() == "struct<count:decimal(38,0)>"
    assert int(exact.collect()[0]["count"]) == 2**64 - 1


def test_nothing_stays_cached_after_an_action(spark: Any) -> None:
    """Neither the input nor the numbered stream stays in memory once the action is over
    (issue 37: two cached inputs outlived every action)."""
    context = spark.sparkContext
    for rdd in list(context._jsc.getPersistentRDDs().values()):
        rdd.unpersist(True)
    data = events_frame(spark, SPEC_STOCK_EVENTS)
    queries = ((EXAMPLE_3_2, {}), ("RETURN COUNT(*) PATTERN SELL AS a ; BUY AS b", {"time_col": "price"}))
    for query, kw in queries:
        frame = _run(query, data, schema=SPEC_STOCK_SCHEMA, **kw)
        assert frame.count() > 0
        assert context._jsc.getPersistentRDDs().size() == 0
        assert not data.is_cached


def test_python_messages_name_python_arguments(spark: Any, tmp_path: Any) -> None:
    """From Python, a missing type column is named by ``type_col=``, not the command
    line's ``--type-col`` (issue 37 §2), for a DataFrame and for a file."""
    from acel.lang.errors import DataError

    frame = spark.createDataFrame([{"kind": "A", "v": 1}])
    with pytest.raises(DataError, match=r"the type column 'type' is not in the data .*; "
                                        r"name it with type_col=$"):
        _run("A AS a", frame)
    path = tmp_path / "events.csv"
    path.write_text("kind,v\nA,1\n")
    with pytest.raises(DataError) as caught:
        acel.spark.collect("A AS a", str(path), session=spark)
    assert "type_col=" in str(caught.value) and "--type-col" not in str(caught.value)


def test_python_words_keep_other_text() -> None:
    from acel.spark import python_words

    assert python_words("give --schema or --time-col") == "give schema= or time_col="
    assert python_words("nothing to change") == "nothing to change"


def test_the_demo_query_shows_per_variable_attributes(spark: Any) -> None:
    """The demo's ``delay_propagation``: ``d`` holds a departure's attributes, ``m`` the
    AGG outputs (integer counts as ``bigint``) and nothing else; ``show()`` has no NULL."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples" / "flights"
    events = [Event.make(i, {"type": "DEP", "ts": i * 60, "origin": "JFK", "carrier": "B6",
                             "flight": i, "tailnum": "N1", "dest": "BOS", "dep_delay": 20 + 5 * i,
                             "arr_delay": 1, "distance": 100}) for i in range(4)]
    frame = _run((root / "delay_propagation.acel").read_text(), events_frame(spark, events),
                 schema=str(root / "schema.json"), time_col="ts")
    fields = {f.name: f.dataType.elementType.simpleString()
              for f in frame.schema["vars"].dataType.fields}
    assert sorted(fields) == ["DEP", "d", "m"]
    assert fields["m"] == "struct<time:bigint,flights:bigint,total_delay:bigint,worst_delay:bigint>"
    assert fields["d"] == (
        "struct<time:bigint,arr_delay:bigint,carrier:string,dep_delay:bigint,dest:string,"
        "distance:bigint,flight:bigint,origin:string,tailnum:string,ts:bigint,type:string>"
    )
    first = min(frame.collect(), key=lambda r: (r["end"], r["start"]))
    assert first["vars"]["m"][0].asDict() == {"time": 2, "flights": 3, "total_delay": 75,
                                              "worst_delay": 30}
    assert "NULL" not in frame._jdf.showString(20, 0, False).upper()
