"""The application on a real standalone Spark cluster on 127.0.0.1: a master and two 1-core workers
(:func:`tests.spark.cluster.standalone_cluster`), stopped by PID at the end."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from tests.spark.cluster import standalone_cluster
from tests.spark.conftest import spark_submit

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:<port>`` (7077 when free) with two 1-core workers."""
    try:
        with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1) as url:
            yield url
    except RuntimeError as e:
        pytest.fail(str(e))


def test_write_and_compaction_jobs_on_a_standalone_cluster(cluster, warehouse, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for part in range(2):
        ids = range(part * 5000, (part + 1) * 5000)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids],
                                 "dt": [f"d{i % 3}" for i in ids]}), source / f"part-{part}.parquet")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                        pa.field("dt", pa.string(), nullable=False)])
    table = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                            options={"bucket": "2"})
    table.write(pq.read_table(source / "part-0.parquet").cast(schema))       # a first level-0 run per bucket
    # both executors registered before the first task is scheduled: the two compaction tasks run one on each
    conf = {"spark.pyspark.python": sys.executable, "spark.executor.memory": "1g", "spark.cores.max": "2",
            "spark.scheduler.minRegisteredResourcesRatio": "1.0"}
    args = ["--warehouse", warehouse, "--table", "db.t"]
    out = spark_submit(["write", *args, "--source", str(source)], master=cluster, conf=conf).ok()
    # the file route (ADR 0036): two runs (one per source file, 2 tasks), each writing every bucket it meets: 2 x 6
    assert out["snapshot_id"] == 2 and out["rows"] == 10000 and out["files"] == 12
    out = spark_submit(["compact", *args, "--full"], master=cluster, conf=conf).ok()
    assert out["snapshot_id"] == 3 and out["files_before"] == 18 and out["files_after"] == 6
    # 6 buckets in 2 tasks (spark.cores.max), one on each worker's executor (host:pid of the executor JVM)
    assert out["spark"]["tasks"] == 2 and len(out["spark"]["executors"]) == 2, out["spark"]
    assert table.latest_snapshot().commit_kind == "COMPACT"
    rows = table.read()
    assert rows.num_rows == 10000 and sorted(rows["id"].to_pylist()) == list(range(10000))
