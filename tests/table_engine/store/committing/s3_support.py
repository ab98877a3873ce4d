"""Helpers of the S3 committing tests: a table with many snapshots made cheaply, the proxy fixture."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
import pytest

from table_engine.format.snapshot import snapshot_dir, snapshot_path
from table_engine.table import Table
from tests.fault_proxy import FaultProxy
from tests.s3_server import S3Server


@pytest.fixture
def proxy(s3_server: S3Server) -> Iterator[FaultProxy]:
    """A fault proxy in front of the session's S3 server (stopped after the test)."""
    with FaultProxy(s3_server.endpoint, seed=13) as p:
        yield p


def grow_snapshots(table: Table, count: int) -> None:
    """Give ``table`` ``count`` snapshots: one real commit, then copies of its snapshot under the next ids (the same
    files; what a commit reads of them does not depend on how they were made). Moto serves ~150 requests/s: a
    thousand real commits would take minutes."""
    if table.latest_snapshot_id() is None:
        table.write(pa.table({"id": pa.array([0], pa.int64()), "v": ["seed"]}))
    fio, latest = table.file_io, table.latest_snapshot_id()
    assert latest is not None
    doc = json.loads(fio.read_bytes(snapshot_path(table.path, latest)))
    for sid in range(latest + 1, count + 1):
        doc["id"] = sid
        fio.write_bytes(snapshot_path(table.path, sid), json.dumps(doc).encode())
    fio.overwrite_hint(f"{snapshot_dir(table.path)}/LATEST", str(count).encode())
    assert table.latest_snapshot_id() == count
