"""The ``paimon`` data source and the Spark application on an S3 warehouse (the session's moto server).

Credentials reach the store once as data source options (Paimon's ``s3.*`` keys, and pypaimon's ``fs.s3.*``
aliases) and once only through the AWS environment of the spark-submit process (the provider's route); a table
opened by the data source carries the driver's environment credentials to executors that have none.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.spark.datasource import options as o
from tests.s3_server import SECRET_KEY, S3Server
from tests.spark.conftest import REPO_ROOT, spark_submit

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
ALIASES = {"s3.endpoint": "fs.s3.endpoint", "s3.access-key": "fs.s3.accessKeyId",
           "s3.secret-key": "fs.s3.accessKeySecret", "s3.region": "fs.s3.region"}


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def schema_file_text(catalog: Catalog, identifier: str) -> str:
    return catalog.file_io.read_bytes(f"{catalog.table_path(identifier)}/schema/schema-0").decode()


@pytest.mark.timeout(600)
def test_batch_write_and_read_of_primary_key_and_append_tables(spark, s3_warehouse, s3_options):
    # primary-key table created by the write, with Paimon's keys; an upsert; read back through the data source
    pk = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, v string")
    (pk.write.format("paimon").mode("append").option("warehouse", s3_warehouse).options(**s3_options)
     .option("primary-key", "id").option("bucket", "2").save("db.users"))
    (spark.createDataFrame([(2, "B"), (4, "d")], "id long, v string").write.format("paimon").mode("append")
     .option("warehouse", s3_warehouse).options(**s3_options).save("db.users"))
    read = spark.read.format("paimon").option("warehouse", s3_warehouse).options(**s3_options).load("db.users")
    assert rows(read) == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert rows(read.where("id > 2")) == [(3, "c"), (4, "d")]

    catalog = Catalog(s3_warehouse, s3_options)
    users = catalog.get_table("db.users")
    assert users.primary_keys == ["id"] and users.latest_snapshot().id == 2
    text = schema_file_text(catalog, "db.users")
    assert "s3." not in text and SECRET_KEY not in text                  # catalog options are not table options

    # append table with pypaimon's aliases (Spark lower-cases the keys), read by its path (s3a:// alias)
    aliased = {ALIASES.get(k, k): v for k, v in s3_options.items()}
    events = spark.createDataFrame([(i, f"e{i}") for i in range(20)], "id long, v string")
    events.write.format("paimon").mode("append").option("warehouse", s3_warehouse).options(**aliased).save("db.events")
    events.write.format("paimon").mode("append").option("warehouse", s3_warehouse).options(**aliased).save("db.events")
    path = catalog.table_path("db.events").replace("s3://", "s3a://", 1)
    read = spark.read.format("paimon").options(**aliased).load(path)
    assert rows(read) == sorted([(i, f"e{i}") for i in range(20)] * 2)
    text = schema_file_text(catalog, "db.events")
    assert "fs.s3" not in text and SECRET_KEY not in text
    assert catalog.get_table("db.events").primary_keys == []


@pytest.mark.timeout(600)
def test_stream_from_one_s3_table_into_another(spark, s3_warehouse, s3_options, tmp_path):
    catalog = Catalog(s3_warehouse, s3_options)
    source = catalog.create_table("db.src", SCHEMA)
    catalog.create_table("db.dst", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    checkpoint = str(tmp_path / "ckpt")

    def run() -> None:
        stream = spark.readStream.format("paimon").option("warehouse", s3_warehouse).options(**s3_options)
        query = (stream.load("db.src").writeStream.format("paimon").option("warehouse", s3_warehouse)
                 .options(**s3_options).option("path", "db.dst").option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
        try:
            query.awaitTermination(300)
        finally:
            query.stop()

    source.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    run()
    source.write(pa.table({"id": [3, 4], "v": ["C", "d"]}, schema=SCHEMA))
    run()
    target = catalog.get_table("db.dst")
    assert sorted(target.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "C"}, {"id": 4, "v": "d"}]
    assert target.latest_snapshot().id == 2                                 # one snapshot per micro-batch


@pytest.mark.timeout(900)
def test_application_on_s3_with_credentials_only_in_the_environment(s3_server: S3Server, s3_warehouse, tmp_path):
    source = tmp_path / "orders.csv"
    source.write_text("id,v\n" + "".join(f"{i},v{i}\n" for i in range(30)))
    env = dict(s3_server.env())                              # no credential in any argv or option
    base = ["--warehouse", s3_warehouse, "--table", "db.orders", "--catalog-option", "s3.path.style.access=true"]
    runs = [spark_submit(["write", *base, "--source", str(source), "--format", "csv", "--create-if-missing",
                          "--primary-key", "id", "--option", "bucket=2", "--commit-user", f"load-{batch}"], env=env)
            for batch in range(2)]                           # a load, then the same keys again (an upsert)
    assert [r.ok()["snapshot_id"] for r in runs] == [1, 2]
    runs.append(spark_submit(["compact", *base, "--full"], env=env))
    assert runs[-1].ok()["snapshot_id"] == 3
    runs.append(spark_submit(["create-tag", *base, "--tag", "compacted"], env=env))
    runs.append(spark_submit(["expire-snapshots", *base, "--retain-max", "1", "--retain-min", "1"], env=env))
    assert all(r.ok() and SECRET_KEY not in r.stdout + r.stderr for r in runs)

    table = Catalog(s3_warehouse, s3_server.options()).get_table("db.orders")
    assert table.latest_snapshot().id == 3 and table.latest_snapshot().commit_kind == "COMPACT"
    assert [s.id for s in table.snapshots()] == [3]
    assert [(t.name, t.snapshot.id) for t in table.tags()] == [("compacted", 3)]
    assert table.read().sort_by("id").to_pylist() == [{"id": i, "v": f"v{i}"} for i in range(30)]

def test_tables_of_the_data_source_carry_the_drivers_environment_credentials(
        s3_server: S3Server, s3_warehouse, s3_options, monkeypatch):
    catalog = Catalog(s3_warehouse, s3_options)
    catalog.create_table("db.t", SCHEMA).write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    location = o.TableLocation.of({"path": "db.t", "warehouse": s3_warehouse, "s3.path.style.access": "true"})
    assert SECRET_KEY not in repr(location)
    table = location.open()
    assert SECRET_KEY not in repr(table.file_io)
    shipped = pickle.dumps(table)

    # an "executor" with no AWS environment at all reads the table with what was shipped
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    clean["PYTHONPATH"] = str(REPO_ROOT)
    script = "import pickle, sys; t = pickle.loads(sys.stdin.buffer.read()); print(t.read().num_rows)"
    proc = subprocess.run([sys.executable, "-c", script], input=shipped, capture_output=True, env=clean,
                          timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.decode().strip() == "2", proc.stderr.decode()[-2000:]

    # options that name credentials win over the environment; a local warehouse captures nothing
    given = o.catalog_options(s3_warehouse, {"fs.s3.accesskeyid": "other", "fs.s3.accesskeysecret": "x"})
    assert given["fs.s3.accessKeyId"] == "other" and "s3.secret-key" not in given
    assert o.catalog_options("/tmp/warehouse", {}) == {}


@pytest.mark.timeout(600)
def test_consume_changelog_job_writes_its_output_to_s3(spark, s3_warehouse, s3_options):
    """Spark's file writers cannot reach s3:// without Hadoop's S3A connector: the job writes the change rows
    through the engine's FileIO, the _SUCCESS object last, and the consumer advances."""
    from table_engine.ops import ConsumeChangelog
    from table_engine.spark.jobs.run import spark_consume_changelog

    cat = Catalog(s3_warehouse, s3_options)
    t = cat.create_table("db.src", pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"],
                         options={"bucket": "1", "changelog-producer": "input"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))
    t.write(pa.table({"id": [2], "v": ["B"]}))
    out = s3_warehouse.rsplit("/", 1)[0] + "/changes"
    cmd = ConsumeChangelog(warehouse=s3_warehouse, table="db.src", consumer_id="c1", output=out,
                           catalog_options=s3_options)
    result = spark_consume_changelog(cmd, spark)
    assert (result["from_snapshot"], result["to_snapshot"], result["rows"]) == (1, 2, 3)
    fio = t.file_io
    assert fio.exists(f"{result['output']}/_SUCCESS")
    import pyarrow.parquet as pq

    got = pq.read_table(fio.open_input(f"{result['output']}/part-0.parquet"))
    assert sorted(zip(got.column("rowkind").to_pylist(), got.column("id").to_pylist(), strict=True)) == [
        ("+I", 1), ("+I", 2), ("+I", 2)]  # changelog-producer input: the rows as written
    assert spark_consume_changelog(cmd, spark)["rows"] == 0  # the consumer moved on
