"""The metadata hygiene commands (Paimon's procedures ``expire_changelogs``, ``clear_consumers``,
``reset_consumer``): what they do, that a second run is a no-op success, that bad input is one line naming the field
with the warehouse byte-for-byte unchanged, and that the capability gate refuses them on a table the engine cannot
maintain."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import (
    CommandError,
    SnapshotNotExistError,
    TableEngineError,
    UnsupportedTableFeatureError,
)
from table_engine.format.changelog_file import list_changelog_ids
from table_engine.ops import (
    ClearConsumers,
    CompactManifest,
    ExpireChangelogs,
    RemoveUnexistingFiles,
    Repair,
    ResetConsumer,
)
from table_engine.ops.maintain import plan_table
from table_engine.ops.run import run_command
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.table import Table
from tests.table_engine.test_bad_input import warehouse_state

S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def decoupled(catalog: Catalog, commits: int = 6) -> Table:
    """A lookup-changelog table whose snapshots expired into long-lived changelogs (one snapshot left)."""
    t = catalog.create_table("db.t", S, primary_keys=["id"], options={
        "bucket": "1", "changelog-producer": "lookup", "changelog.num-retained.min": "100",
        "changelog.num-retained.max": "100", "changelog.time-retained": "10 h"})
    for i in range(commits):
        t.write(pa.table({"id": [i, i + 1], "v": [f"v{i}"] * 2}, schema=S))
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    return t


def cli(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> dict[str, Any]:
    assert main(argv) == code
    out = capsys.readouterr().out.strip().splitlines()
    return json.loads(out[-1]) if code == 0 else {}


def test_expire_changelogs_by_count_then_all_and_a_retry_is_a_no_op(catalog: Catalog, warehouse: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    t = decoupled(catalog)
    rows = t.read().sort_by("id")
    latest = t.latest_snapshot_id()
    assert latest is not None
    kept = list_changelog_ids(t.file_io, t.path)
    assert len(kept) == latest - 1  # every expired snapshot left its changelog
    base = ["expire-changelogs", "--warehouse", warehouse, "--table", "db.t"]
    out = cli([*base, "--retain-max", "3", "--retain-min", "1"], capsys)
    left = list(range(latest - 2, latest))  # ids above latest - retain_max
    assert out["expired_changelogs"] == [c for c in kept if c not in left]
    assert out["deleted_files"] > 0 and out["earliest_changelog_id"] == left[0] and out["changelogs_left"] == 2
    assert list_changelog_ids(t.file_io, t.path) == left
    before = warehouse_state(warehouse)
    again = cli([*base, "--retain-max", "3", "--retain-min", "1"], capsys)
    assert again["expired_changelogs"] == [] and again["deleted_files"] == 0
    assert warehouse_state(warehouse) == before
    # the table's own retention (100) keeps the rest; delete_all drops them
    assert run_command(ExpireChangelogs(warehouse=warehouse, table="db.t"))["expired_changelogs"] == []
    out = run_command(ExpireChangelogs(warehouse=warehouse, table="db.t", delete_all=True))
    assert out["expired_changelogs"] == left and out["changelogs_left"] == 0
    assert run_command(ExpireChangelogs(warehouse=warehouse, table="db.t", delete_all=True))["expired_changelogs"] \
        == []
    assert Catalog(warehouse).get_table("db.t").read().sort_by("id").equals(rows)


def test_expire_changelogs_older_than_and_max_deletes(catalog: Catalog, warehouse: str) -> None:
    t = decoupled(catalog)
    kept = list_changelog_ids(t.file_io, t.path)
    out = run_command(ExpireChangelogs(warehouse=warehouse, table="db.t", retain_min=1, older_than_millis=2**50,
                                       max_deletes=2))
    assert out["expired_changelogs"] == kept[:2]
    # older than the oldest changelog: nothing is
    assert run_command(ExpireChangelogs(warehouse=warehouse, table="db.t", retain_min=1,
                                        older_than_millis=1))["expired_changelogs"] == []


def test_a_consumer_protects_its_changelogs(catalog: Catalog, warehouse: str) -> None:
    t = decoupled(catalog)
    kept = list_changelog_ids(t.file_io, t.path)
    ConsumerManager.of(t.store).update("reader", kept[2])  # a reader still at an expired snapshot's changelog
    out = run_command(ExpireChangelogs(warehouse=warehouse, table="db.t", retain_min=1, retain_max=1))
    assert out["expired_changelogs"] == kept[:2]


def test_reset_and_clear_consumers_converge(catalog: Catalog, warehouse: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    t = catalog.create_table("db.t", S, primary_keys=["id"], options={"bucket": "1"})
    for i in range(3):
        t.write(pa.table({"id": [i], "v": ["x"]}, schema=S))
    base = ["--warehouse", warehouse, "--table", "db.t"]
    out = cli(["reset-consumer", *base, "--consumer-id", "etl", "--next-snapshot-id", "2"], capsys)
    assert out["changed"] and out["previous_next_snapshot_id"] is None and t.consumers() == {"etl": 2}
    again = cli(["reset-consumer", *base, "--consumer-id", "etl", "--next-snapshot-id", "2"], capsys)
    assert not again["changed"] and t.consumers() == {"etl": 2}
    run_command(ResetConsumer(warehouse=warehouse, table="db.t", consumer_id="etl", next_snapshot_id=4))  # latest+1
    for cid in ("audit", "bi_daily", "bi_hourly"):
        run_command(ResetConsumer(warehouse=warehouse, table="db.t", consumer_id=cid, next_snapshot_id=1))
    assert t.consumers() == {"audit": 1, "bi_daily": 1, "bi_hourly": 1, "etl": 4}
    out = cli(["clear-consumers", *base, "--dry-run"], capsys)  # lists every consumer, deletes none
    assert out["dry_run"] and out["would_clear_consumers"] == ["audit", "bi_daily", "bi_hourly", "etl"]
    assert len(t.consumers()) == 4
    out = cli(["clear-consumers", *base, "--including-consumers", "bi_.*", "--excluding-consumers", ".*daily"],
              capsys)
    assert out == {**out, "cleared_consumers": ["bi_hourly"], "consumers_left": ["audit", "bi_daily", "etl"]}
    assert cli(["clear-consumers", *base, "--including-consumers", "bi_.*", "--excluding-consumers", ".*daily"],
               capsys)["cleared_consumers"] == []
    out = cli(["reset-consumer", *base, "--consumer-id", "audit"], capsys)  # no snapshot: delete it
    assert out["changed"] and t.consumers() == {"bi_daily": 1, "etl": 4}
    assert not cli(["reset-consumer", *base, "--consumer-id", "audit"], capsys)["changed"]
    assert run_command(ClearConsumers(warehouse=warehouse, table="db.t"))["cleared_consumers"] == ["bi_daily", "etl"]
    assert t.consumers() == {} and run_command(ClearConsumers(warehouse=warehouse, table="db.t"))[
        "cleared_consumers"] == []


BAD: list[tuple[str, Callable[[str], Any], type[TableEngineError], str]] = [
    ("retain-max below retain-min",
     lambda w: ExpireChangelogs(warehouse=w, table="db.t", retain_min=5, retain_max=2), CommandError, "--retain-max"),
    ("retain-min above the table's max",
     lambda w: run_command(ExpireChangelogs(warehouse=w, table="db.t", retain_min=500)), CommandError,
     "--retain-min"),
    ("retain-min 0", lambda w: ExpireChangelogs(warehouse=w, table="db.t", retain_min=0), CommandError,
     "--retain-min"),
    ("delete-all with a retention", lambda w: ExpireChangelogs(warehouse=w, table="db.t", delete_all=True,
                                                               retain_max=3), CommandError, "--retain-max"),
    ("bad including pattern", lambda w: ClearConsumers(warehouse=w, table="db.t", including_consumers="bi_(["),
     CommandError, "--including-consumers"),
    ("bad excluding pattern", lambda w: ClearConsumers(warehouse=w, table="db.t", excluding_consumers="*x"),
     CommandError, "--excluding-consumers"),
    ("consumer id with /", lambda w: ResetConsumer(warehouse=w, table="db.t", consumer_id="a/b"), CommandError,
     "--consumer-id"),
    ("consumer id missing", lambda w: ResetConsumer(warehouse=w, table="db.t", consumer_id=""), CommandError,
     "--consumer-id"),
    ("next snapshot beyond latest + 1",
     lambda w: run_command(ResetConsumer(warehouse=w, table="db.t", consumer_id="c", next_snapshot_id=99)),
     SnapshotNotExistError, "--next-snapshot-id 99"),
    ("next snapshot expired",
     lambda w: run_command(ResetConsumer(warehouse=w, table="db.t", consumer_id="c", next_snapshot_id=1)),
     SnapshotNotExistError, "--next-snapshot-id 1"),
]


@pytest.fixture
def bad_input_table(catalog: Catalog) -> Table:
    t = decoupled(catalog, commits=3)
    ConsumerManager.of(t.store).update("keep", t.latest_snapshot_id() or 1)
    return t


@pytest.mark.parametrize(("call", "error", "names"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
        bad_input_table: Table, warehouse: str, call: Callable[[str], Any], error: type[TableEngineError],
        names: str) -> None:
    before = warehouse_state(warehouse)
    with pytest.raises(TableEngineError) as info:
        call(warehouse)
    message = str(info.value)
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {message}"
    assert names in message and "\n" not in message.strip(), message
    assert warehouse_state(warehouse) == before


def test_the_capability_gate_refuses_a_table_the_engine_cannot_maintain(catalog: Catalog, warehouse: str) -> None:
    t = decoupled(catalog, commits=3)
    ConsumerManager.of(t.store).update("keep", 2)
    schema = pathlib.Path(t.path) / "schema" / "schema-0"
    data = json.loads(schema.read_text())
    data["options"]["metadata.iceberg.storage"] = "hive-catalog"  # the engine only reads such a table
    schema.write_text(json.dumps(data, indent=2))
    before = warehouse_state(warehouse)
    for cmd in (ExpireChangelogs(warehouse=warehouse, table="db.t", delete_all=True),
                ClearConsumers(warehouse=warehouse, table="db.t"),
                ResetConsumer(warehouse=warehouse, table="db.t", consumer_id="keep")):
        with pytest.raises(UnsupportedTableFeatureError, match="metadata.iceberg.storage"):
            run_command(cmd)
    assert warehouse_state(warehouse) == before


M = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
               ("v", pa.string())])


def manifest_heavy(catalog: Catalog) -> Table:
    """A partitioned table whose manifests never merge on commit, with DELETE entries from a full compaction."""
    schema = M
    t = catalog.create_table("db.m", schema, primary_keys=["dt", "id"], partition_keys=["dt"], options={
        "bucket": "1", "manifest.merge-min-count": "1000", "manifest.full-compaction-threshold-size": "1 gb"})
    for i in range(4):
        t.write(pa.table({"dt": [f"d{i % 2}"], "id": [i], "v": ["x"]}, schema=schema))
    t.maintenance.compact(full=True)
    return t


def test_compact_manifest_rewrites_into_full_manifests_once(catalog: Catalog, warehouse: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    t = manifest_heavy(catalog)
    rows = t.read().sort_by("id")
    files = sorted(catalog.get_table("db.m$files").read().column("file_path").to_pylist())
    latest = t.latest_snapshot_id()
    base = ["compact-manifest", "--warehouse", warehouse, "--table", "db.m"]
    before = warehouse_state(warehouse)
    dry = cli([*base, "--dry-run"], capsys)
    assert dry["needed"] and dry["snapshot_id"] is None and dry["manifests_before"] >= 5
    assert dry["delete_entries"] > 0
    # whether one is due is the planner's rule (manifest.merge-min-count small manifests), as the plan says it
    assert dry["due"] is False and dry["due_reason"].startswith("not due: ")
    assert dry["due_reason"].endswith(", manifest.merge-min-count is 1000")  # the table's own option
    assert "compact-manifest" not in [a.kind for a in plan_table(t).actions]
    assert warehouse_state(warehouse) == before
    out = cli([*base, "--commit-user", "hygiene"], capsys)
    assert out["snapshot_id"] == latest + 1 and out["based_on_snapshot"] == latest and out["manifests_after"] == 1
    assert out["commit"]["commit_kind"] == "COMPACT" and out["commit"]["added_rows"] == 0
    snap = t.snapshot(latest + 1)
    assert snap.commit_user == "hygiene" and snap.delta_record_count == 0
    assert snap.total_record_count == t.snapshot(latest).total_record_count
    assert t.read().sort_by("id").equals(rows)
    assert sorted(catalog.get_table("db.m$files").read().column("file_path").to_pylist()) == files
    before = warehouse_state(warehouse)
    again = cli([*base, "--commit-user", "hygiene"], capsys)
    assert again["snapshot_id"] is None and not again["needed"] and again["manifests_before"] == 1
    assert warehouse_state(warehouse) == before
    t.write(pa.table({"dt": ["d0"], "id": [9], "v": ["y"]}, schema=M))  # commits go on after it
    assert t.read().num_rows == rows.num_rows + 1


def test_compact_manifest_on_an_empty_table_and_the_gate(catalog: Catalog, warehouse: str) -> None:
    catalog.create_table("db.e", S, primary_keys=["id"], options={"bucket": "1"})
    out = run_command(CompactManifest(warehouse=warehouse, table="db.e"))
    assert out["snapshot_id"] is None and not out["needed"]
    t = manifest_heavy(catalog)
    schema = pathlib.Path(t.path) / "schema" / "schema-0"
    data = json.loads(schema.read_text())
    data["options"]["metadata.iceberg.storage"] = "hive-catalog"  # the engine only reads such a table
    schema.write_text(json.dumps(data, indent=2))
    before = warehouse_state(warehouse)
    for cmd in (CompactManifest(warehouse=warehouse, table="db.m", dry_run=True),
                RemoveUnexistingFiles(warehouse=warehouse, table="db.m"), Repair(warehouse=warehouse, table="db.m")):
        with pytest.raises(UnsupportedTableFeatureError, match="metadata.iceberg.storage"):
            run_command(cmd)
    assert warehouse_state(warehouse) == before


def test_remove_unexisting_files_is_a_dry_run_unless_asked(catalog: Catalog, warehouse: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    t = catalog.create_table("db.u", M, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"})
    t.write(pa.table({"dt": ["a", "a", "b", "b"], "id": [1, 2, 3, 4], "v": ["x"] * 4}, schema=M))
    t.write(pa.table({"dt": ["b"], "id": [5], "v": ["y"]}, schema=M))
    files = catalog.get_table("db.u$files").read().to_pylist()
    gone = next(f for f in files if f["partition"] == "{b}" and f["record_count"] == 1)
    import pyarrow.parquet as pq

    lost = pq.read_table(gone["file_path"]).column("id").to_pylist()
    pathlib.Path(gone["file_path"]).unlink()
    latest = t.latest_snapshot_id()
    base = ["remove-unexisting-files", "--warehouse", warehouse, "--table", "db.u"]
    before = warehouse_state(warehouse)
    dry = cli(base, capsys)
    assert dry["dry_run"] and dry["missing_files"] == 1 and dry["rows"] == 1 and dry["snapshot_id"] is None
    assert dry["files"] == [gone["file_path"]] and warehouse_state(warehouse) == before
    out = cli([*base, "--remove", "--commit-user", "fix"], capsys)
    assert out["snapshot_id"] == latest + 1 and out["commit"]["commit_kind"] == "OVERWRITE"
    assert out["commit"]["deleted_rows"] == 1 and out["commit"]["partitions"] == ["dt=b"]
    snap = t.snapshot(latest + 1)
    assert snap.commit_user == "fix" and snap.total_record_count == 4 and snap.delta_record_count == -1
    assert sorted(t.read().column("id").to_pylist()) == [i for i in range(1, 6) if i not in lost]  # readable again
    before = warehouse_state(warehouse)
    again = cli([*base, "--remove"], capsys)
    assert again["missing_files"] == 0 and again["snapshot_id"] is None and warehouse_state(warehouse) == before


def test_repair_rewrites_stale_hints_once(catalog: Catalog, warehouse: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    t = decoupled(catalog, commits=3)
    latest, earliest = t.latest_snapshot_id(), t.earliest_snapshot_id()
    kept = list_changelog_ids(t.file_io, t.path)
    snap_dir, log_dir = pathlib.Path(t.path) / "snapshot", pathlib.Path(t.path) / "changelog"
    (snap_dir / "LATEST").write_text("1")  # expired long ago
    (snap_dir / "EARLIEST").unlink()
    (log_dir / "LATEST").write_text("garbage")
    (snap_dir / f"snapshot-{(earliest or 0) - 2}").write_text("{}")  # a leftover below a gap
    base = ["repair", "--warehouse", warehouse, "--table", "db.t"]
    out = cli(base, capsys)
    assert (out["latest_snapshot_id"], out["earliest_snapshot_id"]) == (latest, earliest)
    assert (out["earliest_changelog_id"], out["latest_changelog_id"]) == (kept[0], kept[-1])
    assert {h["hint"] for h in out["repaired"]} >= {"changelog/LATEST", "snapshot/EARLIEST", "snapshot/LATEST"}
    assert (snap_dir / "LATEST").read_text() == str(latest) and (snap_dir / "EARLIEST").read_text() == str(earliest)
    assert (log_dir / "LATEST").read_text() == str(kept[-1])
    before = warehouse_state(warehouse)
    assert cli(base, capsys)["repaired"] == [] and warehouse_state(warehouse) == before
    t.write(pa.table({"id": [50], "v": ["z"]}, schema=S))
    assert (t.latest_snapshot_id() or 0) > (latest or 0)  # commits go on from the repaired hint


def test_a_commit_that_takes_the_snapshot_id_makes_them_start_over(catalog: Catalog, warehouse: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """compact-manifest and remove-unexisting-files lose the id to a concurrent commit: they retry on the new latest
    snapshot (keeping its data) and leave no manifest of the lost try behind."""
    import table_engine.store.pins as pins  # every publication of a snapshot goes through a commit pin

    t = manifest_heavy(catalog)
    pathlib.Path(next(f["file_path"] for f in catalog.get_table("db.m$files").read().to_pylist()
                      if f["partition"] == "{d1}")).unlink()
    real = pins.try_publish_snapshot
    racing_writes: list[int] = []
    armed = {"on": False}

    def racing(fio: Any, tp: str, snap: Any) -> bool:
        if armed["on"]:  # another writer commits first, taking the id
            armed["on"] = False
            racing_writes.append(catalog.get_table("db.m").write(pa.table(
                {"dt": ["d0"], "id": [100 + len(racing_writes)], "v": ["w"]}, schema=M)) or 0)
        return bool(real(fio, tp, snap))

    monkeypatch.setattr(pins, "try_publish_snapshot", racing)
    manifests = pathlib.Path(t.path) / "manifest"
    armed["on"] = True
    out = run_command(RemoveUnexistingFiles(warehouse=warehouse, table="db.m", remove=True))
    assert out["missing_files"] == 1 and out["snapshot_id"] == t.latest_snapshot_id()
    assert out["based_on_snapshot"] == out["snapshot_id"] - 1  # the racer's snapshot
    armed["on"] = True
    out = run_command(CompactManifest(warehouse=warehouse, table="db.m"))
    assert out["snapshot_id"] == t.latest_snapshot_id() and out["based_on_snapshot"] == out["snapshot_id"] - 1
    assert len(racing_writes) == 2 and {100, 101} <= set(t.read().column("id").to_pylist())  # the racers' rows
    live = {n for s in (t.snapshot(i) for i in range(1, (t.latest_snapshot_id() or 0) + 1))
            for n in (s.base_manifest_list, s.delta_manifest_list)}
    lists = {p.name for p in manifests.glob("manifest-list-*")}
    assert lists == live  # no manifest list of a lost try is left


def test_on_an_s3_warehouse(s3_catalog: Catalog, s3_warehouse: str, s3_options: dict[str, str]) -> None:
    """Object-store listings find the missing file and the hints are rewritten with the store's writes."""
    t = s3_catalog.create_table("db.s", M, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "1"})
    t.write(pa.table({"dt": ["a", "b"], "id": [1, 2], "v": ["x"] * 2}, schema=M))
    t.write(pa.table({"dt": ["b"], "id": [3], "v": ["y"]}, schema=M))
    gone = next(f["file_path"] for f in s3_catalog.get_table("db.s$files").read().to_pylist()
                if f["partition"] == "{a}")
    t.file_io.delete(gone)
    common = {"warehouse": s3_warehouse, "table": "db.s", "catalog_options": s3_options}
    assert run_command(RemoveUnexistingFiles(**common))["files"] == [gone]
    assert run_command(RemoveUnexistingFiles(**common, remove=True))["snapshot_id"] == 3
    assert sorted(t.read().column("id").to_pylist()) == [2, 3]
    t.file_io.write_bytes(f"{t.path}/snapshot/LATEST", b"1", overwrite=True)
    assert [h["hint"] for h in run_command(Repair(**common))["repaired"]] == ["snapshot/LATEST"]
    assert t.file_io.read_bytes(f"{t.path}/snapshot/LATEST") == b"3"
    assert run_command(Repair(**common))["repaired"] == []
