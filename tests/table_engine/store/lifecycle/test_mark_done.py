"""``mark-partition-done`` (Paimon's ``mark_partition_done``): the ``success-file`` action writes Paimon's
``_SUCCESS`` into each partition directory, which the metadata API (the partition sensor) reads as done; the other
actions, bad specs and unpartitioned tables are one-line errors that leave the warehouse unchanged; a re-run
converges."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog, clock
from table_engine.cli import main
from table_engine.errors import OptionError, PartitionSpecError, UnsupportedError
from table_engine.format.success_file import SuccessFile
from table_engine.ops import MarkPartitionDone
from table_engine.ops.run import run_command
from table_engine.schema_change import SetOption
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])


def hashes(root: str) -> dict[str, str]:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture
def table(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, partition_keys=["dt", "h"], options={"bucket": "-1"})
    t.write(pa.table({"id": [1, 2], "dt": ["2026-11-27", "2026-11-27"], "h": pa.array([0, 1], pa.int32())},
                     schema=SCHEMA))
    return t


def test_marks_each_partition_done_and_the_metadata_reads_it(table: Table, warehouse: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "now_millis", lambda: 1000)
    md = table.metadata()
    assert not md.partition_done({"dt": "2026-11-27", "h": 0})
    out = run_command(MarkPartitionDone(warehouse=warehouse, table="db.t",
                                        partitions=({"dt": "2026-11-27", "h": "0"}, {"dt": "2026-11-28", "h": "3"})))
    assert out == {"partitions": ["dt=2026-11-27,h=0", "dt=2026-11-28,h=3"], "actions": ["success-file"]}
    with open(f"{table.path}/dt=2026-11-27/h=0/_SUCCESS") as f:
        assert f.read() == SuccessFile(1000, 1000).to_json()
    # a partition without data may be marked done (a day with no rows), as in Paimon
    assert md.partition_done({"dt": "2026-11-28", "h": 3}) and md.partition_done("dt=2026-11-27,h=0")
    assert md.success_file({"dt": "2026-11-27", "h": 0}) == SuccessFile(1000, 1000)
    assert md.partition_stats({"dt": "2026-11-27", "h": 0}).done and not md.partition_done({"dt": "2026-11-27",
                                                                                            "h": 1})
    assert table.latest_snapshot_id() == 1  # no snapshot
    # a re-run (a retry) converges: same files, a new modification time
    monkeypatch.setattr(clock, "now_millis", lambda: 2000)
    table.maintenance.mark_partitions_done(["dt=2026-11-27,h=0"])
    assert md.success_file("dt=2026-11-27,h=0") == SuccessFile(1000, 2000)


def test_cli(table: Table, warehouse: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mark-partition-done", "--warehouse", warehouse, "--table", "db.t", "--partition", "dt=x,h=1",
                 "--partition", "dt=y,h=2"]) == 0
    line: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["partitions"] == ["dt=x,h=1", "dt=y,h=2"]
    assert table.metadata().partition_done("dt=y,h=2")


@pytest.mark.parametrize(("partitions", "action", "error", "match"), [
    (["dt=a"], None, PartitionSpecError, r"partition spec 'dt=a' of .* misses partition keys \['h'\]"),
    (["dt=a,h=1", "day=b,h=1"], None, PartitionSpecError, r"'day' not partition columns"),
    (["dt=a,h=x"], None, PartitionSpecError, r"partition column 'h' of type INT: value 'x'"),
    (["dt=a,h=1"], "done-partition", UnsupportedError,
     r"partition.mark-done-action 'done-partition' of .* is not supported: it adds a '<partition>.done' partition"
     r" to a metastore"),
    (["dt=a,h=1"], "success-file,mark-event", UnsupportedError, r"'mark-event' .* metastore"),
    (["dt=a,h=1"], "http-report", UnsupportedError, r"'http-report' .* HTTP server"),
    (["dt=a,h=1"], "custom", UnsupportedError, r"'custom' .* Java class"),
    (["dt=a,h=1"], "success-file,flag-file", OptionError, r"unknown action 'flag-file'"),
])
def test_bad_input_is_one_line_and_marks_nothing(table: Table, warehouse: str, partitions: list[str],
                                                 action: str | None, error: type[Exception], match: str) -> None:
    if action is not None:
        table.alter(SetOption("partition.mark-done-action", action))
    before = hashes(warehouse)
    with pytest.raises(error, match=match) as e:
        table.maintenance.mark_partitions_done(partitions)
    assert "\n" not in str(e.value)
    assert hashes(warehouse) == before


def test_an_unpartitioned_table_has_nothing_to_mark(catalog: Catalog) -> None:
    t = catalog.create_table("db.u", pa.schema([("id", pa.int64())]))
    with pytest.raises(PartitionSpecError, match="is not partitioned"):
        t.maintenance.mark_partitions_done(["id=1"])


def test_on_object_storage(s3_catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """On S3 the file is one whole PUT; marking again reads it back and keeps its creation time."""
    t = s3_catalog.create_table("db.s", SCHEMA, partition_keys=["dt", "h"], options={"bucket": "-1"})
    monkeypatch.setattr(clock, "now_millis", lambda: 5)
    t.maintenance.mark_partitions_done([{"dt": "a b/c", "h": 1}])
    monkeypatch.setattr(clock, "now_millis", lambda: 9)
    t.maintenance.mark_partitions_done(["dt=a b/c,h=1"])
    md = t.metadata()
    assert md.success_file({"dt": "a b/c", "h": 1}) == SuccessFile(5, 9)
    assert t.file_io.read_bytes(f"{t.path}/dt=a b%2Fc/h=1/_SUCCESS").decode() == SuccessFile(5, 9).to_json()
