"""Branches in the engine (Paimon's ``BranchManager``): the layout, name rules, a branch as a table (reads, writes,
tags, schema changes, compaction, consumers, expiry), fast-forward, the lifecycle of one line keeping every other
line's files, the commands and their retries, and a branch on S3."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import (
    BranchAlreadyExistError,
    BranchError,
    BranchNotExistError,
    CatalogError,
    OptionError,
    TableNotExistError,
    TagNotExistError,
    UnsupportedError,
)
from table_engine.ops import CreateBranch, DeleteBranch, FastForward, RenameBranch
from table_engine.ops.run import run_command
from table_engine.schema_change import AddColumn, SetOption
from table_engine.store.branches import BranchManager
from table_engine.table import Table

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.string())])


def rows(keys: list[int], tag: str) -> pa.Table:
    return pa.table({"k": keys, "v": [f"{tag}{k}" for k in keys]}, schema=SCHEMA)


def content(t: Table) -> dict[int, str]:
    d = t.read().to_pydict()
    return dict(zip(d["k"], d["v"], strict=True))


def files_under(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


@pytest.fixture
def table(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    t.write(rows([1, 2], "a"))
    t.write(rows([2, 3], "b"))
    t.create_tag("t1")
    return t


def test_layout_and_name_rules_are_paimons(catalog: Catalog, table: Table) -> None:
    b = table.create_branch("b1", "t1")
    assert b.identifier == "db.t$branch_b1" and b.branch == "b1" and table.branch == "main"
    assert files_under(f"{table.path}/branch") == {"branch-b1/schema/schema-0", "branch-b1/snapshot/snapshot-2",
                                                   "branch-b1/tag/tag-t1"}
    table.create_branch("empty")
    assert files_under(f"{table.path}/branch/branch-empty") == {"schema/schema-0"}
    assert table.list_branches() == ["b1", "empty"]
    assert catalog.get_table("db.t$branches").read().column("branch_name").to_pylist() == ["b1", "empty"]
    for bad, error, text in (("main", BranchError, "default branch"), ("  ", BranchError, "blank"),
                             ("123", BranchError, "pure numeric"), ("b1", BranchAlreadyExistError, "already exists"),
                             ("a/b", BranchError, "one directory")):
        with pytest.raises(error, match=text):
            table.create_branch(bad)
    with pytest.raises(TagNotExistError, match="nope"):
        table.create_branch("b2", "nope")
    with pytest.raises(BranchNotExistError, match="doesn't exist"):
        table.delete_branch("nope")
    with pytest.raises(TableNotExistError, match="branch 'nope'"):
        catalog.get_table("db.t$branch_nope")
    with pytest.raises(CatalogError, match="pure numeric"):
        catalog.get_table("db.t$branch_12")
    assert not table.delete_branch("nope", ignore_if_missing=True)
    assert files_under(f"{table.path}/branch") == {"branch-b1/schema/schema-0", "branch-b1/snapshot/snapshot-2",
                                                   "branch-b1/tag/tag-t1", "branch-empty/schema/schema-0"}


def test_a_branch_is_a_table_of_its_own_line(catalog: Catalog, table: Table) -> None:
    b = table.create_branch("b1", "t1")
    b.write(rows([3, 4], "c"))
    b.alter(AddColumn("w", pa.int64()))  # the branch's schema dir only
    b = catalog.get_table("db.t$branch_b1")
    b.write(pa.table({"k": [5], "v": ["d5"], "w": [50]}))
    b.create_tag("bt")
    assert table.refresh().schema.id == 0 and "w" not in table.arrow_schema.names
    table.write(rows([9], "m"))
    assert content(table) == {1: "a1", 2: "b2", 3: "b3", 9: "m9"}
    assert content(b) == {1: "a1", 2: "b2", 3: "c3", 4: "c4", 5: "d5"}
    assert b.list_tags() == ["bt", "t1"] and table.list_tags() == ["t1"]
    via_option = table.copy({"branch": "b1"})  # Paimon's `branch` option
    assert via_option.identifier == "db.t$branch_b1" and content(via_option) == content(b)
    assert via_option.copy({"branch": "main"}).identifier == "db.t"
    assert [r["snapshot_id"] for r in catalog.get_table("db.t$branch_b1$snapshots").read().to_pylist()] == [2, 3, 4]
    assert catalog.get_table("db.t$branch_b1$schemas").read().num_rows == 2
    b.maintenance.compact(full=True)
    b.maintenance.reset_consumer("c1", 3)
    assert os.path.exists(f"{table.path}/branch/branch-b1/consumer/consumer-c1")
    assert not os.path.exists(f"{table.path}/consumer")
    # data files and manifests live in the table directory for every branch
    assert not [f for f in files_under(f"{table.path}/branch") if "bucket-" in f or "manifest" in f]
    # expiry on the branch keeps what main uses, and the other way round
    b.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    table.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    table.delete_tag("t1")
    time.sleep(0.01)
    b.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    assert content(table) == {1: "a1", 2: "b2", 3: "b3", 9: "m9"}
    assert content(b) == {1: "a1", 2: "b2", 3: "c3", 4: "c4", 5: "d5"}
    assert content(b.copy({"scan.tag-name": "t1"})) == {1: "a1", 2: "b2", 3: "b3"}
    assert len(content(b.copy({"scan.tag-name": "bt"}))) == 5


def test_fast_forward_replaces_mains_line_from_the_branch_point(catalog: Catalog, table: Table) -> None:
    b = table.create_branch("b1", "t1")
    b.write(rows([7], "x"))
    b.create_tag("bt")
    table.write(rows([8], "m"))  # snapshot 3 on main: discarded by the fast-forward (Paimon's semantics)
    table.create_tag("late")
    assert BranchManager.of(table.store).discarded_by_fast_forward("b1") == [3]
    assert table.fast_forward("b1") == 3
    assert content(catalog.get_table("db.t")) == content(b) == {1: "a1", 2: "b2", 3: "b3", 7: "x7"}
    assert table.list_tags() == ["bt", "t1"]  # 'late' (on snapshot 3) went; the branch's tags came
    snap_dir = f"{table.path}/snapshot"
    with open(f"{snap_dir}/LATEST") as f:
        assert f.read() == "3"
    assert BranchManager.of(table.store).is_fast_forwarded("b1")
    table.write(rows([10], "n"))  # main goes on from the branch's line
    assert table.latest_snapshot_id() == 4 and content(table)[10] == "n10"
    with pytest.raises(BranchError, match="do not use"):
        b.fast_forward("b1")


def test_branch_commands_converge_on_retries(warehouse: str, table: Table,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    base: dict[str, Any] = {"warehouse": warehouse, "table": "db.t"}
    out = run_command(CreateBranch(**base, branch="b1", tag="t1"))
    assert out == {"branch": "b1", "tag": "t1", "already_existed": False, "snapshot_id": 2}
    assert run_command(CreateBranch(**base, branch="b1", tag="t1"))["already_existed"]  # a retry
    with pytest.raises(BranchAlreadyExistError, match="not made from nothing"):
        run_command(CreateBranch(**base, branch="b1"))
    assert run_command(CreateBranch(**base, branch="b1", if_exists="skip"))["skipped"]
    # write into the branch through --table db.t$branch_b1 (the CLI grammar, as the provider renders it)
    os.makedirs(os.path.join(warehouse, "src"))
    pq.write_table(rows([6], "w"), os.path.join(warehouse, "src", "a.parquet"))
    assert main(["write", "--warehouse", warehouse, "--table", "db.t$branch_b1", "--source",
                 os.path.join(warehouse, "src")]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["snapshot_id"] == 3
    table.write(rows([8], "m"))
    with pytest.raises(BranchError, match=r"snapshots \[3\].*not done"):
        run_command(FastForward(**base, branch="b1", check_unchanged=True))
    assert content(table)[8] == "m8"
    done = run_command(FastForward(**base, branch="b1"))
    assert done["discarded_snapshots"] == [3] and not done["already_done"]
    assert run_command(FastForward(**base, branch="b1", check_unchanged=True))["already_done"]
    assert content(table) == {1: "a1", 2: "b2", 3: "b3", 6: "w6"}
    assert run_command(RenameBranch(**base, branch="b1", to="b2"))["already_done"] is False
    assert run_command(RenameBranch(**base, branch="b1", to="b2"))["already_done"]
    assert content(table.branch_table("b2")) == content(table)
    assert run_command(DeleteBranch(**base, branch="b2"))["deleted"]
    assert run_command(DeleteBranch(**base, branch="b2", ignore_if_missing=True))["deleted"] is False
    with pytest.raises(BranchNotExistError):
        run_command(DeleteBranch(**base, branch="b2"))
    assert content(table) == {1: "a1", 2: "b2", 3: "b3", 6: "w6"}  # main's copy of the branch stays readable


def test_the_cli_runs_the_branch_commands(warehouse: str, table: Table, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--warehouse", warehouse, "--table", "db.t"]

    def result(argv: list[str], code: int = 0) -> dict[str, Any]:
        assert main(argv) == code
        return dict(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))

    assert result(["create-branch", *base, "--branch", "b1", "--tag", "t1"])["already_existed"] is False
    assert result(["create-tag", "--warehouse", warehouse, "--table", "db.t$branch_b1", "--tag", "bt"])["tag"] == "bt"
    assert "pure numeric" in result(["create-branch", *base, "--branch", "7"], 1)["error"]
    assert result(["fast-forward", *base, "--branch", "b1", "--check-unchanged"])["snapshot_id"] == 2
    assert table.list_tags() == ["bt", "t1"]
    assert result(["rename-branch", *base, "--branch", "b1", "--to", "b2"])["branch"] == "b2"
    assert result(["delete-branch", *base, "--branch", "b2"])["deleted"] is True
    assert result(["delete-branch", *base, "--branch", "b2", "--ignore-if-missing"])["deleted"] is False
    assert table.list_branches() == []


def test_a_branch_on_s3(s3_catalog: Catalog) -> None:
    t = s3_catalog.create_table("db.s", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    t.write(rows([1, 2], "a"))
    t.create_tag("t1")
    b = t.create_branch("b1", "t1")
    b.write(rows([2, 3], "b"))  # published with a conditional put into branch/branch-b1/snapshot
    t.write(rows([9], "m"))
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    t.delete_tag("t1")
    assert t.list_branches() == ["b1"]
    assert content(s3_catalog.get_table("db.s$branch_b1")) == {1: "a1", 2: "b2", 3: "b3"}
    run_command(FastForward(warehouse=s3_catalog.warehouse, table="db.s", branch="b1",
                            catalog_options=s3_catalog.options))
    assert content(s3_catalog.get_table("db.s")) == {1: "a1", 2: "b2", 3: "b3"}
    t.delete_branch("b1")
    assert t.list_branches() == [] and content(s3_catalog.get_table("db.s")) == {1: "a1", 2: "b2", 3: "b3"}


def decode_split_partition(split: Any) -> str:
    """The ``dt`` value of a split of a table partitioned by one string column."""
    from table_engine.format.binary_row import decode_row
    from table_engine.types import parse_type

    (value,) = decode_row(split.partition, [parse_type("STRING")])
    return str(value)


def test_scan_fallback_branch_reads_missing_partitions_from_the_fallback(catalog: Catalog) -> None:
    """Paimon's FallbackReadFileStoreTable: a partition main lacks is read from the fallback branch."""
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("k", pa.int64(), nullable=False),
                        pa.field("v", pa.string())])
    t = catalog.create_table("db.f", schema, primary_keys=["dt", "k"], partition_keys=["dt"],
                             options={"bucket": "1"})
    t.create_branch("stream")  # empty: the schemas only
    s = t.branch_table("stream")
    s.write(pa.table({"dt": ["d1", "d1", "d2"], "k": [1, 2, 1], "v": ["s", "s", "s"]}, schema=schema))
    t.write(pa.table({"dt": ["d1"], "k": [1], "v": ["m"]}, schema=schema))
    t.alter(SetOption("scan.fallback-branch", "stream"))
    t = catalog.get_table("db.f")

    def rows(table: pa.Table) -> list[tuple[object, ...]]:
        return sorted(tuple(r.values()) for r in table.to_pylist())

    # d1 is complete in main (its own row only), d2 comes from the fallback
    assert rows(t.read()) == [("d1", 1, "m"), ("d2", 1, "s")]
    assert rows(pa.Table.from_batches(list(t.to_batches()))) == [("d1", 1, "m"), ("d2", 1, "s")]
    assert rows(t.read(filter=[("dt", "=", "d2")], columns=["k", "v"])) == [(1, "s")]
    with pytest.raises(UnsupportedError, match="scan.fallback-branch"):
        t.plan()  # one table's splits: refused rather than half-right
    lines = t.plan_with_fallback()  # what Spark's reads plan: each split with the branch it is read from
    assert [(b, decode_split_partition(sp)) for b, sp in lines] == [(None, "d1"), ("stream", "d2")]
    assert [b for b, _ in t.plan_with_fallback(filter=[("dt", "=", "d1")])] == [None]
    s.alter(AddColumn("extra", pa.int64()))
    with pytest.raises(OptionError, match="same row type"):
        catalog.get_table("db.f").read()


