"""The engine functions of the commands: ``commit.user-prefix`` applies to every commit a command makes without a
``--commit-user`` (the one commit-user rule), and a given commit user wins."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.core_options import CommitUser, CoreOptions, default_commit_user
from table_engine.ops import Compact, ExpirePartitions, Write
from table_engine.ops.run import run_command
from table_engine.schema_change import SetOption

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])


def test_default_commit_user_takes_the_prefix() -> None:
    user = default_commit_user(CoreOptions({"commit.user-prefix": "etl"}))
    # Paimon's createCommitUser: prefix_UUID, generated now
    assert user.name.startswith("etl_") and len(user.name) == len("etl_") + 36 and user.generated
    a, b = default_commit_user(CoreOptions({})), default_commit_user(CoreOptions({}))
    assert a.name != b.name and len(a.name) == 36
    # a user the caller names (a job's, an Airflow task instance's) is used as is, the prefix notwithstanding
    named = default_commit_user(CoreOptions({"commit.user-prefix": "etl"}), "airflow:d:t:r")
    assert named == CommitUser("airflow:d:t:r") and not named.generated and named.since_millis is None
    assert default_commit_user(CoreOptions({}), "").name.count("-") == 4  # empty: none named


def test_commands_commit_as_commit_user_prefix_says(warehouse: str, tmp_path: pathlib.Path) -> None:
    table = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "1", "commit.user-prefix": "etl-"})
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "dt": ["2020-01-01", "2020-01-02"]}, schema=SCHEMA), src / "a.parquet")
    assert main(["write", "--warehouse", warehouse, "--table", "db.t", "--source", str(src)]) == 0
    assert table.snapshot(1).commit_user.startswith("etl-")
    run_command(Write(warehouse=warehouse, table="db.t", source=str(src)))
    assert table.snapshot(2).commit_user.startswith("etl-")
    assert run_command(Compact(warehouse=warehouse, table="db.t", full=True))["snapshot_id"] == 3
    assert table.snapshot(3).commit_user.startswith("etl-")
    out = run_command(ExpirePartitions(warehouse=warehouse, table="db.t", expiration_time_millis=86_400_000,
                                       timestamp_formatter="yyyy-MM-dd"))
    assert out["snapshot_id"] == 4 and table.snapshot(4).commit_user.startswith("etl-")
    run_command(Write(warehouse=warehouse, table="db.t", source=str(src), commit_user="job-1"))
    assert table.snapshot(5).commit_user == "job-1"


def test_delete_tag_drop_partitions_and_rewrite_file_index(warehouse: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The Table's delete_tag, drop_partitions and rewrite_file_index as commands (CLI grammar)."""
    table = Catalog(warehouse).create_table("db.p", SCHEMA, partition_keys=["dt"], options={"bucket": "-1"})
    table.write(pa.table({"id": [1, 2, 3], "dt": ["a", "b", "c"]}, schema=SCHEMA))
    table.create_tag("t1", 1)
    base = ["--warehouse", warehouse, "--table", "db.p"]

    def result(argv: list[str], code: int = 0) -> dict[str, Any]:
        assert main(argv) == code
        return dict(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))

    assert result(["delete-tag", *base, "--tag", "t1"])["deleted_tags"] == ["t1"]
    assert "nope" in result(["delete-tag", *base, "--tag", "nope"], 1)["error"]
    assert result(["delete-tag", *base, "--tag", "nope", "--ignore-if-not-exists"])["deleted_tags"] == []
    assert result(["drop-partitions", *base, "--partition", "dt=a", "--partition", "dt=b"])["snapshot_id"] == 2
    assert table.read().column("dt").to_pylist() == ["c"]
    assert "dt" in result(["drop-partitions", *base, "--partition", "dt=zz"], 1)["error"]
    assert table.latest_snapshot_id() == 2
    with pytest.raises(SystemExit) as e:
        main(["drop-partitions", *base])  # at least one --partition
    assert e.value.code == 2
    table.alter(SetOption("file-index.bloom-filter.columns", "id"))
    out = result(["rewrite-file-index", *base, "--partition", "dt=c", "--commit-user", "ix"])
    assert out["snapshot_id"] == 3 and table.snapshot(3).commit_user == "ix"


