"""``_SUCCESS`` files judged by Paimon Java: it reads the file the engine's ``mark-partition-done`` writes, marks
another partition (and re-marks ours, keeping its creation time) with its own ``success-file`` action, and the
engine reads those back; Java's bytes are exactly what the engine writes for the same times."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog, clock
from table_engine.format.success_file import SuccessFile, success_file_path
from tests.interop.paimon_java import PaimonJavaClient

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])


def test_success_files_both_ways(tmp_path: Path, paimon_java: PaimonJavaClient,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    wh = tmp_path / "wh"
    table = Catalog(str(wh)).create_table("db.t", SCHEMA, partition_keys=["dt", "h"], options={"bucket": "-1"})
    table.write(pa.table({"id": [1], "dt": ["2026-11-27"], "h": pa.array([0], pa.int32())}, schema=SCHEMA))
    monkeypatch.setattr(clock, "now_millis", lambda: 1_000)
    ours, theirs = {"dt": "2026-11-27", "h": 0}, {"dt": "a b/c", "h": 1}  # the second needs escaping
    table.maintenance.mark_partitions_done([ours])
    md = table.metadata()
    rel = {name: md.partition_path(spec)[len(table.path.rstrip("/")) + 1:] for name, spec in
           (("ours", ours), ("theirs", theirs))}
    assert rel["theirs"] == "dt=a b%2Fc/h=1"
    job = PaimonJavaClient.table_job
    read_ours, _, _, reread = paimon_java.run_checked([
        job(wh, "db.t", "readSuccessFile", partition=rel["ours"]),
        job(wh, "db.t", "markPartitionDone", partition=rel["theirs"]),
        job(wh, "db.t", "markPartitionDone", partition=rel["ours"]),
        job(wh, "db.t", "readSuccessFile", partition=rel["ours"])])
    assert (read_ours["creationTime"], read_ours["modificationTime"]) == (1_000, 1_000)
    assert reread["creationTime"] == 1_000 and reread["modificationTime"] > 1_000  # Java kept our creation time
    java_file = md.success_file(theirs)
    assert java_file is not None and md.partition_done(theirs)
    with open(success_file_path(md.partition_path(theirs))) as f:
        assert f.read() == java_file.to_json()  # byte for byte what the engine writes
    assert md.success_file(ours) == SuccessFile(1_000, reread["modificationTime"])
