"""The ``table-engine`` console script: the application's commands run locally, without Spark."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import build_parser, main, parse_time_millis
from tests.spark.conftest import run_cli


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return code, json.loads(lines[-1])


@pytest.fixture
def source(tmp_path: Path) -> str:
    d = tmp_path / "src"
    d.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()), "v": [f"v{i}" for i in range(100)],
                             "dt": ["2020-01-01" if i % 2 else "2099-01-01" for i in range(100)]}), d / "a.parquet")
    return str(d)


def test_every_command_locally(capsys, warehouse, source, tmp_path):
    base = ["--warehouse", warehouse, "--table", "db.t"]
    code, out = cli(capsys, "write", *base, "--source", source)
    assert code == 1 and out["status"] == "error" and "--create-if-missing" in out["error"]
    code, out = cli(capsys, "write", *base, "--source", source, "--create-if-missing", "--primary-key", "id,dt",
                    "--partition-key", "dt", "--option", "bucket=2", "--commit-user", "u1")
    assert code == 0 and out["snapshot_id"] == 1 and out["rows"] == 100 and out["created"] is True
    code, out = cli(capsys, "write", *base, "--source", source, "--commit-user", "u1")
    assert out["already_committed"] is True and out["snapshot_id"] == 1
    code, out = cli(capsys, "write", *base, "--source", source, "--mode", "overwrite")
    assert out["snapshot_id"] == 2
    table = Catalog(warehouse).get_table("db.t")
    assert table.latest_snapshot().commit_kind == "OVERWRITE" and table.read().num_rows == 100

    assert cli(capsys, "compact", *base, "--full", "--partition", "dt=2020-01-01")[1]["snapshot_id"] == 3
    assert cli(capsys, "create-tag", *base, "--tag", "t3")[1]["snapshot_id"] == 3
    code, out = cli(capsys, "consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp_path / "out"),
                    "--output-format", "json")
    assert out["rows"] == 100 and out["to_snapshot"] == 3      # OVERWRITE and COMPACT snapshots hold no changes
    assert len(Path(out["output"], "part-0.json").read_text().splitlines()) == 100
    assert table.consumers() == {"c": 4}
    table.write(pa.table({"id": [1000], "v": ["x"], "dt": ["2099-01-01"]}))
    code, out = cli(capsys, "consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp_path / "out"))
    assert (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (4, 4, 1)
    assert cli(capsys, "rollback", *base, "--snapshot", "3")[1]["removed_snapshots"] == [4]
    out = cli(capsys, "expire-partitions", *base, "--expiration-time", "1 d", "--timestamp-formatter",
              "yyyy-MM-dd")[1]
    assert out["expired_partitions"] == [{"dt": "2020-01-01"}] and out["snapshot_id"] == 4
    table.reset_consumer("c", None)
    out = cli(capsys, "expire-snapshots", *base, "--retain-max", "1", "--retain-min", "1")[1]
    assert out["expired_snapshots"] == [1, 2, 3] and out["earliest_snapshot_id"] == 4
    assert cli(capsys, "expire-tags", *base, "--older-than", str(int(time.time() * 1000)))[1]["expired_tags"] == ["t3"]
    stray = next(Path(table.path).glob("dt=*/bucket-*")) / "data-stray.parquet"
    stray.write_bytes(b"x")
    os.utime(stray, (time.time() - 7200,) * 2)
    assert cli(capsys, "remove-orphan-files", *base, "--older-than", "1 h ago")[1]["orphan_files"] >= 1
    assert not stray.exists() and table.read().num_rows == 50


def test_sql_needs_spark_and_arguments_are_checked(capsys, warehouse):
    code, out = cli(capsys, "write", "--warehouse", warehouse, "--table", "db.t", "--sql", "SELECT 1")
    assert code == 1 and "spark-submit" in out["error"]
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["rollback", "--warehouse", warehouse, "--table", "db.t"])
    assert exc.value.code == 2


def test_time_arguments():
    assert parse_time_millis("1700000000000") == 1700000000000
    assert parse_time_millis("2024-01-01T00:00:00") == 1704067200000
    assert parse_time_millis("2024-01-01T02:00:00+02:00") == 1704067200000
    assert parse_time_millis("2 h ago", now_millis=10_000_000) == 10_000_000 - 7_200_000


def test_console_script(warehouse, source):
    res = run_cli(["write", "--warehouse", warehouse, "--table", "db.c", "--source", source, "--create-if-missing"])
    assert res.returncode == 0 and res.ok()["rows"] == 100
    res = run_cli(["rollback", "--warehouse", warehouse, "--table", "db.c", "--snapshot", "7"])
    assert res.returncode == 1 and res.result is not None and res.result["status"] == "error"


def test_consume_changelog_into_a_table_is_exactly_once_across_a_stop_before_the_consumer_advanced(capsys,
                                                                                                    warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog = Catalog(warehouse)
    dwd = catalog.create_table("db.dwd", schema, primary_keys=["id"], options={"bucket": "2"})
    dws = catalog.create_table("db.dws", schema)                                  # append: a repeat would show
    dwd.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    base = ["--warehouse", warehouse, "--table", "db.dwd", "--consumer-id", "agg", "--target-table", "db.dws"]
    out = cli(capsys, "consume-changelog", *base)[1]
    assert (out["rows"], out["target_snapshot_id"]) == (3, 1) and dwd.consumers() == {"agg": 2}
    assert dws.latest_snapshot().commit_identifier == 1                          # the last source snapshot applied

    dwd.reset_consumer("agg", 1)                     # the run stopped after the downstream commit, before advancing
    dwd.write(pa.table({"id": [4], "v": ["d"]}, schema=schema))
    out = cli(capsys, "consume-changelog", *base)[1]
    assert (out["from_snapshot"], out["to_snapshot"], out["rows"]) == (2, 2, 1)   # snapshot 1 is not applied again
    assert sorted(dws.read()["id"].to_pylist()) == [1, 2, 3, 4] and dwd.consumers() == {"agg": 3}
    assert [s.commit_identifier for s in dws.snapshots()] == [1, 2]
