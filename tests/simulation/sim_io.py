"""The FileIO the actors see: every operation is a scheduling point, and may fail like a request to S3.

Why every operation: the races of the commit protocol (issue 35) are between individual requests - a committer's
read of ``LATEST``, an expiry's deletes, the conditional create of ``snapshot-N`` - so the scheduler must be able to
switch actors between any two of them. Faults are the two ways a request to an object store goes wrong:

* ``error``: the request fails before it has any effect (a 503, a refused connection);
* ``lost``: the request takes effect, then the client sees an error (the response was lost) - the case that makes a
  committer unsure whether its snapshot was published.

Both raise :class:`InjectedFault` (an ``OSError``, as the engine's storage errors are). Decisions come from a seeded
generator in the order the (serialized) actors issue requests, so they replay exactly. The invariant checker never
goes through this wrapper: it reads the raw :class:`~tests.simulation.mem_io.MemFileIO`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from table_engine.io.base import FileIO, FileStatus

WRITE_OPS = frozenset({"write_bytes", "write_if_absent", "delete", "open_output", "rename", "overwrite_hint"})
"""Operations that change the store (the only ones a lost response applies to)."""


class InjectedFault(OSError):
    """A storage error the simulation injected (tolerated as an actor's outcome)."""


class PointSink(Protocol):
    """Where operations are announced (the scheduler)."""

    def point(self, op: str, path: str) -> None: ...

    def fault(self, kind: str, op: str, path: str) -> None: ...


@dataclass
class Faults:
    """Per-operation fault probabilities; ``rate`` 0 means no faults (the default of most scenarios)."""

    seed: int = 0
    rate: float = 0.0
    lost_share: float = 0.5
    """Of the faults on writes, the share that are lost responses (applied, then an error)."""
    reads: bool = False
    """Whether reads fail too (a 503 on GET)."""
    injected: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, op, path) of every fault injected, in order."""

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed ^ 0x5EED)

    def decide(self, op: str, path: str) -> str | None:
        """None, ``"error"`` or ``"lost"`` for this operation."""
        if self.rate <= 0 or (op not in WRITE_OPS and not self.reads):
            return None
        if self._rng.random() >= self.rate:
            return None
        kind = "lost" if op in WRITE_OPS and self._rng.random() < self.lost_share else "error"
        self.injected.append((kind, op, path))
        return kind


class SimFileIO(FileIO):
    """``inner`` behind scheduling points and injected faults."""

    def __init__(self, inner: FileIO, scheduler: PointSink, faults: Faults | None = None) -> None:
        self.inner = inner
        self.scheduler = scheduler
        self.faults = faults or Faults()
        self.has_directories = inner.has_directories

    def _before(self, op: str, path: str) -> str | None:
        self.scheduler.point(op, path)
        kind = self.faults.decide(op, path)
        if kind is not None:
            self.scheduler.fault(kind, op, path)
        if kind == "error":
            raise InjectedFault(f"injected error: {op} {path}")
        return kind

    @staticmethod
    def _after(kind: str | None, op: str, path: str) -> None:
        if kind == "lost":
            raise InjectedFault(f"injected lost response: {op} {path} (it was applied)")

    def read_bytes(self, path: str) -> bytes:
        self._before("read_bytes", path)
        return self.inner.read_bytes(path)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        kind = self._before("write_bytes", path)
        self.inner.write_bytes(path, data, overwrite)
        self._after(kind, "write_bytes", path)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        kind = self._before("write_if_absent", path)
        created = self.inner.write_if_absent(path, data)
        self._after(kind, "write_if_absent", path)
        return created

    def exists(self, path: str) -> bool:
        self._before("exists", path)
        return self.inner.exists(path)

    def is_file(self, path: str) -> bool:
        self._before("is_file", path)
        return self.inner.is_file(path)

    def list_status(self, path: str) -> list[FileStatus]:
        self._before("list_status", path)
        return self.inner.list_status(path)

    def walk(self, path: str) -> Iterator[FileStatus]:
        self._before("walk", path)
        return iter(list(self.inner.walk(path)))

    def delete(self, path: str, recursive: bool = False) -> bool:
        kind = self._before("delete", path)
        deleted = self.inner.delete(path, recursive)
        self._after(kind, "delete", path)
        return deleted

    def mkdirs(self, path: str) -> None:
        self._before("mkdirs", path)
        self.inner.mkdirs(path)

    def file_size(self, path: str) -> int:
        self._before("file_size", path)
        return self.inner.file_size(path)

    def open_input(self, path: str) -> pa.NativeFile:
        self._before("open_input", path)
        return self.inner.open_input(path)

    def open_output(self, path: str) -> pa.NativeFile:
        # a lost response of an upload is not modelled: the file appears when the stream is closed
        kind = self._before("open_output", path)
        if kind == "lost":
            raise InjectedFault(f"injected error: open_output {path}")
        return self.inner.open_output(path)

    def rename(self, src: str, dst: str) -> None:
        kind = self._before("rename", src)
        self.inner.rename(src, dst)
        self._after(kind, "rename", src)

    def overwrite_hint(self, path: str, data: bytes) -> None:
        kind = self._before("overwrite_hint", path)
        self.inner.overwrite_hint(path, data)
        self._after(kind, "overwrite_hint", path)
