"""Small jobs on the driver (``spark.paimon.driver-job.max-input-size``): which commands qualify, their input size,
and, through real ``spark-submit``, that the driver path leaves the same rows and result fields as the Spark jobs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError
from table_engine.ops import Compact, ConsumeChangelog, Write
from table_engine.spark.jobs import driver_jobs
from tests.spark.conftest import spark_submit

KEY = "spark.paimon.driver-job.max-input-size"


def batch(first: int, n: int = 8) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + n), pa.int64()),
                     "amount": pa.array([float(i) for i in range(n)]),
                     "dt": pa.array(["2026-11-20" if i % 2 else "2026-11-21" for i in range(n)])})


def land(directory: Path, data: pa.Table) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, directory / "part-0.parquet")
    (directory / "_SUCCESS").write_bytes(b"")
    return directory


def test_the_option_is_off_by_default_and_takes_memory_sizes() -> None:
    assert driver_jobs.max_input_size({}) == 0
    assert driver_jobs.max_input_size({KEY: "8 mb"}) == 8 * 1024 * 1024
    assert driver_jobs.max_input_size({KEY: "4096"}) == 4096
    with pytest.raises(OptionError, match=KEY):
        driver_jobs.max_input_size({KEY: "a lot"})
    assert not driver_jobs.runs_on_driver(Compact(warehouse="w", table="db.t"), 0)  # off: nothing is looked at


def test_which_writes_qualify_and_their_input_size(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    source = land(tmp_path / "landing" / "b1", batch(0))
    size = (source / "part-0.parquet").stat().st_size

    def write(**kw: Any) -> Write:
        return Write(**{"warehouse": warehouse, "table": "db.t", "source": str(source), **kw})

    assert driver_jobs.input_size(write()) is None  # the table does not exist (and is not to be created)
    assert driver_jobs.input_size(write(create_if_missing=True)) == size  # created with the schema Spark reads
    stamped = land(tmp_path / "landing" / "ts", pa.table({"id": [1], "at": pa.array([0], pa.timestamp("ms"))}))
    assert driver_jobs.input_size(write(source=str(stamped), create_if_missing=True)) is None  # Spark converts it
    Catalog(warehouse).create_table("db.t", batch(0).schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                    options={"bucket": "2"})
    assert driver_jobs.input_size(write()) == size  # _SUCCESS is not input
    assert driver_jobs.input_size(write(source=str(source / "part-0.parquet"))) == size
    assert driver_jobs.runs_on_driver(write(), size) and not driver_jobs.runs_on_driver(write(), size - 1)
    assert driver_jobs.input_size(write(format="csv")) is None  # Spark's and pyarrow's type inference differ
    assert driver_jobs.input_size(write(mode="overwrite")) is None
    assert driver_jobs.input_size(write(source_options={"mergeSchema": "true"})) is None
    assert driver_jobs.input_size(write(source=None, sql="SELECT 1 AS id")) is None
    assert driver_jobs.input_size(write(source=str(tmp_path / "missing"))) is None
    land(source / "dt=2026-11-22", batch(100))
    assert driver_jobs.input_size(write()) is None  # partition directories: Spark adds their column


def test_compaction_and_changelog_input_sizes(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    catalog = Catalog(warehouse)
    table = catalog.create_table("db.t", batch(0).schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                 options={"bucket": "2"})
    catalog.create_table("db.target", batch(0).schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                         options={"bucket": "2"})
    compact = Compact(warehouse=warehouse, table="db.t", full=True)
    consume = ConsumeChangelog(warehouse=warehouse, table="db.t", consumer_id="c", target_table="db.target")
    assert driver_jobs.input_size(compact) == 0 and driver_jobs.input_size(consume) == 0  # empty table
    table.write(batch(0))
    table.write(batch(4))
    size = driver_jobs.input_size(compact)
    assert size is not None and size > 0
    changes = driver_jobs.input_size(consume)
    assert changes is not None and changes > 0
    with_output = ConsumeChangelog(warehouse=warehouse, table="db.t", consumer_id="c", output=str(tmp_path / "out"))
    assert driver_jobs.input_size(with_output) is None  # files out: always a Spark job


def _result(out: dict[str, Any]) -> dict[str, Any]:
    """A job's result without what only one route reports (its time; where a Spark compaction's tasks ran)."""
    return {k: v for k, v in out.items() if k not in ("seconds", "warehouse", "spark")}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_small_jobs_on_the_driver_match_the_spark_jobs(tmp_path: Path) -> None:
    b1 = land(tmp_path / "landing" / "b1", batch(0))
    b2 = land(tmp_path / "landing" / "b2", batch(4))
    results: dict[str, list[dict[str, Any]]] = {}
    logs: dict[str, str] = {}
    for mode, conf in (("spark", {}), ("driver", {KEY: "8mb"})):
        warehouse = str(tmp_path / mode)
        common = ["--warehouse", warehouse]
        steps = [
            ["write", *common, "--table", "db.orders", "--source", str(b1), "--create-if-missing",
             "--primary-key", "id,dt", "--partition-key", "dt", "--option", "bucket=2",
             "--option", "changelog-producer=lookup", "--commit-user", "w1"],
            ["write", *common, "--table", "db.orders", "--source", str(b2), "--commit-user", "w2"],
            ["compact", *common, "--table", "db.orders", "--full"],
            ["consume-changelog", *common, "--table", "db.orders", "--consumer-id", "agg",
             "--target-table", "db.orders_copy"],
        ]
        Catalog(warehouse).create_table("db.orders_copy", batch(0).schema, primary_keys=["id", "dt"],
                                        partition_keys=["dt"], options={"bucket": "2"})
        results[mode] = []
        logs[mode] = ""
        for args in steps:
            sub = spark_submit(args, conf=conf)
            results[mode].append(_result(sub.ok()))
            logs[mode] += sub.stderr + sub.stdout
    assert results["driver"] == results["spark"]
    assert "running on the driver" not in logs["spark"]
    assert logs["driver"].count("running on the driver, not as a Spark job") == 4
    schemas = [Catalog(str(tmp_path / mode)).get_table("db.orders").schema for mode in ("spark", "driver")]
    assert replace(schemas[0], time_millis=0) == replace(schemas[1], time_millis=0)  # the same table was created
    for name in ("db.orders", "db.orders_copy"):
        tables = [Catalog(str(tmp_path / mode)).get_table(name).read().sort_by([("id", "ascending"),
                                                                               ("dt", "ascending")])
                  for mode in ("spark", "driver")]
        assert tables[0].equals(tables[1]) and tables[0].num_rows > 0
