"""The invariants of Iceberg-compatible metadata (``metadata.iceberg.storage``, ADR 0046), checked on the raw store.

After every step: the newest ``v<N>.metadata.json`` of the table's metadata directory (if any) describes a snapshot
that was published (its current snapshot is N, and its commit identity is the uuid ``snapshot-N`` had when it was
created: not a snapshot of another timeline). At the end of a run: ``v<latest>`` exists and lists (its current
snapshot's manifests, entries not DELETED) exactly the data files of the latest Paimon snapshot.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from table_engine.format.snapshot import Snapshot
from table_engine.iceberg.metadata import COMMIT_IDENTITY, metadata_version
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.simulation.mem_io import MemFileIO

DELETED = 2
"""Iceberg's manifest entry status of a removed file."""


def _avro(raw: MemFileIO, path: str) -> list[dict[str, Any]]:
    return list(fastavro.reader(io.BytesIO(raw.read_bytes(path))))


def newest_version(raw: MemFileIO, metadata_dir: str) -> int | None:
    """The highest N of the ``vN.metadata.json`` files present."""
    if not raw.exists(metadata_dir):
        return None
    versions = [metadata_version(s.path.rsplit("/", 1)[-1]) for s in raw.list_status(metadata_dir)]
    return max((v for v in versions if v is not None), default=None)


def check_newest(raw: MemFileIO, metadata_dir: str, identities: dict[int, set[str]]) -> str | None:
    """The per-step invariant; ``identities``: snapshot id -> the commit identities it was created with."""
    n = newest_version(raw, metadata_dir)
    if n is None:
        return None
    doc = json.loads(raw.read_bytes(f"{metadata_dir}/v{n}.metadata.json"))
    if doc["current-snapshot-id"] != n:
        return f"Iceberg v{n}.metadata.json has current snapshot {doc['current-snapshot-id']}"
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == n)
    identity = current["summary"].get(COMMIT_IDENTITY)
    if identity not in identities.get(n, set()):
        return f"Iceberg v{n}.metadata.json describes no published snapshot {n} (identity {identity})"
    return None


def check_latest_files(raw: MemFileIO, metadata_dir: str, table: Table, latest: Snapshot) -> str | None:
    """The end-of-run invariant: ``v<latest>`` lists exactly the data files of the latest snapshot."""
    path = f"{metadata_dir}/v{latest.id}.metadata.json"
    if not raw.is_file(path):
        return f"no Iceberg metadata for the latest snapshot {latest.id} (newest: v{newest_version(raw, metadata_dir)})"
    doc = json.loads(raw.read_bytes(path))
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == latest.id)
    listed: set[str] = set()
    try:
        for manifest in _avro(raw, current["manifest-list"]):
            listed.update(e["data_file"]["file_path"] for e in _avro(raw, manifest["manifest_path"])
                          if e["status"] != DELETED)
    except FileNotFoundError as e:
        return f"Iceberg v{latest.id} references a missing file: {e}"
    pf = table.store.path_factory
    live = {pf.data_file(e.partition, e.bucket, e.file) for e in live_entries(raw, table.path, latest)}
    if listed != live:
        return (f"Iceberg v{latest.id} lists {len(listed)} data files, the latest snapshot has {len(live)} "
                f"({len(listed - live)} extra, {len(live - listed)} missing)")
    return None