def test_scan_fallback_branch_travels_the_fallback_too(catalog: Catalog) -> None:
    """Time travel on a fallback table travels the fallback branch (Paimon's ``rewriteOtherOptions``): a snapshot
    id of main becomes the fallback's latest snapshot at or before its time; tags and times are the fallback's own;
    incremental reads take the fallback's changes of the partitions main's changes lack."""
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("k", pa.int64(), nullable=False),
                        pa.field("v", pa.string())])
    t = catalog.create_table("db.f", schema, primary_keys=["dt", "k"], partition_keys=["dt"],
                             options={"bucket": "1"})
    s = t.create_branch("stream")

    def batch(dt: str, v: str) -> pa.Table:
        return pa.table({"dt": [dt], "k": [1], "v": [v]}, schema=schema)

    def rows(table: pa.Table) -> list[tuple[object, ...]]:
        return sorted(tuple(r.values()) for r in table.to_pylist())

    def tick() -> None:  # snapshots a millisecond apart at least
        time.sleep(0.005)

    for branch, dt, v in ((s, "d1", "s"), (s, "d2", "s"), (t, "d1", "m"), (s, "d3", "s"), (t, "d1", "n")):
        branch.write(batch(dt, v))  # stream 1, stream 2, main 1 (its fallback: stream 2), stream 3, main 2
        tick()
    t.create_tag("t1", 1)
    t.alter(SetOption("scan.fallback-branch", "stream"))
    t = catalog.get_table("db.f")
    at_main_1 = [("d1", 1, "m"), ("d2", 1, "s")]
    assert rows(t.read()) == [("d1", 1, "n"), ("d2", 1, "s"), ("d3", 1, "s")]
    assert rows(t.read(snapshot_id=1)) == at_main_1
    assert rows(t.copy({"scan.snapshot-id": "1"}).read()) == at_main_1
    assert rows(pa.Table.from_batches(list(t.to_batches(snapshot_id=1)))) == at_main_1
    assert rows(t.read(timestamp_millis=t.snapshot(1).time_millis)) == at_main_1
    assert [(b, decode_split_partition(sp)) for b, sp in t.plan_with_fallback(snapshot_id=1)] == \
        [(None, "d1"), ("stream", "d2")]
    with pytest.raises(TagNotExistError, match="stream.*t1|t1.*stream"):  # a tag is the fallback's own
        t.read(tag="t1")
    s.create_tag("t1", 2)
    assert rows(t.read(tag="t1")) == at_main_1
    # incremental: main's changes of d1 (2 after 1), stream's changes after its snapshot 1 in the other partitions
    inc = t.copy({"incremental-between": "1,2"})
    assert rows(inc.read()) == [("d1", 1, "n"), ("d2", 1, "s")]
    with pytest.raises(UnsupportedError, match="incremental"):
        inc.plan_with_fallback()
    # streaming reads read main alone
    scan = t.new_stream_scan(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    first = scan.plan()
    assert first is not None
    assert {v for b in scan.read(first) for v in b.column("v").to_pylist()} == {"m"}


def test_a_branch_from_a_tag_whose_snapshot_expires_while_it_is_created(catalog: Catalog, table: Table,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulation pk-write-only seed 1867: the tag's snapshot existed when create_branch checked, and an expiry
    removed it before it was copied (FileNotFoundError). The tag's copy of the snapshot is used instead."""
    from table_engine.store.branches import BranchManager

    table.create_tag("t0", 1)
    real = BranchManager._copy
    expired: list[str] = []

    def expiry_in_between(self: BranchManager, src: str, dst: str) -> None:
        if src.endswith("/snapshot/snapshot-1") and not expired:  # an expiry removes it right before the copy
            expired.append(src)
            self.file_io.delete(src)
        real(self, src, dst)

    monkeypatch.setattr(BranchManager, "_copy", expiry_in_between)
    table.create_branch("b", tag="t0")
    assert expired
    branch = catalog.get_table("db.t$branch_b")
    assert branch.read().num_rows == table.read(tag="t0").num_rows
