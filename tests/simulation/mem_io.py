"""An in-memory FileIO with object-store semantics, for the deterministic simulation.

Why in memory: one interleaving must cost milliseconds (tens of thousands are explored per CI run), every state is
thrown away after a run, and nothing the engine does depends on a real disk's timing. Directories are implicit key
prefixes (``has_directories = False``, as on S3), so the engine takes its object-store paths: no empty-directory
cleanup races to model. Modification times come from the engine's clock (:func:`table_engine.clock.now_millis`),
which the simulation drives, so orphan cleanup's age cut-off is deterministic too.

The creation history (:attr:`MemFileIO.created`) counts how often each path was created: a ``snapshot-N`` created
twice is the signature of the snapshot-id reuse of issue 35. :attr:`on_create` lets the invariant checker see each
creation at the moment it happens (e.g. to read a snapshot exactly as it was published).
"""

from __future__ import annotations

import io
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from table_engine import clock
from table_engine.io.base import FileIO, FileStatus


@dataclass
class _Entry:
    data: bytes
    mtime_millis: int
    generation: int
    """The store's :attr:`MemFileIO.version` when these bytes were written (a path written again gets a new one)."""


def _norm(path: str) -> str:
    return path.rstrip("/") or "/"


class MemFileIO(FileIO):
    """Files in a dict; every mutation is atomic (one lock), which is what ``write_if_absent`` promises."""

    has_directories = False

    def __init__(self) -> None:
        self._files: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        self.created: Counter[str] = Counter()
        """Path -> how often it was created (an overwrite of an existing file is not a creation)."""
        self.on_create: Callable[[str], None] | None = None
        """Called after a path was created (outside the lock), by the creating actor."""
        self.on_delete: Callable[[str], None] | None = None
        """Called after a file was deleted."""
        self.version = 0
        """Counts the mutations (creations, overwrites, deletions, renames): unchanged means nothing changed."""

    # ---- helpers -------------------------------------------------------------------------------------------------
    def _put(self, path: str, data: bytes, *, overwrite: bool, if_absent: bool = False) -> bool:
        p = _norm(path)
        with self._lock:
            existed = p in self._files
            if existed and if_absent:
                return False
            if existed and not overwrite:
                raise FileExistsError(path)
            self.version += 1
            self._files[p] = _Entry(bytes(data), clock.now_millis(), self.version)
            if not existed:
                self.created[p] += 1
        if not existed and self.on_create is not None:
            self.on_create(p)
        return True

    def _below(self, path: str) -> list[str]:
        prefix = _norm(path) + "/"
        return [p for p in self._files if p.startswith(prefix)]

    def generation(self, path: str) -> int | None:
        """The generation of the bytes at ``path`` (None if there is no file): equal generations, equal bytes."""
        with self._lock:
            e = self._files.get(_norm(path))
        return None if e is None else e.generation

    def files(self) -> list[str]:
        """Every file path, sorted (for checks and debugging)."""
        with self._lock:
            return sorted(self._files)

    # ---- FileIO --------------------------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        with self._lock:
            e = self._files.get(_norm(path))
        if e is None:
            raise FileNotFoundError(path)
        return e.data

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        self._put(path, data, overwrite=overwrite)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        return self._put(path, data, overwrite=False, if_absent=True)

    def exists(self, path: str) -> bool:
        with self._lock:
            return _norm(path) in self._files or bool(self._below(path))

    def is_file(self, path: str) -> bool:
        with self._lock:
            return _norm(path) in self._files

    def list_status(self, path: str) -> list[FileStatus]:
        base = _norm(path)
        out: dict[str, FileStatus] = {}
        with self._lock:
            for p in self._below(base):
                rest = p[len(base) + 1:]
                name, sep, _ = rest.partition("/")
                child = f"{base}/{name}"
                if sep:
                    out.setdefault(name, FileStatus(child, 0, True, 0))
                else:
                    e = self._files[p]
                    out[name] = FileStatus(child, len(e.data), False, e.mtime_millis)
        return [out[n] for n in sorted(out)]

    def walk(self, path: str) -> Iterator[FileStatus]:
        with self._lock:
            found = [(p, self._files[p]) for p in sorted(self._below(path))]
        for p, e in found:
            yield FileStatus(p, len(e.data), False, e.mtime_millis)

    def delete(self, path: str, recursive: bool = False) -> bool:
        p = _norm(path)
        with self._lock:
            if p in self._files:
                del self._files[p]
                gone = [p]
            else:
                below = self._below(p)
                if not below:
                    return False
                if not recursive:
                    raise OSError(f"{path} is a directory; pass recursive=True")
                for q in below:
                    del self._files[q]
                gone = below
            self.version += 1
        if self.on_delete is not None:
            for q in gone:
                self.on_delete(q)
        return True

    def mkdirs(self, path: str) -> None:
        """Nothing to do: directories are implicit (an object store's prefixes)."""

    def file_size(self, path: str) -> int:
        return len(self.read_bytes(path))

    def open_input(self, path: str) -> pa.NativeFile:
        return pa.BufferReader(self.read_bytes(path))

    def open_output(self, path: str) -> pa.NativeFile:
        return pa.PythonFile(_Sink(self, path), mode="w")

    def rename(self, src: str, dst: str) -> None:
        s, d = _norm(src), _norm(dst)
        with self._lock:
            if d in self._files or self._below(d):
                raise FileExistsError(dst)
            if s in self._files:
                moves = [(s, d)]
            else:
                moves = [(q, d + q[len(s):]) for q in self._below(s)]
                if not moves:
                    raise FileNotFoundError(src)
            for a, b in moves:
                self._files[b] = self._files.pop(a)
                self.created[b] += 1
            self.version += 1
        for _, b in moves:
            if self.on_create is not None:
                self.on_create(b)

    def overwrite_hint(self, path: str, data: bytes) -> None:
        self._put(path, data, overwrite=True)


class _Sink(io.BytesIO):
    """The bytes of an output stream; they become the file in one step when the stream is closed (as an object
    store's upload: no reader ever sees half a data file)."""

    def __init__(self, fio: MemFileIO, path: str) -> None:
        super().__init__()
        self._fio = fio
        self._path = path

    def close(self) -> None:
        if not self.closed:
            data = self.getvalue()
            super().close()
            self._fio.write_bytes(self._path, data, overwrite=True)
