"""The controls of a dedicated compaction (Paimon's ``compact`` procedure): a bucket list, partitions already
expired skipped (``compaction.skip-expired-partitions``); the bucket-range parser against a model."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.errors import CommandError
from table_engine.store.compaction.select import parse_buckets
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
MAX_LEVEL = 5


def data(ids: range, dt: str = "a") -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids], "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def levels_by_bucket(t: Table) -> dict[tuple[tuple[object, ...], int], set[int]]:
    return {(s.partition_values, s.bucket): {f.level for f in s.files} for s in t.plan()}


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 5), st.booleans()), min_size=1, max_size=6),
       st.integers(1, 50))
def test_parse_buckets_is_the_union_of_the_ranges(items: list[tuple[int, int, bool]], count: int) -> None:
    text = ", ".join(f"{a}-{a + n}" if is_range else f"{a}" for a, n, is_range in items)
    model = set().union(*(range(a, a + n + 1) if is_range else {a} for a, n, is_range in items))
    if max(model) >= count:
        with pytest.raises(CommandError, match=r"buckets .* out of range \[0, "):
            parse_buckets(text, count)
    else:
        assert parse_buckets(text, count) == model
    assert parse_buckets(text) == model  # without the table: the syntax only


@pytest.mark.parametrize(("text", "message"), [("", "must not be empty"), ("1,,2", "'' is not a bucket"),
                                               ("a", "'a' is not"), ("-1", "'-1' is not"), ("3-1", "starts after"),
                                               ("1.5", "'1.5' is not")])
def test_bad_bucket_ranges_name_the_item(text: str, message: str) -> None:
    with pytest.raises(CommandError, match=message) as e:
        parse_buckets(text, 8)
    assert "buckets" in str(e.value) and "\n" not in str(e.value)


def test_compaction_of_a_bucket_list_converges(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "4", "write-only": "true"})
    for i in range(3):
        t.write(data(range(i * 10, i * 10 + 40)))
    expected = t.read().sort_by("id")
    assert t.maintenance.compact(full=True, buckets="0-1") is not None
    levels = levels_by_bucket(t)
    assert {b for (_, b), lv in levels.items() if lv == {MAX_LEVEL}} == {0, 1}
    assert all(lv == {0} for (_, b), lv in levels.items() if b >= 2)
    assert t.maintenance.compact(full=True, buckets=[0, 1]) is None  # a retry: nothing left to do there
    assert t.maintenance.compact(full=True, buckets="3, 2") is not None
    assert all(lv == {MAX_LEVEL} for lv in levels_by_bucket(t).values())
    assert t.read().sort_by("id") == expected


def test_expired_partitions_are_skipped_when_asked(catalog: Catalog) -> None:
    today = datetime.date(2026, 11, 27)
    opts = {"bucket": "1", "write-only": "true", "partition.expiration-time": "7 d",
            "partition.timestamp-formatter": "yyyy-MM-dd", "compaction.skip-expired-partitions": "true"}
    t = catalog.create_table("db.p", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options=opts)
    old, new = str(today - datetime.timedelta(days=30)), str(today)
    for i in range(2):
        for dt in (old, new):
            t.write(data(range(i * 5, i * 5 + 10), dt))
    from table_engine.clock import use_clock

    noon = int(datetime.datetime(2026, 11, 27, 12).timestamp() * 1000)  # local time, as partition times are
    with use_clock(ManualClock(noon)):
        assert t.maintenance.compact(full=True) is not None
        assert levels_by_bucket(t) == {((old,), 0): {0}, ((new,), 0): {MAX_LEVEL}}
        assert t.maintenance.compact(full=True) is None  # converged: the expired partition stays as it is
        # the option off (the default): every partition is compacted
        t2 = catalog.get_table("db.p").copy({"compaction.skip-expired-partitions": "false"})
        assert t2.maintenance.compact(full=True) is not None
    assert levels_by_bucket(t) == {((old,), 0): {MAX_LEVEL}, ((new,), 0): {MAX_LEVEL}}


def test_the_compact_command_takes_buckets(catalog: Catalog) -> None:
    from table_engine.ops import Compact
    from table_engine.ops.run import run_command

    t = catalog.create_table("db.c", SCHEMA, primary_keys=["id"], options={"bucket": "3", "write-only": "true"})
    for i in range(2):
        t.write(data(range(i * 10, i * 10 + 30)))
    before = t.latest_snapshot_id()
    with pytest.raises(CommandError, match=r"buckets '3': '3' is out of range \[0, 3\)"):
        run_command(Compact(warehouse=catalog.warehouse, table="db.c", full=True, buckets="3"))
    assert t.latest_snapshot_id() == before
    result = run_command(Compact(warehouse=catalog.warehouse, table="db.c", full=True, buckets="2"))
    assert result["snapshot_id"] == before + 1
    assert {b for (_, b), lv in levels_by_bucket(t).items() if lv == {MAX_LEVEL}} == {2}
