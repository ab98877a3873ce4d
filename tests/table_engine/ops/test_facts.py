"""The facts a write reports (``write_facts``): a write on a table whose writer compacts right after its data
commit (a ``lookup`` changelog producer) reports its data commit, APPEND, with the changelog of both; the walk back
stops at that data commit, so an earlier write is never counted with it."""

from __future__ import annotations

import pathlib

import pyarrow as pa

from table_engine import Catalog
from table_engine.ops.facts import commit_facts, write_facts

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64())])


def test_a_write_and_the_compaction_its_writer_commits_after_it_are_one_write(tmp_path: pathlib.Path) -> None:
    t = Catalog(str(tmp_path)).create_table("db.t", SCHEMA, primary_keys=["k"], options={
        "bucket": "1", "changelog-producer": "lookup", "merge-engine": "aggregation",
        "fields.v.aggregate-function": "sum"})
    t.write(pa.table({"k": [1, 2], "v": [1, 2]}))
    t.write(pa.table({"k": [1], "v": [5]}))
    kinds = [str(s.commit_kind) for s in t.snapshots()]
    assert kinds == ["APPEND", "COMPACT", "APPEND", "COMPACT"]
    assert commit_facts(t, 4)["commit_kind"] == "COMPACT"  # the last snapshot alone: what events said before
    facts = write_facts(t, 4)
    assert (facts["commit_kind"], facts["added_rows"], facts["snapshot_ids"], facts["compacted"]) == (
        "APPEND", 1, [3, 4], True)
    assert facts["changelog_records"] == sum(t.snapshot(i).changelog_record_count or 0 for i in (3, 4))
    assert write_facts(t, 3) == commit_facts(t, 3)  # a data commit alone
    assert write_facts(t, None) == {}


def test_a_plain_write_is_its_own_commit(tmp_path: pathlib.Path) -> None:
    t = Catalog(str(tmp_path)).create_table("db.a", SCHEMA)
    t.write(pa.table({"k": [1], "v": [1]}))
    assert write_facts(t, 1) == commit_facts(t, 1)
