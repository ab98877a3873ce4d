"""Partial update with ``partial-update.remove-record-on-sequence-group``: a removing ``-D`` merged in chunks.

Records of key 2 (case ``partial-update-groups-remove`` of the property tests: groups g1 -> a,b and g2,g3 -> c,d,e,
c = sum, e = max ignoring retraction, removal on g1's group): ``+I {g1: 1}``, ``-D {g1: 0}``, ``-U {c: 1, g3: 0}``.

Merged at once the -D is older than g1's sequence (0 < 1): it neither removes the row nor touches group g2,g3
(null sequence), and the -U retracts 1 from c: c = -1. Merged as [+I] and [-D, -U], the second chunk alone has no
g1 sequence yet, so its -D removes the row and the chunk folds to ``-D {g1: 0, g3: 0, c: -1}`` (the row reset to
the -D, minus the -U); merging that after the +I re-judges it as a plain retraction (0 < 1: not a removal), which
retracts -1 from c: c = 1. Paimon's ``PartialUpdateMergeFunction`` (apache/paimon,
paimon-core/.../mergetree/compact/PartialUpdateMergeFunction.java: ``retractWithSequenceGroup`` resets the row with
``initRow`` on a removing -D, ``getResult`` returns DELETE without an insert, ``FieldSumAgg.retract`` negates) gives
the same results, and no single record per key can stand for the chunk in both outcomes (it must say c = -1 when it
removes and retract 1 when it does not), so the property tests do not compare such splits (``_conditional_removal``).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.lsm.sort import MergeOrder, concat_tables, sort_kv
from tests.table_engine.lsm.merge_engines.model import model_read, removing_deletes
from tests.table_engine.lsm.merge_engines.test_properties import CASES, _kv, _merge_function

CASE = next(c for c in CASES if c.name == "partial-update-groups-remove")
ORDER = MergeOrder(("k",), (), False)
FN = _merge_function(CASE)
BLANK: dict[str, Any] = dict.fromkeys(CASE.columns)


def rec(kind: str, **values: Any) -> tuple[int, str, dict[str, Any]]:
    return 2, kind, {**BLANK, **values}


def merge(t: pa.Table) -> pa.Table:
    return FN.merge_sorted(sort_kv(t, ORDER), ORDER)


def fold(records: list[tuple[int, str, dict[str, Any]]], cuts: list[int]) -> pa.Table:
    """Merge each chunk between ``cuts``, then the merged chunks (one chunk: a single merge)."""
    bounds = [0, *cuts, len(records)]
    chunks = [merge(FN.on_write(_kv(CASE, records[a:b], a))) for a, b in zip(bounds, bounds[1:])]
    return chunks[0] if len(chunks) == 1 else merge(concat_tables(chunks))


def visible(t: pa.Table) -> dict[int, dict[str, Any]]:
    t = t.filter(pa.compute.is_in(t.column(VALUE_KIND), pa.array([0, 2], pa.int8())))
    return {r.pop("k"): r for r in t.drop_columns([SEQUENCE_NUMBER, VALUE_KIND]).to_pylist()}


RECORDS = [rec("+I", g1=1), rec("-D", g1=0), rec("-U", c=1, g3=0)]


def test_older_delete_is_ignored_and_retraction_applies_in_one_merge() -> None:
    want = model_read(CASE.spec, RECORDS)
    assert want == {2: {**BLANK, "g1": 1, "g3": 0, "c": -1}}
    assert visible(fold(RECORDS, [])) == want
    assert visible(fold(RECORDS, [2])) == want  # [+I, -D] [-U]: the -D never removes


def test_chunk_with_conditional_removal_folds_like_paimon() -> None:
    chunk = merge(FN.on_write(_kv(CASE, RECORDS[1:], 1))).to_pylist()
    assert chunk == [{"k": 2, **BLANK, "g1": 0, "g3": 0, "c": -1, SEQUENCE_NUMBER: 2, VALUE_KIND: 3}]
    # re-judged after the +I: not a removal, a retraction of the folded row (Java: c = retract(null, -1) = 1)
    assert visible(fold(RECORDS, [1])) == {2: {**BLANK, "g1": 1, "g3": 0, "c": 1}}
    # the property tests recognise the split: the -D removes in the chunk alone, not after the +I
    assert removing_deletes(CASE.spec, RECORDS) == set()
    assert removing_deletes(CASE.spec, RECORDS[1:]) == {0}


def test_removal_in_both_merges_is_exact_in_any_split_of_the_records() -> None:
    records = [rec("+I", g1=0, free=5), rec("-D", g1=1), rec("-U", c=1, g3=0), rec("+I", g1=2, a=3)]
    want = model_read(CASE.spec, records)
    assert want == {2: {**BLANK, "g1": 2, "a": 3, "g3": 0, "c": -1}}
    assert removing_deletes(CASE.spec, records) == {1}
    # (not [1]: a removal followed by an add in one fold unit is a known limit, see the partial_update module)
    for cuts in ([], [2], [3], [1, 2], [1, 3], [2, 3], [1, 2, 3]):
        assert visible(fold(records, cuts)) == want, cuts
