"""Consumers: Paimon's consumer file format, create/update/reset/clear/expire, snapshot protection."""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.errors import ConsumerError, CorruptMetadataError
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.table import Table


@pytest.fixture
def table(catalog: Catalog) -> Table:
    return catalog.create_table("db.t", pa.schema([("id", pa.int64())]))


def test_file_format_is_paimons(table: Table) -> None:
    cm = ConsumerManager.of(table.store)
    cm.update("job-1", 42)
    text = table.file_io.read_text(f"{table.path}/consumer/consumer-job-1")
    assert text == '{\n  "nextSnapshot" : 42\n}'
    assert json.loads(text) == {"nextSnapshot": 42}
    # files written by Java (extra keys) or pypaimon (compact JSON) read too
    table.file_io.write_bytes(f"{table.path}/consumer/consumer-java", b'{"nextSnapshot":7,"other":1}')
    assert table.consumers() == {"java": 7, "job-1": 42}


def test_create_update_reset_delete(table: Table) -> None:
    cm = ConsumerManager.of(table.store)
    assert cm.get("a") is None and cm.min_next_snapshot() is None
    cm.create("a", 3)
    with pytest.raises(ConsumerError, match="exists"):
        cm.create("a", 4)
    cm.update("a", 5)
    c = cm.get("a")
    assert c is not None and c.next_snapshot == 5
    table.maintenance.reset_consumer("b", 2)
    assert cm.min_next_snapshot() == 2
    table.maintenance.reset_consumer("b")  # no next snapshot: delete
    assert table.consumers() == {"a": 5}
    assert cm.delete("a") and not cm.delete("a")


@pytest.mark.parametrize("bad_id", ["", " ", "a/b", "a\\b"])
def test_invalid_ids(table: Table, bad_id: str) -> None:
    with pytest.raises(ConsumerError):
        ConsumerManager.of(table.store).update(bad_id, 1)


@pytest.mark.parametrize("bad_next", [0, -1, True, 1.5])
def test_invalid_next_snapshot(table: Table, bad_next: object) -> None:
    with pytest.raises(ConsumerError):
        ConsumerManager.of(table.store).update("a", bad_next)  # type: ignore[arg-type]


def test_clear_with_patterns(table: Table) -> None:
    for cid in ("flink-1", "flink-2", "spark-1", "spark-keep"):
        table.maintenance.reset_consumer(cid, 1)
    assert table.maintenance.clear_consumers("flink-.*", dry_run=True) == ["flink-1", "flink-2"]  # listed, not deleted
    assert len(table.consumers()) == 4
    assert table.maintenance.clear_consumers("flink-.*") == ["flink-1", "flink-2"]
    assert table.maintenance.clear_consumers(".*", "spark-keep") == ["spark-1"]
    assert table.consumers() == {"spark-keep": 1}
    assert table.maintenance.clear_consumers("spark") == []  # full match only
    with pytest.raises(ConsumerError, match="pattern"):
        table.maintenance.clear_consumers("(")
    assert table.maintenance.clear_consumers() == ["spark-keep"]


def test_expire_by_modification_time(table: Table) -> None:
    cm = ConsumerManager.of(table.store)
    cm.update("old", 1)
    cm.update("new", 1)
    past = time.time() - 3600
    os.utime(cm.path("old"), (past, past))
    assert cm.expire(int(time.time() * 1000) - 60_000) == ["old"]
    assert table.consumers() == {"new": 1}


def test_consumer_expiry_at_commit_time(catalog: Catalog, clock: ManualClock) -> None:
    t = catalog.create_table("db.c", pa.schema([("id", pa.int64())]),
                             options={"consumer.expiration-time": "1 h", "snapshot.num-retained.min": "1",
                                      "snapshot.time-retained": "0 s"})
    t.write(pa.table({"id": [1]}))
    t.maintenance.reset_consumer("stale", 1)
    past = time.time() - 7200
    os.utime(ConsumerManager.of(t.store).path("stale"), (past, past))
    t.write(pa.table({"id": [2]}))
    t.write(pa.table({"id": [3]}))
    clock.advance(1)  # snapshot 2 expires only once snapshot 3 is older than the cut-off (now - 0 s)
    report = t.maintenance.after_commit()
    # the stale consumer goes first, so it no longer holds snapshot 1
    assert report.consumers_expired == ["stale"]
    assert report.snapshots is not None and report.snapshots.expired_snapshot_ids == [1, 2]


def test_corrupt_consumer_file(table: Table) -> None:
    table.file_io.write_bytes(f"{table.path}/consumer/consumer-x", b"{not json")
    with pytest.raises(CorruptMetadataError, match="consumer file"):
        ConsumerManager(table.file_io, table.path).get("x")


def test_consumer_expiry_cut_off_is_exclusive(table: Table) -> None:
    """Paimon's ``ConsumerManager.expire``: a consumer goes when the cut-off is strictly after its file's time."""
    cm = ConsumerManager.of(table.store)
    cm.update("a", 1)
    modified = cm.all()[0].modified_millis
    assert cm.expire(modified) == [] and table.consumers() == {"a": 1}
    assert cm.expire(modified + 1) == ["a"] and table.consumers() == {}
