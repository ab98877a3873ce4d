"""StoreContext builds a table's merge function and key-value layout once: reads, writes and compactions of one context
share them."""

from __future__ import annotations

import pyarrow as pa

from table_engine import Catalog
from table_engine.core_options import CoreOptions
from table_engine.store.compaction.compact import BucketCompactor, CompactionSettings
from table_engine.store.context import StoreContext
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.reading.read import read_context
from table_engine.store.writing.write import TableWrite
from table_engine.table import Table

SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.int64())])


def _table(catalog: Catalog, name: str = "db.t", **options: str) -> Table:
    pks = [] if options.pop("append", None) else ["k"]
    return catalog.create_table(name, SCHEMA, primary_keys=pks, options={"bucket": "1", **options})


def _ctx(t: Table, **overlay: str) -> StoreContext:
    return StoreContext(t.file_io, t.path, t.schema, CoreOptions({**t.schema.options, **overlay}))


def test_read_write_and_compaction_share_one_merge_function(catalog: Catalog) -> None:
    ctx = _ctx(_table(catalog, **{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}))
    fn = ctx.merge_function
    assert fn is not None and ctx.merge_function is fn
    assert read_context(ctx).merge_function is fn
    assert TableWrite(ctx).merge_fn is fn
    compactor = BucketCompactor(ctx, CompactionSettings.of(ctx), b"", 0)
    assert compactor.read_ctx.merge_function is fn
    assert ctx.merge_capabilities is fn.capabilities


def test_the_table_reads_with_its_context_merge_function(catalog: Catalog) -> None:
    t = _table(catalog, **{"merge-engine": "partial-update"})
    assert t.new_read().ctx.merge_function is t.new_read().ctx.merge_function
    t.write(pa.table({"k": pa.array([1, 1], pa.int32()), "v": pa.array([5, None], pa.int64())}))
    assert t.read().to_pylist() == [{"k": 1, "v": 5}]


def test_options_in_effect_decide_the_merge_function(catalog: Catalog) -> None:
    t = _table(catalog)
    assert not _ctx(t).merge_capabilities.ignore_delete  # type: ignore[union-attr]
    caps = _ctx(t, **{"ignore-delete": "true"}).merge_capabilities
    assert caps is not None and caps.ignore_delete


def test_append_tables_have_no_merge_function(catalog: Catalog) -> None:
    ctx = _ctx(_table(catalog, append="1", bucket="-1"))
    assert ctx.merge_function is None and ctx.merge_capabilities is None
    assert not ctx.need_lookup() and not ctx.batch_scan_skip_level0()


def test_lookup_and_level0_rules(catalog: Catalog) -> None:
    dv = _ctx(_table(catalog, "db.dv", **{"deletion-vectors.enabled": "true"}))
    assert dv.need_lookup() and dv.batch_scan_skip_level0()
    dv_mor = _ctx(_table(catalog, "db.dv_mor", **{"deletion-vectors.enabled": "true",
                                                   "deletion-vectors.merge-on-read": "true"}))
    assert dv_mor.need_lookup() and not dv_mor.batch_scan_skip_level0()
    lookup = _ctx(_table(catalog, "db.lookup", **{"changelog-producer": "lookup"}))
    assert lookup.need_lookup() and not lookup.batch_scan_skip_level0()
    first_row = _ctx(_table(catalog, "db.first_row", **{"merge-engine": "first-row"}))
    assert first_row.need_lookup() and first_row.batch_scan_skip_level0()
    for engine in ("deduplicate", "partial-update", "aggregation"):
        plain = _ctx(_table(catalog, f"db.{engine.replace('-', '_')}", **{"merge-engine": engine}))
        assert not plain.need_lookup() and not plain.batch_scan_skip_level0()


def test_writers_share_the_context_layout(catalog: Catalog) -> None:
    ctx = _ctx(_table(catalog))
    layout = ctx.layout
    assert layout is ctx.layout and TableWrite(ctx).layout is layout and DataFileWriter(ctx).layout is layout
    assert (layout.has_pk, layout.key_names, layout.arrow_schema.names) == (True, ("k",), ["k", "v"])
    assert [f.name for f in layout.value_fields] == ["k", "v"] and not layout.blob_fields
