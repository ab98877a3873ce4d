"""pypaimon 2.1.0 reads our cross-partition upsert tables (primary key without the partition field, bucket -1)
with one row per key, after keys moved between partitions over several commits, for every merge engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update", "aggregation", "first-row"])
def test_pypaimon_reads_one_row_per_key(pypaimon: PypaimonClient, tmp_path: Path, engine: str) -> None:
    warehouse = str(tmp_path / "wh")
    opts = {"merge-engine": engine, "dynamic-bucket.target-row-num": "40"}
    if engine == "aggregation":
        opts["fields.v.aggregate-function"] = "sum"
    t = Catalog(warehouse).create_table("db.xp", SCHEMA, primary_keys=["id"], partition_keys=["dt"], options=opts)
    rng = np.random.default_rng(11)
    for i in range(4):
        ids = rng.choice(150, size=100, replace=False)
        days = rng.choice(DAYS, size=100)
        t.write(pa.table({"dt": days, "id": ids.astype(np.int64), "v": np.full(100, i, np.int64)}, schema=SCHEMA))
    ours = t.read().sort_by("id")
    theirs = pypaimon.read(warehouse, "db.xp").select(SCHEMA.names).sort_by("id")
    assert theirs.num_rows == ours.num_rows == len(set(theirs.column("id").to_pylist()))
    assert theirs.to_pylist() == ours.to_pylist()
