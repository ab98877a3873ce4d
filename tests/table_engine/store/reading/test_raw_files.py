"""Which planned files are raw-convertible (read as they are, no merge): the decision on real tables, and a property
test against the engine's read: raw files read one by one (vector and row kinds applied) plus the rest merged by
the engine give exactly the engine's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.catalog import Catalog
from table_engine.store.indexes.deletion_vectors import VectorCache
from table_engine.store.paths import file_path_in
from table_engine.store.reading.raw_files import plan_raw, restrict_splits
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def _table(root: Path, name: str, pk: bool = True, **options: str) -> Table:
    cat = Catalog(str(root))
    cat.create_database("db", ignore_if_exists=True)
    return cat.create_table(f"db.{name}", SCHEMA, primary_keys=["k"] if pk else [],
                            options={"bucket": "1" if pk else "-1", **options})


def _rows(lo: int, hi: int, tag: str) -> pa.Table:
    return pa.table({"k": pa.array(range(lo, hi), pa.int64()), "v": [tag] * (hi - lo)})


def _counts(t: Table) -> tuple[int, int]:
    plan = plan_raw(t.plan(), t.schema)
    return len(plan.raw), len(plan.rest_file_names)


def test_append_files_are_all_raw(tmp_path: Path) -> None:
    t = _table(tmp_path, "a", pk=False)
    for i in range(3):
        t.write(_rows(0, 10, str(i)))
    assert _counts(t) == (3, 0)
    assert not any(r.drop_deletes for r in plan_raw(t.plan(), t.schema).raw)


def test_overlapping_primary_key_files_are_merged_until_fully_compacted(tmp_path: Path) -> None:
    t = _table(tmp_path, "p")
    t.write(_rows(0, 10, "a"))
    t.write(_rows(5, 15, "b"))
    assert _counts(t) == (0, 2)
    t.maintenance.compact(full=True)
    assert _counts(t) == (1, 0)
    t.write(_rows(100, 110, "c"))  # a level-0 file whose keys overlap nothing: its own section
    assert _counts(t) == (2, 0)
    t.write(_rows(105, 106, "d"))  # overlaps the previous file only
    plan = plan_raw(t.plan(), t.schema)
    assert (len(plan.raw), len(plan.rest_file_names)) == (1, 2)
    assert plan.raw[0].file.level > 0


def test_a_file_with_delete_rows_is_merged(tmp_path: Path) -> None:
    t = _table(tmp_path, "d")
    t.write(_rows(0, 3, "a"), row_kinds=["+I", "-D", "+I"])
    (only,) = t.plan()[0].files
    assert only.delete_row_count == 1
    assert _counts(t) == (0, 1)


def test_deletion_vector_splits_are_raw_with_vectors(tmp_path: Path) -> None:
    t = _table(tmp_path, "dv", **{"deletion-vectors.enabled": "true"})
    t.write(_rows(0, 20, "a"))
    t.write(_rows(5, 8, "b"))
    plan = plan_raw(t.plan(), t.schema)
    assert len(plan.rest) == 0 and len(plan.raw) == 2
    assert sorted(r.deletion_file is not None for r in plan.raw) == [False, True]
    merge_on_read = t.copy({"deletion-vectors.merge-on-read": "true"})
    assert plan_raw(merge_on_read.plan(), merge_on_read.schema).rest  # level 0 read and merged: not raw


def test_first_row_reads_only_levels_above_zero(tmp_path: Path) -> None:
    t = _table(tmp_path, "fr", **{"merge-engine": "first-row", "ignore-delete": "true"})
    t.write(_rows(0, 10, "a"))
    t.write(_rows(5, 15, "b"))
    plan = plan_raw(t.plan(), t.schema)
    assert all(r.file.level > 0 for r in plan.raw)
    assert all(f.level > 0 for s in plan.rest for f in s.files)


def test_readable_refusal_and_restrict(tmp_path: Path) -> None:
    t = _table(tmp_path, "r", pk=False)
    t.write(_rows(0, 5, "a"))
    t.write(_rows(5, 9, "b"))
    splits = t.plan()
    refused = splits[0].files[0].file_name
    plan = plan_raw(splits, t.schema, lambda s, f: f.file_name != refused)
    assert len(plan.raw) == 1 and plan.rest_file_names == [refused]
    assert [f.file_name for s in restrict_splits(splits, {refused}) for f in s.files] == [refused]
    assert restrict_splits(splits, set()) == []


# ---- property: raw files + merged rest == the engine's read -----------------------------------------------------
def _read_raw(t: Table, plan: Any) -> pa.Table:
    parts = [t.new_read().to_arrow(plan.rest)] if plan.rest else []
    vectors = VectorCache(t.file_io)
    for r in plan.raw:
        path = file_path_in(t.path, t.schema, r.split.partition_values, r.split.bucket, r.file)
        data = pq.read_table(path)
        if r.deletion_file is not None:
            mask = vectors.keep_mask(r.deletion_file, data.num_rows)
            if mask is not None:
                data = data.filter(pa.array(mask))
        if r.drop_deletes:
            data = data.filter(pc.is_in(data.column("_VALUE_KIND"), pa.array([0, 2], pa.int8())))
        parts.append(data.select(["k", "v"]).cast(t.arrow_schema))
    return pa.concat_tables(parts) if parts else t.arrow_schema.empty_table()


ENGINES = st.sampled_from([{}, {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
                           {"merge-engine": "first-row", "ignore-delete": "true"},
                           {"merge-engine": "aggregation", "fields.v.aggregate-function": "last_non_null_value"},
                           {"deletion-vectors.enabled": "true"}])
BATCHES = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 15), st.sampled_from(["+I", "-D"])), min_size=1,
                   max_size=5)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(options=ENGINES, batches=BATCHES, compact_after=st.integers(0, 5))
def test_raw_plus_rest_equals_engine_read(tmp_path_factory: Any, options: dict[str, str],
                                          batches: list[tuple[int, int, str]], compact_after: int) -> None:
    t = _table(tmp_path_factory.mktemp("prop"), "t", **{"bucket": "2", **options})
    for i, (lo, n, kind) in enumerate(batches):
        t.write(_rows(lo, lo + n, str(i)), row_kinds=[kind if j % 3 == 0 else "+I" for j in range(n)])
        if i + 1 == compact_after:
            t.maintenance.compact(full=True)
    expected = t.read().sort_by("k")
    got = _read_raw(t, plan_raw(t.plan(), t.schema)).sort_by("k")
    assert got.equals(expected)
