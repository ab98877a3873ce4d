"""Snapshot ``properties`` (Paimon 1.2) and system-table time travel with both judges.

pypaimon 2.1.0 writes snapshots with properties, the engine reads them and writes its own, pypaimon reads those back.
Paimon Java 1.0 (whose Snapshot class predates the field and ignores it) reads and writes a table whose snapshots
carry properties, and its ``t$files`` with ``scan.snapshot-id`` / ``scan.tag-name`` lists the files the engine's
``copy`` of ``t$files`` lists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient
from tests.interop.paimon_java import PaimonJavaClient, decode_rows

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
RUN = {"airflow.dag_id": "etl", "airflow.run_id": "manual__1"}


def batch(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def model(*batches: pa.Table) -> list[tuple[object, ...]]:
    rows: dict[object, tuple[object, ...]] = {}
    for b in batches:
        rows.update({r["id"]: (r["id"], r["v"]) for r in b.to_pylist()})
    return sorted(rows.values())


def _sorted(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in t.select(SCHEMA.names).to_pylist())


def test_pypaimon_and_engine_exchange_snapshot_properties(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    b1, b2, b3 = batch([1, 2, 3], "a"), batch([2, 4], "b"), batch([3, 5], "c")
    ids = pypaimon.write(warehouse, "db.t", SCHEMA, ["id"], [], {"bucket": "1"}, [b1, b2],
                         properties=[{"writer": "pypaimon", "batch": "1"}, None])
    t = Catalog(str(warehouse)).get_table("db.t")
    assert t.snapshot(ids[0]).properties == {"writer": "pypaimon", "batch": "1"}
    assert t.snapshot(ids[1]).properties is None
    s3 = t.write(b3, properties=RUN)
    s4 = t.maintenance.compact(full=True, properties={"job": "compact"})
    assert s3 is not None and s4 is not None
    seen = {s["id"]: s["properties"] for s in pypaimon.snapshots(warehouse, "db.t")["snapshots"]}
    assert seen[ids[0]] == {"writer": "pypaimon", "batch": "1"} and seen[ids[1]] is None
    assert seen[s3] == RUN and seen[s4] == {"job": "compact"}
    assert _sorted(pypaimon.read(warehouse, "db.t")) == model(b1, b2, b3) == _sorted(t.read())


def test_paimon_java_on_a_table_with_snapshot_properties_and_files_time_travel(paimon_java: PaimonJavaClient,
                                                                               tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    t = Catalog(str(warehouse)).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    b1, b2, b3 = batch([1, 2, 3], "a"), batch([2, 4], "b"), batch([3, 5], "c")
    s1 = t.write(b1, properties=RUN)
    t.create_tag("first", snapshot_id=s1, creator="airflow:d:t:run")  # the creator joins RUN in the tag file
    t.write(b2, properties={"n": "2"})
    files = Catalog(str(warehouse)).get_table("db.t$files")
    engine_views = {"snapshot": files.copy({"scan.snapshot-id": str(s1)}).read(),
                    "tag": files.copy({"scan.tag-name": "first"}).read(), "latest": files.read()}
    jobs = [paimon_java.read_job(warehouse, "db.t"),
            paimon_java.read_job(warehouse, "db.t$files", {"scan.snapshot-id": str(s1)}),
            paimon_java.read_job(warehouse, "db.t$files", {"scan.tag-name": "first"}),
            paimon_java.read_job(warehouse, "db.t$files"),
            paimon_java.write_job(warehouse, "db.t", [(b3, None)])]
    jobs.append(paimon_java.read_job(warehouse, "db.t"))
    paimon_java.run_checked(jobs)
    assert _sorted(decode_rows(Path(jobs[0]["out"]), SCHEMA).table) == model(b1, b2)
    for job, view in zip(jobs[1:4], ("snapshot", "tag", "latest"), strict=True):
        java = _java_files(Path(job["out"]))
        engine = sorted(zip([p.rsplit("/", 1)[-1] for p in engine_views[view].column("file_path").to_pylist()],
                            engine_views[view].column("record_count").to_pylist(), strict=True))
        assert java == engine, view
    assert _java_files(Path(jobs[1]["out"])) != _java_files(Path(jobs[3]["out"]))
    assert _sorted(decode_rows(Path(jobs[5]["out"]), SCHEMA).table) == model(b1, b2, b3)
    t = Catalog(str(warehouse)).get_table("db.t")
    assert _sorted(t.read()) == model(b1, b2, b3)
    assert t.snapshot(s1).properties == RUN and t.tag_snapshot("first").properties == RUN
    assert t.tags()[0].creator == "airflow:d:t:run"
    latest = t.latest_snapshot()
    assert latest is not None and latest.properties is None  # Java 1.0 writes no properties


def _java_files(path: Path) -> list[tuple[str, int]]:
    """(file name, record_count) of each row of a Java read of ``t$files`` (columns located by name; Java 1.0's
    ``file_path`` is the bare file name)."""
    with open(path, encoding="utf-8") as source:
        names = [f["name"] for f in json.loads(source.readline())["fields"]]
        rows = [json.loads(line) for line in source if line.strip()]
    at_path, at_count = names.index("file_path") + 1, names.index("record_count") + 1
    return sorted((r[at_path].rsplit("/", 1)[-1], int(r[at_count])) for r in rows)


def test_run_identity_written_by_commands_is_read_by_both_judges(pypaimon: PypaimonClient,
                                                                 paimon_java: PaimonJavaClient, tmp_path: Path) -> None:
    """Issue 27: the run identity an operator's command writes (``--snapshot-property``, the ``airflow.*`` keys of
    :mod:`table_engine.run_identity`) is what pypaimon 2.1.0 reads as ``Snapshot.properties``; Paimon Java 1.0 reads
    and writes such a table, and the engine tells the runs' snapshots from Java's."""
    from table_engine.ops import Compact, Write
    from table_engine.ops.run import run_command
    from table_engine.run_identity import RunIdentity

    warehouse = tmp_path / "warehouse"
    t = Catalog(str(warehouse)).create_table("db.r", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    b1, b2, b3 = batch([1, 2, 3], "a"), batch([2, 4], "b"), batch([3, 5], "c")
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(b1, src / "a.parquet")
    load = RunIdentity("etl", "scheduled__2026-11-27T00:00:00+00:00", "load", map_index=1, try_number=2)
    upkeep = RunIdentity("upkeep", "manual__1", "compact")
    s1 = run_command(Write(warehouse=str(warehouse), table="db.r", source=str(src), commit_user="airflow:etl:load",
                           snapshot_properties=load.to_properties()))["snapshot_id"]
    t.write(b2)
    s3 = run_command(Compact(warehouse=str(warehouse), table="db.r", full=True,
                             snapshot_properties={**upkeep.to_properties(), "team": "lake"}))["snapshot_id"]
    seen = {s["id"]: s["properties"] for s in pypaimon.snapshots(warehouse, "db.r")["snapshots"]}
    assert seen == {s1: load.to_properties(), 2: None, s3: {**upkeep.to_properties(), "team": "lake"}}
    assert RunIdentity.of(seen[s1]) == load and RunIdentity.of(seen[s3]) == upkeep
    jobs = [paimon_java.write_job(warehouse, "db.r", [(b3, None)])]
    jobs.append(paimon_java.read_job(warehouse, "db.r"))
    paimon_java.run_checked(jobs)
    assert _sorted(decode_rows(Path(jobs[1]["out"]), SCHEMA).table) == model(b1, b2, b3)
    t = Catalog(str(warehouse)).get_table("db.r")
    assert t.latest_snapshot_id() == s3 + 1 and t.metadata().run_of(s3 + 1) is None  # Java 1.0 writes none
    assert [s.id for s in t.metadata().snapshots_of_run(load.run_id)] == [s1]
    assert t.metadata().run_of(s3) == upkeep and _sorted(t.read()) == model(b1, b2, b3)
