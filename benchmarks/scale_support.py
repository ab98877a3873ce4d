"""Helpers of ``bench_scale.py``: a counting FileIO, the machine description, peak RSS of a child process, and a
minimal builder of a table with many data files (until ``benchmarks/scale_tables.py`` provides one).

The builder: one real write puts one small Parquet file in every (partition, bucket) of an append table; the other
files are copies of those files' metadata under new names, committed through ``Table.commit`` in chunks. Planning
reads only manifests, so the copies never need to exist (reading such a table fails: it is for planning only).
"""

from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine import Catalog, Table  # noqa: E402
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER  # noqa: E402
from table_engine.io.base import FileStatus  # noqa: E402
from table_engine.io.file_io import LocalFileIO  # noqa: E402
from table_engine.store.committing.commit_message import CommitMessage  # noqa: E402

GIB = 1024**3


def path_kind(path: str) -> str:
    """The kind of a table file by its Paimon name: snapshot, hint, manifest-list, manifest, index-manifest,
    index, schema, data, other."""
    name = path.rsplit("/", 1)[-1]
    if "/snapshot/" in path:
        return "hint" if name in ("LATEST", "EARLIEST") else "snapshot"
    if "/manifest/" in path:
        if name.startswith("manifest-list-"):
            return "manifest-list"
        if name.startswith("index-manifest-"):
            return "index-manifest"
        return "manifest"
    if "/index/" in path:
        return "index"
    if "/schema/" in path:
        return "schema"
    if name.endswith((".parquet", ".orc", ".avro")) and name.startswith(("data-", "changelog-")):
        return "data"
    return "other"


METADATA_KINDS = ("snapshot", "hint", "manifest-list", "manifest", "index-manifest", "index", "schema")


class CountingFileIO(LocalFileIO):
    """LocalFileIO that counts file reads (``read_bytes``, ``open_input``) by :func:`path_kind`, and existence
    probes and listings, since the last :meth:`reset`."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()
        self.probes = 0
        self.listings = 0

    def reset(self) -> None:
        self.reads = Counter()
        self.probes = 0
        self.listings = 0

    def metadata_reads(self) -> int:
        return sum(self.reads[k] for k in METADATA_KINDS)

    def snapshot_counts(self) -> dict[str, Any]:
        return {"metadata_reads": self.metadata_reads(), "reads": dict(self.reads), "probes": self.probes,
                "listings": self.listings}

    def read_bytes(self, path: str) -> bytes:
        self.reads[path_kind(path)] += 1
        return super().read_bytes(path)

    def open_input(self, path: str) -> pa.NativeFile:
        self.reads[path_kind(path)] += 1
        return super().open_input(path)

    def exists(self, path: str) -> bool:
        self.probes += 1
        return super().exists(path)

    def is_file(self, path: str) -> bool:
        self.probes += 1
        return super().is_file(path)

    def list_status(self, path: str) -> list[FileStatus]:
        self.listings += 1
        return super().list_status(path)


def machine_info() -> dict[str, Any]:
    """CPU model and cores, memory, Python/pyarrow versions, UTC date and load average (for figures and JSON)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem_gib, 1),
            "python": platform.python_version(), "pyarrow": pa.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_average_start": os.getloadavg()}


def machine_line(info: dict[str, Any]) -> str:
    return (f"{info['cpu']}, {info['cores']} cores, {info['memory_gib']} GiB; Python {info['python']}, "
            f"pyarrow {info['pyarrow']}; {info['date']}")


def run_for_peak_rss(argv: list[str], timeout_s: float) -> tuple[int, str]:
    """Run ``argv`` in a fresh process (killed after ``timeout_s``); its peak RSS in bytes (its own ru_maxrss, from
    wait4) and its stdout."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as proc:
        killer = threading.Timer(timeout_s, proc.kill)
        killer.start()
        try:
            assert proc.stdout is not None
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[1:]} exited with {proc.returncode}")
    return usage.ru_maxrss * 1024, out


def build_many_files_table(path: str, partitions: int, buckets: int, files: int) -> Table:
    """An append table (``p`` INT partition, ``bucket`` = ``buckets`` on ``id``) with ``files`` data files spread
    evenly over ``partitions`` x ``buckets``; see the module docstring (files beyond the first per bucket are
    metadata only)."""
    catalog = Catalog(path)
    schema = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("v", pa.int64())])
    table = catalog.create_table("db.many_files", schema, partition_keys=["p"],
                                 options={"bucket": str(buckets), "bucket-key": "id", "write-only": "true"})
    per_partition = buckets * 16  # enough keys that every bucket of every partition gets a row
    ids = np.tile(np.arange(per_partition, dtype=np.int64), partitions)
    parts = np.repeat(np.arange(partitions, dtype=np.int32), per_partition)
    writer = table.new_write()
    writer.write(pa.table({"p": parts, "id": ids, "v": ids}, schema=schema))
    real = writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
    if len(real) != partitions * buckets:
        raise RuntimeError(f"expected a file in each of {partitions * buckets} buckets, got {len(real)}")
    table.commit(real)
    extra = max(files - len(real), 0)
    per_bucket, remainder = divmod(extra, len(real))
    chunk_files = 10_000
    pending: list[CommitMessage] = []
    pending_files = 0
    for i, msg in enumerate(real):
        template = msg.new_files[0]
        copies = per_bucket + (1 if i < remainder else 0)
        prefix = f"data-{uuid.uuid4()}-"
        new = [dataclasses.replace(template, file_name=f"{prefix}{j}.parquet") for j in range(copies)]
        if new:
            pending.append(CommitMessage(msg.partition, msg.bucket, msg.total_buckets, new_files=new))
            pending_files += len(new)
        if pending_files >= chunk_files:
            table.commit(pending)
            pending, pending_files = [], 0
    if pending:
        table.commit(pending)
    return table
