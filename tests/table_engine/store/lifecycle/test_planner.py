"""The maintenance planner: hand-built health values against each threshold (and a hypothesis model of the
compaction triggers), then real tables in known states through the ``maintain`` command: the plan names what is due,
running it does it, and a second plan is empty; a dry run and bad input change nothing."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import time
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.cli import main
from table_engine.core_options import CoreOptions
from table_engine.ops import Maintain
from table_engine.ops.maintain import render_plan
from table_engine.ops.run import run_command
from table_engine.store.lifecycle.health import (
    BucketHealth,
    OrphanHealth,
    RetentionHealth,
    TableHealth,
    TagHealth,
    _partitions,
    _sums,
)
from table_engine.store.lifecycle.planner import (
    ACTION_KINDS,
    ManifestState,
    compaction_triggers,
    manifest_action,
    manifest_due_text,
    plan_maintenance,
)
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])


# ---- hand-built health ---------------------------------------------------------------------------------------------
def bucket(partition: str = "dt=a", b: int = 0, *, runs: int = 1, small: int = 0, files: int = 1, rows: int = 10,
           deleted: int = 0, size: int = 100) -> BucketHealth:
    return BucketHealth(partition, b, files, rows, size, max(0, runs - 1), runs, 1, small, small / files, deleted,
                        deleted / rows if rows else 0.0, 0, files if b == -2 else 0)


def retention(count: int = 3, expirable: int = 0, over_max: int = 0) -> RetentionHealth:
    return RetentionHealth(count, 1 if count else None, count or None, 0, 10, 2**31 - 1, 3_600_000, expirable,
                           over_max, 0)


def health(buckets: list[BucketHealth], *, pk: bool = True, trigger: int = 5, **changes: Any) -> TableHealth:
    h = TableHealth(table="db.t", primary_key=pk, snapshot_id=3, computed_at_millis=0, target_file_size=1 << 27,
                    small_file_threshold=1 << 26, num_sorted_run_compaction_trigger=trigger, **_sums(buckets),
                    max_sorted_runs=max((b.sorted_runs for b in buckets), default=0), partitions=_partitions(buckets),
                    buckets=buckets, snapshots=retention(), changelogs=retention(0), consumers=[], tags=[],
                    branches=[], last_compaction=None, last_tag=None, last_tag_name=None, last_expiry_millis=None,
                    latest=None)
    return replace(h, **changes)


OPTS = CoreOptions()


def kinds(h: TableHealth, opts: CoreOptions = OPTS, **kw: Any) -> list[str]:
    return [a.kind for a in plan_maintenance(h, opts, **kw).actions]


def test_each_threshold_at_and_below_it() -> None:
    assert plan_maintenance(health([]), OPTS).empty
    assert kinds(health([bucket(runs=4)])) == []  # below num-sorted-run.compaction-trigger 5
    (a,) = plan_maintenance(health([bucket(runs=5, size=7), bucket("dt=b", runs=2, size=9)]), OPTS).actions
    assert (a.kind, a.full, a.partitions, a.buckets, a.measured, a.threshold, a.option, a.estimated_bytes) == (
        "compact", False, ["dt=a"], ["dt=a bucket 0"], 5, 5, "num-sorted-run.compaction-trigger", 7)
    assert "with 5 sorted runs" in a.reason and "worst 5" in a.reason
    assert kinds(health([bucket(runs=3)], trigger=3)) == ["compact"]  # the table's own trigger
    # append tables: small files against compaction.min.file-num (5)
    assert kinds(health([bucket(small=4, files=4)], pk=False)) == []
    (small,) = plan_maintenance(health([bucket(small=5, files=5), bucket("dt=b", small=9, files=9)], pk=False),
                                OPTS).actions
    assert (small.kind, small.full, small.partitions, small.measured, small.threshold, small.option) == (
        "compact", False, ["dt=a", "dt=b"], 9, 5, "compaction.min.file-num")
    assert small.reason == "2 buckets with 5 small files or more (compaction.min.file-num; worst 9)"
    assert a.reason == "1 bucket with 5 sorted runs or more (num-sorted-run.compaction-trigger; worst 5)"
    assert kinds(health([bucket(small=3, files=3)], pk=False), CoreOptions({"compaction.min.file-num": "3"})) == [
        "compact"]
    # deletion vectors: full compaction of the partition above compaction.delete-ratio-threshold (0.2)
    assert kinds(health([bucket(deleted=2)])) == []
    (full,) = plan_maintenance(health([bucket(deleted=3, runs=6), bucket(b=1, size=50)]), OPTS).actions
    assert full.full and full.partitions == ["dt=a"] and full.estimated_bytes == 150  # not also a minor one
    # the postpone backlog
    (post,) = plan_maintenance(health([bucket(b=-2, files=2)]), OPTS).actions
    assert post.kind == "compact" and post.buckets == ["dt=a bucket -2"] and post.measured == 2
    # unpartitioned: no partition named (the whole table)
    assert plan_maintenance(health([bucket("", runs=9)]), OPTS).actions[0].partitions == []


def test_the_triggers_the_page_shows_are_the_rules_the_plan_applies() -> None:
    """:func:`compaction_triggers` and :func:`plan_maintenance` decide "due" alike: a compact action exactly when a
    trigger is due (the table page shows the triggers beside the plan)."""
    cases = [(health([bucket(runs=4)]), False), (health([bucket(runs=5)]), True),
             (health([bucket(small=4, files=4)], pk=False), False),
             (health([bucket(small=5, files=5)], pk=False), True),
             (health([bucket(small=9, files=9, runs=1)]), False),  # a primary-key table: small files are no trigger
             (health([bucket(deleted=3)]), True), (health([bucket(deleted=2)]), False),
             (health([bucket(b=-2, files=2)]), True), (health([]), False)]
    for h, due in cases:
        triggers = compaction_triggers(h, OPTS)
        assert any(t.due for t in triggers) == due == ("compact" in kinds(h)), (h.buckets, triggers)
    (minor, dv) = compaction_triggers(health([bucket(runs=3)]), OPTS)
    assert minor.text() == "worst bucket 3; not due: at 5 (num-sorted-run.compaction-trigger)"
    assert dv.text() == "worst bucket 0.0%; not due: above 20.0% (compaction.delete-ratio-threshold)"
    (minor, _) = compaction_triggers(health([bucket(small=9, files=9)], pk=False), OPTS)
    assert (minor.what, minor.text()) == ("small files", "worst bucket 9; due: at 5 (compaction.min.file-num)")


def test_the_manifest_rule_is_one() -> None:
    """The plan's compact-manifest action and the compact-manifest command's report use one rule."""
    assert manifest_action(ManifestState(31, 29, 5), OPTS) is None
    assert manifest_due_text(ManifestState(31, 29, 5), OPTS) == (
        "not due: 29 of 31 manifests are small, manifest.merge-min-count is 30")
    action = manifest_action(ManifestState(31, 30, 0), OPTS)
    assert action is not None and manifest_due_text(ManifestState(31, 30, 0), OPTS) == f"due: {action.reason}"
    assert action.reason == "30 of 31 manifests are small: manifest.merge-min-count is 30"


def test_retention_tags_partitions_manifests_orphans_in_order() -> None:
    tags = [TagHealth("old", 1, None, 1, True), TagHealth("live", 2, None, None, False)]
    orphans = OrphanHealth(files=2, bytes=14, listed=9, truncated=False, older_than_millis=1234)
    h = health([bucket(runs=5), bucket("dt=old", size=40)], snapshots=retention(12, 2, 0),
               changelogs=retention(4, 1, 1), tags=tags, orphans=orphans)
    plan = plan_maintenance(h, OPTS, expired_partitions=["dt=old"],
                            manifests=ManifestState(manifests=31, small_manifests=30, delete_entries=0))
    assert [a.kind for a in plan.actions] == list(ACTION_KINDS)  # every kind, in the order they run
    by = {a.kind: a for a in plan.actions}
    assert by["expire-partitions"].estimated_bytes == 40 and by["expire-partitions"].partitions == ["dt=old"]
    assert (by["expire-snapshots"].count, by["expire-snapshots"].option) == (2, "snapshot.time-retained")
    assert by["expire-changelogs"].option == "changelog.num-retained.max"
    assert by["expire-snapshots"].reason == ("2 of 12 snapshots expirable (snapshot.num-retained min 10, no max; "
                                             "snapshot.time-retained 1 h)")
    assert by["expire-changelogs"].reason == ("1 of 4 changelogs expirable (changelog.num-retained min 10, no max; "
                                              "changelog.time-retained 1 h)")
    assert by["expire-tags"].count == 1 and "old" in by["expire-tags"].reason
    assert (by["remove-orphan-files"].estimated_bytes, by["remove-orphan-files"].threshold) == (14, 1234)
    assert by["compact-manifest"].threshold == 30
    assert kinds(h, manifests=ManifestState(31, 29, 5), expired_partitions=[]) == [
        "compact", "expire-snapshots", "expire-changelogs", "expire-tags", "remove-orphan-files"]
    json.dumps(plan.to_dict())  # JSON types only
    assert render_plan({"plan": plan.to_dict(), "dry_run": True}).startswith(
        "maintenance of db.t at snapshot 3: 7 actions due (dry run)")


def test_partition_and_table_totals_and_their_json_order() -> None:
    h = health([bucket(runs=3, small=1, files=2, rows=10, deleted=5), bucket(b=-2, files=3, rows=4),
                bucket("dt=b", runs=2, files=1)])
    d = h.to_dict()
    totals = ["files", "rows", "bytes", "level0_files", "max_sorted_runs", "small_files", "small_file_ratio",
              "deleted_rows", "deletion_vector_ratio", "postpone_files"]
    assert list(d)[:18] == ["table", "primary_key", "snapshot_id", "computed_at_millis", "target_file_size",
                            "small_file_threshold", "num_sorted_run_compaction_trigger", *totals, "partitions"]
    assert d["partitions"][0] == {  # the postpone bucket: in the sums, not in buckets or max_sorted_runs
        "partition": "dt=a", "buckets": 1, "files": 5, "rows": 14, "bytes": 200, "level0_files": 2,
        "max_sorted_runs": 3, "small_files": 1, "small_file_ratio": 0.2, "deleted_rows": 5,
        "deletion_vector_ratio": 5 / 14, "postpone_files": 3, "postpone_rows": 4, "postpone_bytes": 100}
    assert list(d["partitions"][0]) == ["partition", "buckets", *totals, "postpone_rows", "postpone_bytes"]
    assert [d[k] for k in totals] == [6, 24, 300, 3, 3, 1, 1 / 6, 5, 5 / 24, 3]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["dt=a", "dt=b", "dt=c"]), st.integers(0, 3), st.integers(1, 9),
                          st.integers(0, 9)), max_size=12, unique_by=lambda x: (x[0], x[1])),
       st.booleans(), st.integers(2, 8))
def test_compaction_names_exactly_the_partitions_over_their_trigger(
        spec: list[tuple[str, int, int, int]], pk: bool, trigger: int) -> None:
    buckets = [bucket(p, b, runs=runs, small=small, files=max(small, 1)) for p, b, runs, small in spec]
    opts = CoreOptions({"compaction.min.file-num": str(trigger)})
    plan = plan_maintenance(health(buckets, pk=pk, trigger=trigger), opts)
    over = {b.partition for b in buckets if (b.sorted_runs if pk else b.small_files) >= trigger}
    compacted = {p for a in plan.actions for p in a.partitions}
    assert compacted == over and all(a.kind == "compact" and not a.full for a in plan.actions)
    assert len(plan.actions) == (1 if over else 0)


# ---- real tables through the maintain command -------------------------------------------------------------------
def digest(path: str) -> dict[str, str]:
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.join(d, f)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def write(t: Table, ids: list[int], dt: str = "a", v: int = 0) -> None:
    t.write(pa.table({"dt": [dt] * len(ids), "id": ids, "v": [v] * len(ids)}, schema=SCHEMA))


def maintain(warehouse: str, table: str, **kw: Any) -> dict[str, Any]:
    return run_command(Maintain(warehouse=warehouse, table=table, **kw))


def run_then_replan(warehouse: str, t: Table, expected: list[str]) -> dict[str, Any]:
    """A dry run plans ``expected`` and changes nothing; the run does it; a second plan is empty."""
    before = digest(t.path)
    dry = maintain(warehouse, t.identifier, dry_run=True)
    assert dry["due"] == expected and dry["results"] == [] and digest(t.path) == before
    done = maintain(warehouse, t.identifier, snapshot_properties={"airflow.run_id": "m1"})
    assert [r["kind"] for r in done["results"]] == expected == done["due"]
    again = maintain(warehouse, t.identifier, dry_run=True)
    assert again["due"] == [], again["plan"]
    return done


def test_level0_backlog_is_compacted_and_stays_done(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2", "write-only": "true"})
    for i in range(6):
        write(t, [i, i + 10], "a")
    write(t, [1], "b")
    done = run_then_replan(warehouse, t, ["compact"])
    (r,) = done["results"]
    assert r["command"]["partitions"] == [{"dt": "a"}] and not r["command"]["full"]
    snap = t.snapshot(r["result"]["snapshot_id"])
    assert snap.commit_kind == "COMPACT" and snap.properties == {"airflow.run_id": "m1", "maintain.action": "compact"}
    assert sorted((x["dt"], x["id"]) for x in t.read().to_pylist()) == sorted(
        [("a", i) for i in range(6)] + [("a", i + 10) for i in range(6)] + [("b", 1)])


def test_too_many_snapshots_are_expired(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.s", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "snapshot.num-retained.min": "1",
                                      "snapshot.num-retained.max": "3", "snapshot.expire.limit": "1",
                                      "num-sorted-run.compaction-trigger": "20", "write-only": "true"})
    for i in range(7):
        write(t, [i])
    done = run_then_replan(warehouse, t, ["expire-snapshots"])
    assert done["results"][0]["result"]["expired_snapshots"] == [1, 2, 3, 4]  # all due, not snapshot.expire.limit
    assert t.earliest_snapshot_id() == 5


def test_small_files_of_an_append_table_deletion_vectors_and_the_postpone_bucket(catalog: Catalog,
                                                                                 warehouse: str) -> None:
    a = catalog.create_table("db.a", SCHEMA, partition_keys=["dt"], options={"write-only": "true"})
    for i in range(5):
        write(a, [i])
    run_then_replan(warehouse, a, ["compact"])
    assert a.maintenance.health().files == 1
    dv = catalog.create_table("db.dv", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                              options={"bucket": "1", "deletion-vectors.enabled": "true"})
    write(dv, list(range(10)))
    write(dv, [1, 2, 3], v=1)  # 3 of 10 rows deleted by vectors: above compaction.delete-ratio-threshold 0.2
    done = run_then_replan(warehouse, dv, ["compact"])
    assert done["results"][0]["command"]["full"] and dv.maintenance.health().deleted_rows == 0
    p = catalog.create_table("db.p", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "-2"})
    write(p, [1, 2])
    run_then_replan(warehouse, p, ["compact"])
    assert p.maintenance.health().postpone_files == 0 and len(p.read()) == 2


def test_tags_partitions_and_orphans(catalog: Catalog, warehouse: str) -> None:
    today = datetime.date.today().strftime("%Y%m%d")
    t = catalog.create_table("db.o", SCHEMA, partition_keys=["dt"],
                             options={"partition.expiration-time": "7 d", "partition.timestamp-formatter": "yyyyMMdd",
                                      "maintenance.remove-orphan-files.enabled": "true",
                                      "maintenance.remove-orphan-files.older-than": "1 h"})
    write(t, [1], "20200101")
    write(t, [2], today)
    t.create_tag("old", time_retained_ms=1)
    dead = f"{t.path}/dt={today}/bucket-0/data-dead-0.parquet"
    with open(dead, "wb") as f:
        f.write(b"orphan!")
    stamp = time.time() - 7200
    os.utime(dead, (stamp, stamp))
    time.sleep(0.01)
    done = run_then_replan(warehouse, t, ["expire-partitions", "expire-tags", "remove-orphan-files"])
    assert done["results"][0]["result"]["expired_partitions"] == [{"dt": "20200101"}]
    assert not os.path.exists(dead) and t.maintenance.health().tags == []
    assert [r["id"] for r in t.read().to_pylist()] == [2]


def test_cli_prints_the_plan_and_bad_input_changes_nothing(catalog: Catalog, warehouse: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1",
                                                                                "write-only": "true"})
    for i in range(5):
        write(t, [i])
    before = digest(t.path)
    assert main(["maintain", "--warehouse", warehouse, "--table", "db.t", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "maintenance of db.t at snapshot 5: 1 actions due (dry run)"
    assert out[1].split()[:3] == ["#", "action", "target"] and out[2].split()[:3] == ["1", "compact", "all"]
    assert json.loads(out[-1])["plan"]["actions"][0]["kind"] == "compact"
    assert main(["maintain", "--warehouse", warehouse, "--table", "db.nope"]) == 1
    line = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert line["status"] == "error" and "db.nope" in line["error"] and "\n" not in line["error"]
    assert digest(t.path) == before


def test_maintain_on_s3_plans_runs_and_replans_empty(s3_catalog: Catalog, s3_warehouse: str,
                                                     s3_options: dict[str, str]) -> None:
    """On the session's S3 server: an L0 backlog and too many snapshots are planned (a dry run commits nothing), run
    (compaction, then snapshot expiry) and planned again: nothing due."""
    t = s3_catalog.create_table("db.s3", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1",
                                         "snapshot.num-retained.max": "3"})
    for i in range(6):
        write(t, [i, i + 10])

    def run(**kw: Any) -> dict[str, Any]:
        return maintain(s3_warehouse, t.identifier, catalog_options=s3_options, **kw)

    dry = run(dry_run=True)
    assert dry["due"] == ["compact", "expire-snapshots"] and dry["results"] == []
    assert t.latest_snapshot_id() == 6 and t.earliest_snapshot_id() == 1
    (compact, expire) = dry["plan"]["actions"]
    assert compact["buckets"] == ["dt=a bucket 0"] and compact["measured"] == 6 and compact["threshold"] == 5
    assert expire["count"] == 3  # 6 snapshots, at most 3 retained
    done = run(snapshot_properties={"airflow.run_id": "s3"})
    assert [r["kind"] for r in done["results"]] == ["compact", "expire-snapshots"]
    compacted = t.snapshot(done["results"][0]["result"]["snapshot_id"])
    assert compacted.properties == {"airflow.run_id": "s3", "maintain.action": "compact"}
    assert t.earliest_snapshot_id() == 5 and t.latest_snapshot_id() == 7 and t.maintenance.health().level0_files == 0
    assert run(dry_run=True)["due"] == []
    assert sorted(x["id"] for x in t.read().to_pylist()) == sorted([*range(6), *range(10, 16)])
