"""Every subcommand of ``table_engine/spark/app.py`` through real ``spark-submit --master local[2]``.

The tests run in order on one warehouse (module scope): each job leaves the table in the state the next needs.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.ops import Compact
from tests.spark.conftest import spark_submit

pytestmark = pytest.mark.spark

TODAY = dt.date.today().isoformat()
DAYS = ["2020-01-01", "2020-01-02", TODAY]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("app")
    source = root / "source"
    source.mkdir()
    n = 3000
    pq.write_table(pa.table({"id": pa.array(range(n), pa.int64()), "amount": [i * 0.5 for i in range(n)],
                             "dt": [DAYS[i % 3] for i in range(n)]}), source / "part-0.parquet")
    return {"warehouse": str(root / "warehouse"), "source": str(source), "root": root}


def submit(env: dict[str, Any], *args: str, table: str = "db.orders") -> dict[str, Any]:
    return spark_submit([args[0], "--warehouse", env["warehouse"], "--table", table, *args[1:]]).ok()


def orders(env: dict[str, Any]) -> Any:
    return Catalog(env["warehouse"]).get_table("db.orders")


def test_write_from_a_source_creating_the_table_and_from_sql(env):
    out = submit(env, "write", "--source", env["source"], "--create-if-missing", "--primary-key", "id,dt",
                 "--partition-key", "dt", "--option", "bucket=-1", "--option", "dynamic-bucket.target-row-num=200")
    assert out["snapshot_id"] == 1 and out["rows"] == 3000 and out["created"] is True and out["files"] > 0
    table = orders(env)
    assert table.read().num_rows == 3000 and table.options.bucket() == -1

    sql = (f"SELECT id, amount * 2 AS amount, dt FROM parquet.`{env['source']}` WHERE id % 10 = 0 "
           "UNION ALL SELECT id + 3000, 1.0, dt FROM parquet.`" + env["source"] + "` WHERE id < 300")
    out = submit(env, "write", "--sql", sql, "--commit-user", "job-7", "--parallelism", "3")
    assert out["snapshot_id"] == 2 and out["rows"] == 600 and out["already_committed"] is False
    rows = table.read()
    assert rows.num_rows == 3300 and len(set(rows["id"].to_pylist())) == 3300
    assert table.latest_snapshot_id() == 2


def test_compact(env):
    """Sent as the provider sends a command: one JSON object (``app.py --command-json '<json>'``)."""
    table = orders(env)
    before = table.read().sort_by("id")
    cmd = Compact(warehouse=env["warehouse"], table="db.orders", full=True)
    out = spark_submit(["--command-json", cmd.to_json()]).ok()
    assert out["snapshot_id"] == 3 and out["files_before"] > 0 and out["files_after"] > 0
    assert table.latest_snapshot().commit_kind == "COMPACT"
    assert table.read().sort_by("id").equals(before)


def test_create_tag_and_rollback(env):
    out = submit(env, "create-tag", "--tag", "after-compact")
    assert out == {**out, "tag": "after-compact", "snapshot_id": 3}
    table = orders(env)
    table.write(pa.table({"id": [9999], "amount": [0.0], "dt": [TODAY]}))             # snapshot 4, rolled back
    out = submit(env, "rollback", "--tag", "after-compact")
    assert out["snapshot_id"] == 3 and out["removed_snapshots"] == [4]
    assert orders(env).latest_snapshot_id() == 3 and orders(env).read().num_rows == 3300


def test_consume_changelog_to_files_and_to_a_table(env):
    out = submit(env, "consume-changelog", "--consumer-id", "audit", "--output", str(env["root"] / "changes"))
    # every change as written: 3000 inserts, then 600 (300 of them new values of existing keys); COMPACT: none
    assert out["from_snapshot"] == 1 and out["to_snapshot"] == 3 and out["rows"] == 3600
    assert orders(env).consumers()["audit"] == 4
    changes = pq.read_table(out["output"])
    assert changes.num_rows == 3600 and set(changes["rowkind"].to_pylist()) == {"+I"}

    Catalog(env["warehouse"]).create_table("db.mirror", orders(env).arrow_schema, primary_keys=["id", "dt"],
                                           partition_keys=["dt"], options={"bucket": "2"})
    out = submit(env, "consume-changelog", "--consumer-id", "mirror", "--target-table", "db.mirror")
    assert out["target_snapshot_id"] == 1
    mirror = Catalog(env["warehouse"]).get_table("db.mirror")
    assert mirror.read().sort_by("id").equals(orders(env).read().sort_by("id"))      # changes replayed in order
    assert mirror.latest_snapshot().commit_identifier == 3                          # the source snapshot applied


def test_expire_snapshots_and_tags(env):
    table = orders(env)
    for i in range(3):
        table.write(pa.table({"id": [5000 + i], "amount": [1.0], "dt": [TODAY]}))       # snapshots 4..6
    table.maintenance.reset_consumer("audit", None)
    table.maintenance.reset_consumer("mirror", None)
    out = submit(env, "expire-snapshots", "--retain-max", "2", "--retain-min", "1")
    assert out["expired_snapshots"] == [1, 2, 3, 4] and out["earliest_snapshot_id"] == 5
    assert orders(env).read().num_rows == 3303
    future = str(int(time.time() * 1000) + 86_400_000)
    out = submit(env, "expire-tags", "--older-than", future)
    assert out["expired_tags"] == ["after-compact"]


def test_expire_partitions(env):
    out = submit(env, "expire-partitions", "--expiration-time", "7 d", "--timestamp-formatter", "yyyy-MM-dd")
    assert sorted(p["dt"] for p in out["expired_partitions"]) == ["2020-01-01", "2020-01-02"]
    assert set(orders(env).read()["dt"].to_pylist()) == {TODAY}


def test_remove_orphan_files(env):
    table = orders(env)
    bucket = next(Path(table.path).glob("dt=*/bucket-*"))
    orphan = bucket / "data-orphan-0.parquet"
    orphan.write_bytes(b"left behind by a killed task")
    two_hours_ago = time.time() - 7200
    os.utime(orphan, (two_hours_ago, two_hours_ago))
    out = submit(env, "remove-orphan-files", "--older-than", "1 h ago")
    assert out["orphan_files"] == 1 and not orphan.exists()
    assert orders(env).read().num_rows > 0


def test_a_failing_job_exits_non_zero_with_a_json_error(env):
    res = spark_submit(["compact", "--warehouse", env["warehouse"], "--table", "db.missing"])
    assert res.returncode == 1
    assert res.result is not None and res.result["status"] == "error" and "db.missing" in res.result["error"]
    output = (res.stdout + res.stderr).splitlines()  # the one line, no traceback without --verbose
    assert any(line.startswith("error: table 'db.missing' does not exist") for line in output), res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_compact_and_rescale_a_postpone_bucket_table(env):
    """The Spark job ``compact`` publishes the postponed rows of a postpone bucket table (bucket = -2); the CLI's
    ``rescale`` then changes the partition's bucket count."""
    from tests.spark.conftest import run_cli

    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
    table = Catalog(env["warehouse"]).create_table("db.postponed", schema, primary_keys=["dt", "id"],
                                                   partition_keys=["dt"], options={"bucket": "-2"})
    table.write(pa.table({"dt": ["a"] * 50, "id": list(range(50)), "v": list(range(50))}, schema=schema))
    assert table.read().num_rows == 0
    out = submit(env, "compact", table="db.postponed")
    assert out["snapshot_id"] == 2 and table.latest_snapshot().commit_kind == "COMPACT"
    assert table.read().num_rows == 50
    res = run_cli(["rescale", "--warehouse", env["warehouse"], "--table", "db.postponed", "--bucket-num", "3",
                   "--partition", "dt=a"]).ok()
    assert res["snapshot_id"] == 3 and table.latest_snapshot().commit_kind == "OVERWRITE"
    assert sorted(f["bucket"] for f in Catalog(env["warehouse"]).get_table("db.postponed$files").read()
                  .select(["bucket"]).to_pylist()) == [0, 1, 2]
    assert table.read().sort_by("id")["v"].to_pylist() == list(range(50))