def test_commit_facts_tell_data_from_upkeep(warehouse: str, tmp_path: pathlib.Path) -> None:
    """The ``commit`` field of the results of committing commands: what a consumer (the Airflow provider's Asset
    events) needs to tell a data change from upkeep, docs/adr/0021."""
    from table_engine.ops import ConsumeChangelog, Rollback

    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "dt": ["a", "a", "b"]}, schema=SCHEMA), src / "a.parquet")
    plain = Catalog(warehouse).create_table("db.plain", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "1"})
    out = run_command(Write(warehouse=warehouse, table="db.plain", source=str(src)))
    assert out["commit"].pop("added_bytes") > 0
    metrics = out["commit"].pop("metrics")  # Paimon's commit metrics of the same commit (docs/metrics.md)
    assert out["commit"] == {"commit_kind": "APPEND", "added_rows": 3, "deleted_rows": 0, "added_files": 2,
                             "changelog_records": 0, "partitions": ["dt=a", "dt=b"]}
    assert (metrics["lastTableFilesAdded"], metrics["lastTableFilesAppended"], metrics["lastDeltaRecordsAppended"],
            metrics["lastPartitionsWritten"], metrics["lastGeneratedSnapshots"]) == (2, 2, 3, 2, 1)
    run_command(Write(warehouse=warehouse, table="db.plain", source=str(src)))
    # a compaction without changelog: files rewritten, no changelog, nothing published
    facts = run_command(Compact(warehouse=warehouse, table="db.plain", full=True))["commit"]
    assert facts["commit_kind"] == "COMPACT" and facts["changelog_records"] == 0 and facts["published_rows"] == 0
    assert facts["deleted_rows"] == 6 and facts["added_rows"] == 3
    compacted = facts["metrics"]
    assert compacted["lastTableFilesDeleted"] == 4 and compacted["lastTableFilesCommitCompacted"] == 4 + \
        compacted["lastTableFilesAdded"] and compacted["lastTableFilesAppended"] == 0
    assert compacted["lastCompactionInputFileSize"] > 0 and compacted["lastCompactionOutputFileSize"] > 0
    assert run_command(Compact(warehouse=warehouse, table="db.plain", full=True))["commit"] == {}  # nothing to do
    # a rollback to the latest removes nothing; one to snapshot 1 removes two
    latest = plain.latest_snapshot_id()
    assert run_command(Rollback(warehouse=warehouse, table="db.plain", snapshot=latest))["commit"] == {
        "commit_kind": "ROLLBACK", "removed_snapshots": 0}
    assert run_command(Rollback(warehouse=warehouse, table="db.plain", snapshot=1))["commit"] == {
        "commit_kind": "ROLLBACK", "removed_snapshots": 2}

    # a lookup changelog: the compaction's changelog records are data
    Catalog(warehouse).create_table("db.log", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                    options={"bucket": "1", "changelog-producer": "lookup", "write-only": "true"})
    run_command(Write(warehouse=warehouse, table="db.log", source=str(src)))
    facts = run_command(Compact(warehouse=warehouse, table="db.log", full=True))["commit"]
    assert facts["commit_kind"] == "COMPACT" and facts["changelog_records"] == 3
    # the changelog applied to a target table: its commit's facts
    Catalog(warehouse).create_table("db.target", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                    options={"bucket": "1"})
    out = run_command(ConsumeChangelog(warehouse=warehouse, table="db.log", consumer_id="c", target_table="db.target"))
    assert out["commit"]["added_rows"] == 3 and out["commit"]["partitions"] == ["dt=a", "dt=b"]

    # a postpone bucket table: the compaction publishes the postponed rows
    Catalog(warehouse).create_table("db.postponed", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                    options={"bucket": "-2"})
    run_command(Write(warehouse=warehouse, table="db.postponed", source=str(src)))
    facts = run_command(Compact(warehouse=warehouse, table="db.postponed"))["commit"]
    assert facts["commit_kind"] == "COMPACT" and facts["published_rows"] == 3
