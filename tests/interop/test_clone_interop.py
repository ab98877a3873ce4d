"""Clone judged by pypaimon 2.1.0 and Paimon Java 1.0: a primary-key table with several snapshots (compacted) and a
tag, cloned at the tag, then incrementally at its latest snapshot, reads the same through both as the source does
through the engine."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.ops import Clone
from table_engine.ops.run import run_command
from tests.interop.conftest import PypaimonClient
from tests.interop.paimon_java import PaimonJavaClient, decode_rows

pytestmark = pytest.mark.interop

M = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
               pa.field("v", pa.string())])


def canon(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in t.select(M.names).to_pylist())


def test_pypaimon_and_java_read_the_clone(tmp_path: Path, pypaimon: PypaimonClient,
                                          paimon_java: PaimonJavaClient) -> None:
    src_wh, dst_wh = tmp_path / "src", tmp_path / "dst"
    t = Catalog(str(src_wh)).create_table("db.t", M, primary_keys=["dt", "id"], partition_keys=["dt"],
                                          options={"bucket": "2"})
    for i in range(4):
        t.write(pa.table({"dt": [f"d{i % 2}"] * 3, "id": [i, i + 1, i + 2], "v": [f"v{i}"] * 3}, schema=M))
        if i == 1:
            t.create_tag("t1")
    t.maintenance.compact(full=True)
    t.write(pa.table({"dt": ["d0"], "id": [100], "v": ["last"]}, schema=M))

    run_command(Clone(warehouse=str(src_wh), table="db.t", target_warehouse=str(dst_wh), tag="t1"))
    at_tag = canon(t.read(tag="t1"))
    assert canon(pypaimon.read(dst_wh, "db.t")) == at_tag
    first = run_command(Clone(warehouse=str(src_wh), table="db.t", target_warehouse=str(dst_wh)))
    assert 0 < first["files_copied"] < first["tables"][0]["files_total"] + 1
    latest = canon(t.read())
    copy = Catalog(str(dst_wh)).get_table("db.t")
    assert canon(copy.read()) == latest
    assert canon(pypaimon.read(dst_wh, "db.t")) == latest
    assert canon(pypaimon.read(dst_wh, "db.t", snapshot=1)) == at_tag  # the first clone stays readable
    job = paimon_java.read_job(dst_wh, "db.t")
    paimon_java.run_checked([job])
    assert canon(decode_rows(Path(job["out"]), M).table) == latest


def test_pypaimon_and_java_read_a_cloned_table_with_deletion_vectors(tmp_path: Path, pypaimon: PypaimonClient,
                                                                   paimon_java: PaimonJavaClient) -> None:
    src_wh, dst_wh = tmp_path / "src", tmp_path / "dst"
    t = Catalog(str(src_wh)).create_table("db.dv", M, primary_keys=["dt", "id"], partition_keys=["dt"],
                                          options={"bucket": "1", "deletion-vectors.enabled": "true"})
    t.write(pa.table({"dt": ["d0"] * 6, "id": list(range(6)), "v": ["a"] * 6}, schema=M))
    t.maintenance.compact(full=True)
    t.write(pa.table({"dt": ["d0"] * 2, "id": [1, 4], "v": ["b"] * 2}, schema=M))
    t.maintenance.compact()
    snap = t.latest_snapshot()
    assert snap is not None and t.store.index_entries(snap)  # the vectors are part of what is cloned
    run_command(Clone(warehouse=str(src_wh), table="db.dv", target_warehouse=str(dst_wh)))
    expected = canon(t.read())
    assert canon(pypaimon.read(dst_wh, "db.dv")) == expected
    job = paimon_java.read_job(dst_wh, "db.dv")
    paimon_java.run_checked([job])
    assert canon(decode_rows(Path(job["out"]), M).table) == expected
