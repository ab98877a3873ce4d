"""The ``$audit_log`` and ``$binlog`` system tables: batch, incremental and streaming reads."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import TableNotExistError, UnsupportedError
from table_engine.store.changes.binlog import pack_binlog
from table_engine.system_tables import AuditLogTable, BinlogTable

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


@pytest.fixture
def catalog_with_table(catalog: Catalog) -> Catalog:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    t.write(pa.table({"id": [2, 3], "v": ["B", "c"]}, schema=SCHEMA), row_kinds=["+U", "+I"])
    t.write(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA), row_kinds=["-D"])
    return catalog


def test_audit_log_batch_reads_the_snapshot_as_inserts(catalog_with_table: Catalog) -> None:
    log = catalog_with_table.get_table("db.t$audit_log")
    assert isinstance(log.source, AuditLogTable) and log.identifier == "db.t$audit_log"
    assert log.arrow_schema.names == ["rowkind", "id", "v"]
    assert sorted(log.read().to_pylist(), key=lambda r: r["id"]) == [
        {"rowkind": "+I", "id": 2, "v": "B"}, {"rowkind": "+I", "id": 3, "v": "c"}]
    assert log.read(snapshot_id=1).num_rows == 2
    assert log.copy({"scan.snapshot-id": "1"}).read(columns=["rowkind", "v"]).to_pylist() == [
        {"rowkind": "+I", "v": "a"}, {"rowkind": "+I", "v": "b"}]
    with pytest.raises(UnsupportedError, match="read-only"):
        log.new_write()


def test_audit_log_incremental_and_streaming_reads_keep_row_kinds(catalog_with_table: Catalog) -> None:
    log = catalog_with_table.get_table("db.t$audit_log")
    got = log.copy({"incremental-between": "1,3"}).read().to_pylist()
    assert got == [{"rowkind": "+U", "id": 2, "v": "B"}, {"rowkind": "+I", "id": 3, "v": "c"},
                   {"rowkind": "-D", "id": 1, "v": "a"}]
    consumer = log.changelog_consumer(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "2"})
    assert consumer.poll(max_snapshots=5).to_arrow().to_pylist() == got


def test_binlog_packs_columns_into_arrays(catalog_with_table: Catalog) -> None:
    binlog = catalog_with_table.get_table("db.t$binlog")
    assert isinstance(binlog.source, BinlogTable)
    assert binlog.arrow_schema.field("v").type == pa.list_(pa.string())
    assert sorted(binlog.read().to_pylist(), key=lambda r: r["id"]) == [
        {"rowkind": "+I", "id": [2], "v": ["B"]}, {"rowkind": "+I", "id": [3], "v": ["c"]}]
    assert binlog.copy({"incremental-between": "2,3"}).read(columns=["rowkind", "v"]).to_pylist() == [
        {"rowkind": "-D", "v": ["a"]}]
    consumer = binlog.changelog_consumer(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "3"})
    polled = consumer.poll()
    assert polled.to_arrow().to_pylist() == [{"rowkind": "-D", "id": [1], "v": ["a"]}]
    scan = binlog.new_stream_scan()                                       # latest-full: snapshot 3 in full
    plan = scan.plan()
    assert plan is not None and plan.kind == "full"
    assert pa.Table.from_batches(list(scan.read(plan, columns=["v"]))).column("v").to_pylist() == [["B"], ["c"]]


def test_pack_binlog_pairs_update_before_with_the_next_row_across_batches() -> None:
    def batch(kinds: list[str], ids: list[int]) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict({"rowkind": kinds, "id": ids})

    packed = pa.Table.from_batches(list(pack_binlog([
        batch(["+I", "-U", "+U", "-D", "-U"], [1, 2, 2, 3, 4]),
        batch(["+U", "-U", "-U", "+U"], [4, 5, 5, 6]),
        batch(["-U"], [7]),
    ]))).to_pylist()
    assert packed == [
        {"rowkind": "+I", "id": [1]}, {"rowkind": "+U", "id": [2, 2]}, {"rowkind": "-D", "id": [3]},
        {"rowkind": "+U", "id": [4, 4]},                                   # -U at a batch end pairs with the next
        {"rowkind": "-U", "id": [5, 5]},                                   # Paimon pairs -U with whatever follows
        {"rowkind": "+U", "id": [6]},
        {"rowkind": "-U", "id": [7]}]                                      # an unpaired -U at the very end
    alone = pa.Table.from_batches(list(pack_binlog([batch(["-U", "+U"], [1, 1])], pair_updates=False)))
    assert alone.column("id").to_pylist() == [[1], [1]]


def test_unknown_system_table_lists_the_change_tables(catalog_with_table: Catalog) -> None:
    with pytest.raises(TableNotExistError, match="audit_log, binlog"):
        catalog_with_table.get_table("db.t$nope")


@pytest.mark.parametrize("producer", ["input", "lookup"])
def test_changelog_producers_give_update_pairs(catalog: Catalog, producer: str) -> None:
    t = catalog.create_table("db.c", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "changelog-producer": producer})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    t.write(pa.table({"id": [2, 2, 1], "v": ["b", "B", "a"]}, schema=SCHEMA), row_kinds=["-U", "+U", "-D"])
    end = str(t.latest_snapshot_id())
    log = catalog.get_table("db.c$audit_log").copy({"incremental-between": f"0,{end}"}).read().to_pylist()
    assert [(r["rowkind"], r["id"], r["v"]) for r in log] == [
        ("+I", 1, "a"), ("+I", 2, "b"), ("-U", 2, "b"), ("+U", 2, "B"), ("-D", 1, "a")]
    binlog = catalog.get_table("db.c$binlog").copy({"incremental-between": f"0,{end}"}).read().to_pylist()
    assert binlog == [{"rowkind": "+I", "id": [1], "v": ["a"]}, {"rowkind": "+I", "id": [2], "v": ["b"]},
                      {"rowkind": "+U", "id": [2, 2], "v": ["b", "B"]}, {"rowkind": "-D", "id": [1], "v": ["a"]}]
    consumer = catalog.get_table("db.c$binlog").changelog_consumer(
        options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    assert consumer.poll(max_snapshots=10).to_arrow().to_pylist() == binlog
    assert catalog.get_table("db.c").copy({"incremental-between": f"0,{end}"}).read().to_pylist() == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 2, "v": "B"}]                 # -U and -D dropped
