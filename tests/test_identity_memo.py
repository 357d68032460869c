"""The identity memo behind the per-key caches of a Spark stream (issue 31)."""

from __future__ import annotations

from acel.acea.engine.identity_memo import IdentityMemo


class _Thing:
    """An object hashed by identity, as the cached queries and automata are."""


def test_the_same_objects_get_the_remembered_answer() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    a, b = _Thing(), _Thing()
    calls: list[int] = []
    assert memo.get((a, b), "x", lambda: calls.append(1) or 7) == 7
    assert memo.get((a, b), "x", lambda: calls.append(1) or 8) == 7
    assert calls == [1]


def test_other_objects_or_another_extra_compute_again() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    a, b = _Thing(), _Thing()
    assert memo.get((a,), 1, lambda: "a1") == "a1"
    assert memo.get((b,), 1, lambda: "b1") == "b1"
    assert memo.get((a,), 2, lambda: "a2") == "a2"
    assert memo.get((a,), 1, lambda: "again") == "a1"


def test_a_full_memo_starts_over_and_holds_what_it_remembers() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=2)
    held = [_Thing() for _ in range(3)]
    for i, thing in enumerate(held):
        memo.get((thing,), None, lambda i=i: i)
    assert len(memo) == 1  # cleared when the third came
    assert memo.get((held[2],), None, lambda: -1) == 2
    assert memo.get((held[0],), None, lambda: -1) == -1
