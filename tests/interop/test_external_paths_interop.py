"""External data paths with pypaimon 2.1.0: pypaimon writes a table whose data files live below external roots
(several commits, updates); the engine reads it, compacts it, expires its snapshots and removes orphans below the
roots; pypaimon reads the result equal to the dict model. And pypaimon reads the engine's own external-path tables."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient
from tests.table_engine.store.test_external_paths import (
    DAY,
    SCHEMA,
    age,
    age_tree,
    assert_nothing_missing,
    batches,
    live_paths,
    model_of,
)

pytestmark = pytest.mark.interop


def _sorted(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in t.select(SCHEMA.names).to_pylist())


def test_pypaimon_external_path_table_maintained_by_the_engine(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    roots = [tmp_path / "ext1", tmp_path / "ext2"]
    options = {"bucket": "2", "data-file.external-paths": ",".join(f"file://{r}" for r in roots),
               "data-file.external-paths.strategy": "round-robin", "snapshot.num-retained.min": "1",
               "snapshot.num-retained.max": "1", "snapshot.time-retained": "1 ms"}
    data = batches(4)
    pypaimon.write(warehouse, "db.t", SCHEMA, ["dt", "id"], ["dt"], options, data[:3])
    t = Catalog(str(warehouse)).get_table("db.t")
    written = live_paths(t)
    assert written and all(any(str(r) in p for r in roots) for p in written)
    assert not any(n.startswith("data-") for _, _, fs in os.walk(t.path) for n in fs)
    assert _sorted(t.read()) == model_of(data[:3])

    t.maintenance.compact(full=True)
    t.write(data[3], maintain=False)
    t.expire_snapshots()
    live = live_paths(t)
    assert all(any(str(r) in p for r in roots) for p in live)
    assert not any(os.path.exists(p.removeprefix("file:").removeprefix("//")) for p in set(written) - set(live))
    assert_nothing_missing(t)
    for root in roots:
        age_tree(root, 2 * DAY)
    age_tree(t.path, 2 * DAY)
    orphan = roots[1] / "dt=a" / "bucket-1" / "data-orphan-0.parquet"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"orphan")
    age([orphan], 2 * DAY)
    assert [p.rsplit("/", 1)[-1] for p in t.maintenance.remove_orphan_files().paths] == [orphan.name]
    assert_nothing_missing(t)

    expected = model_of(data)
    assert _sorted(t.read()) == expected
    assert _sorted(pypaimon.read(warehouse, "db.t")) == expected


def test_pypaimon_reads_the_engine_external_path_tables(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    catalog = Catalog(str(warehouse))
    data = batches(3)
    for name, pk, strategy in (("pk", ["dt", "id"], "round-robin"), ("ap", [], "entropy-inject")):
        root = tmp_path / f"ext-{name}"
        t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=pk, partition_keys=["dt"], options={
            "bucket": "2" if pk else "-1", "data-file.external-paths": f"file://{root}",
            "data-file.external-paths.strategy": strategy})
        for b in data:
            t.write(b)
        t.maintenance.compact(full=True)
        assert all(p.startswith(f"file://{root}/") for p in live_paths(t))
    versions = pypaimon.read_many(warehouse, "db.pk", [{}])
    assert _sorted(versions[0]) == model_of(data)
    appended = sorted(tuple(r.values()) for b in data for r in b.to_pylist())
    assert _sorted(pypaimon.read(warehouse, "db.ap")) == appended
