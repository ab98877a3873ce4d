"""The engine's side of docs/retries.md, without Airflow: create-tag's creator and if_exists, drop-partitions'
ignore_if_missing, consume-changelog's retry key (a retry gets the batch its earlier try delivered, also when that
try stopped before moving the consumer on), and the catalog's one identifier rule."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import CatalogError, PartitionSpecError, TagAlreadyExistError
from table_engine.ops import ConsumeChangelog, CreateTag, DropPartitions
from table_engine.ops.commands import Rescale
from table_engine.ops.run import run_command


@pytest.fixture
def catalog(tmp_path: pathlib.Path) -> Catalog:
    return Catalog(str(tmp_path / "wh"))


@pytest.fixture
def table(catalog: Catalog) -> Any:
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("dt", pa.string())]), primary_keys=["id", "dt"],
                             partition_keys=["dt"], options={"bucket": "1", "changelog-producer": "input"})
    for i in range(3):
        t.write(pa.table({"id": [3 * i, 3 * i + 1, 3 * i + 2], "dt": [f"d{i}"] * 3}))
    return t


def test_create_tag_creator_is_recorded_and_recognised(table: Any, catalog: Catalog) -> None:
    def tag(**kw: Any) -> dict[str, Any]:
        return run_command(CreateTag(warehouse=catalog.warehouse, table="db.t", tag="daily", **kw), catalog)

    assert tag(creator="job-1") == {"tag": "daily", "snapshot_id": 3, "already_existed": False}
    stored = json.loads(table.file_io.read_bytes(f"{table.path}/tag/tag-daily"))
    assert stored["properties"] == {"tag.creator": "job-1"}
    assert table.tags()[0].creator == "job-1" and table.tag_snapshot("daily").properties is None
    table.write(pa.table({"id": [9], "dt": ["d0"]}))
    assert tag(creator="job-1")["snapshot_id"] == 3  # its own tag, though latest moved on
    with pytest.raises(TagAlreadyExistError, match="exists already at snapshot 3 \\(created by job-1\\), not at "
                                                   "snapshot 4: choose if_exists 'replace' or 'skip'"):
        tag(creator="job-2")
    assert tag(creator="job-2", snapshot=3)["already_existed"]  # the requested snapshot: as asked
    assert tag(creator="job-2", if_exists="skip")["skipped"] and table.tag_snapshot("daily").id == 3
    assert tag(creator="job-2", if_exists="replace")["snapshot_id"] == 4
    assert table.tags()[0].creator == "job-2"


def test_drop_partitions_ignore_if_missing(table: Any, catalog: Catalog) -> None:
    def drop(**kw: Any) -> dict[str, Any]:
        return run_command(DropPartitions(warehouse=catalog.warehouse, table="db.t", partitions=({"dt": "d1"},),
                                          **kw), catalog)

    dropped = drop()
    metrics = dropped["commit"].pop("metrics")  # Paimon's commit metrics (docs/metrics.md)
    assert dropped == {"snapshot_id": 4, "dropped": True, "commit": {
        "commit_kind": "OVERWRITE", "added_rows": 0, "deleted_rows": 3, "added_files": 0, "added_bytes": 0,
        "changelog_records": 0, "partitions": ["dt=d1"]}}
    assert metrics["lastTableFilesDeleted"] > 0 and metrics["lastTableFilesAdded"] == 0 and \
        metrics["lastPartitionsWritten"] == 1
    with pytest.raises(PartitionSpecError, match="matches no partition"):
        drop()
    assert drop(ignore_if_missing=True) == {"snapshot_id": None, "dropped": False, "commit": {}}
    assert table.latest_snapshot_id() == 4


def test_consume_changelog_retry_key(table: Any, catalog: Catalog, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"

    def consume(key: str) -> dict[str, Any]:
        return run_command(ConsumeChangelog(warehouse=catalog.warehouse, table="db.t", consumer_id="c1",
                                            output=str(out), retry_key=key), catalog)

    first = consume("run-1")
    assert (first["from_snapshot"], first["to_snapshot"], first["rows"]) == (1, 3, 9)
    record = json.loads((out / "snapshots-1-3" / "_delivery.json").read_text())
    assert (record["retry_key"], record["rows"]) == ("run-1", 9)
    table.write(pa.table({"id": [9], "dt": ["d0"]}))
    again = consume("run-1")
    assert again["redelivered"] and (again["to_snapshot"], again["rows"], again["output"]) == \
        (3, 9, first["output"])
    table.maintenance.reset_consumer("c1", 1)  # as if try 1 stopped after publishing, before moving the consumer
    assert consume("run-1")["to_snapshot"] == 3 and table.consumers()["c1"] == 4
    nxt = consume("run-2")
    assert (nxt["from_snapshot"], nxt["to_snapshot"], nxt["rows"]) == (4, 4, 1)
    assert consume("run-2")["redelivered"] and pq.read_table(out / "snapshots-4-4").num_rows == 1
    assert sorted(p.name for p in out.iterdir()) == ["snapshots-1-3", "snapshots-4-4"]
    # no key: the next (empty) batch, as before
    assert run_command(ConsumeChangelog(warehouse=catalog.warehouse, table="db.t", consumer_id="c1",
                                        output=str(out)), catalog)["rows"] == 0


@pytest.mark.parametrize("bad", ["db./t", "db.t/", "db.\\t", "db..t", ".t", "db.", "db.t$", "db.t$a$b", "a.b.c",
                                 "d/b.t", "db.t$/x"])
def test_one_identifier_rule(catalog: Catalog, table: Any, bad: str) -> None:
    for call in (catalog.get_table, catalog.drop_table, catalog.table_exists, catalog.table_path):
        with pytest.raises(CatalogError, match=re.escape(f"table identifier {bad!r}")):
            call(bad)
    with pytest.raises(CatalogError, match=re.escape(f"table identifier {bad!r}")):
        catalog.create_table(bad, pa.schema([("id", pa.int64())]))
    assert catalog.get_table("db.t$snapshots").read().num_rows == 3 and catalog.table_exists("db.t")


def test_names_only_new_tables_may_not_have(catalog: Catalog) -> None:
    """Spaces around a name and control characters: refused at create, looked up as spelled (tables made before
    under such names keep working, see test_catalog_names.py)."""
    for odd in ("db. t", "db.t ", "db.t\tx"):
        with pytest.raises(CatalogError, match=re.escape(f"table identifier {odd!r}")):
            catalog.create_table(odd, pa.schema([("id", pa.int64())]))
        assert not catalog.table_exists(odd)


def test_rescale_retried_with_the_same_commit_user_commits_once(catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog.create_table("db.p", schema, primary_keys=["id"], options={"bucket": "-2"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    t.maintenance.compact()  # publishes the postponed rows into real buckets

    def rescale() -> Any:
        return run_command(Rescale(warehouse=catalog.warehouse, table="db.p", bucket_num=3,
                                   commit_user="airflow:dag:task:run"), catalog)

    first = rescale()
    snapshots = [s.id for s in t.snapshots()]
    assert rescale() == first  # try 2 finds try 1's commit: the same snapshot, no new one
    assert [s.id for s in t.snapshots()] == snapshots
    assert sorted(t.read().column("id").to_pylist()) == [1, 2, 3]
