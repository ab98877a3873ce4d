"""Helpers of ``bench_scale.py``: read counts by kind of file (over the engine's
:class:`~table_engine.io.counting.CountingFileIO`), the machine description, and the peak RSS of a child process.
The table with many data files is built by ``benchmarks/scale_tables.py``."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table_engine.io.counting import CountingFileIO  # noqa: E402

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


def counts(fio: CountingFileIO) -> dict[str, Any]:
    """What ``fio`` (the engine's :class:`~table_engine.io.counting.CountingFileIO`) counted since its last reset:
    metadata files read, files read by :func:`path_kind`, existence probes and listings."""
    return {"metadata_reads": fio.metadata_reads(), "reads": dict(Counter(path_kind(p) for p in fio.read_paths)),
            "probes": fio.calls["exists"] + fio.calls["is_file"], "listings": fio.calls["list_status"]}


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
