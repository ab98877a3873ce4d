"""A FileIO that counts the requests it passes on: how many metadata files a commit, a plan or an expiry reads.

Tests and benchmarks wrap a table's FileIO in :class:`CountingFileIO` and compare counts (never times): e.g. the
metadata reads of one commit at 10 and at 10,000 snapshots must be equal."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa

from table_engine.io.base import FileIO, FileStatus

READ_CALLS = ("read_bytes", "open_input", "file_size")
"""Calls that read a file (or its size)."""
PROBE_CALLS = ("exists", "is_file", "list_status", "walk")
"""Calls that look for files without reading them."""


class CountingFileIO(FileIO):
    """Passes every call to ``inner`` and counts it by method name (:attr:`calls`); :attr:`read_paths` lists the
    files read, in order. Thread-safe. :meth:`reset` starts a new count."""

    def __init__(self, inner: FileIO) -> None:
        self.inner = inner
        self.has_directories = inner.has_directories
        self.calls: Counter[str] = Counter()
        self.read_paths: list[str] = []
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.read_paths.clear()

    def _count(self, name: str, path: str | None = None) -> None:
        with self._lock:
            self.calls[name] += 1
            if path is not None and name in READ_CALLS:
                self.read_paths.append(path)

    def reads(self) -> int:
        """Files read (:data:`READ_CALLS`)."""
        return sum(self.calls[n] for n in READ_CALLS)

    def probes(self) -> int:
        """Existence checks and listings (:data:`PROBE_CALLS`)."""
        return sum(self.calls[n] for n in PROBE_CALLS)

    def metadata_reads(self) -> int:
        """Files read outside the data directories: snapshots, hints, manifest lists, manifests, index manifests,
        schemas (what a commit or a plan costs whatever the data)."""
        with self._lock:
            return sum(1 for p in self.read_paths if _is_metadata(p))

    # ---- delegation --------------------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        self._count("read_bytes", path)
        return self.inner.read_bytes(path)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        self._count("write_bytes")
        self.inner.write_bytes(path, data, overwrite)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        self._count("write_if_absent")
        return self.inner.write_if_absent(path, data)

    def exists(self, path: str) -> bool:
        self._count("exists")
        return self.inner.exists(path)

    def is_file(self, path: str) -> bool:
        self._count("is_file")
        return self.inner.is_file(path)

    def list_status(self, path: str) -> list[FileStatus]:
        self._count("list_status")
        return self.inner.list_status(path)

    def walk(self, path: str) -> Iterator[FileStatus]:
        self._count("walk")
        return self.inner.walk(path)

    def delete(self, path: str, recursive: bool = False) -> bool:
        self._count("delete")
        return self.inner.delete(path, recursive)

    def mkdirs(self, path: str) -> None:
        self._count("mkdirs")
        self.inner.mkdirs(path)

    def file_size(self, path: str) -> int:
        self._count("file_size", path)
        return self.inner.file_size(path)

    def open_input(self, path: str) -> BinaryIO | pa.NativeFile:
        self._count("open_input", path)
        return self.inner.open_input(path)

    def open_output(self, path: str) -> BinaryIO | pa.NativeFile:
        self._count("open_output")
        return self.inner.open_output(path)

    def rename(self, src: str, dst: str) -> None:
        self._count("rename")
        self.inner.rename(src, dst)

    def overwrite_hint(self, path: str, data: bytes) -> None:
        self._count("overwrite_hint")
        self.inner.overwrite_hint(path, data)


def _is_metadata(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return len(parts) >= 2 and parts[-2] in ("snapshot", "manifest", "schema", "tag", "changelog",
                                             "consumer", "branch")
