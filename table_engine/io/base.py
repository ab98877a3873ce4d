"""The FileIO interface every format and store module uses, and the directory entry it lists."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import pyarrow as pa

from table_engine.errors import MissingFileError, UnsupportedError


@dataclass(frozen=True)
class FileStatus:
    """One directory entry."""

    path: str
    size: int
    is_dir: bool
    mtime_millis: int


class FileIO(ABC):
    """Minimal filesystem interface used by every format and store module."""

    #: False on object stores, where a "directory" is only a key prefix: there is nothing to rename, and nothing to
    #: clean up once its files are gone
    has_directories: bool = True

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The whole content of ``path``; ``FileNotFoundError`` if it does not exist."""

    def read_referenced(self, path: str, kind: str) -> bytes:
        """The content of a file the table's metadata references (``kind``: "manifest file", ...); if it is gone,
        a :class:`MissingFileError` naming it (read and maintenance entry points add the snapshot)."""
        try:
            return self.read_bytes(path)
        except FileNotFoundError as e:
            if isinstance(e, MissingFileError):
                raise
            raise MissingFileError(kind, path) from None

    def read_if_exists(self, path: str) -> bytes | None:
        """The whole content of ``path``, or None if it does not exist (an optional metadata file: a tag, a
        changelog, a success file)."""
        try:
            return self.read_bytes(path)
        except FileNotFoundError:
            return None

    @abstractmethod
    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        """Write ``data`` to ``path`` (creating parents). Without ``overwrite`` an existing file is an error."""

    @abstractmethod
    def write_if_absent(self, path: str, data: bytes) -> bool:
        """Atomically create ``path`` with ``data`` unless it exists. Returns False when it existed already.

        Readers never see a partial file: the content becomes visible in one step.
        """

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    def is_file(self, path: str) -> bool:
        """Whether a file (not a directory) exists at ``path``: one HEAD on an object store, where :meth:`exists`
        of an absent key also lists to look for a "directory"."""
        return self.exists(path)

    @abstractmethod
    def list_status(self, path: str) -> list[FileStatus]:
        """Entries directly below directory ``path`` (empty if it does not exist)."""

    @abstractmethod
    def delete(self, path: str, recursive: bool = False) -> bool:
        """Delete a file, an empty directory, or a directory tree with ``recursive`` (a directory that is not empty
        without it: ``OSError``). Returns False if nothing was there."""

    @abstractmethod
    def mkdirs(self, path: str) -> None: ...

    @abstractmethod
    def file_size(self, path: str) -> int: ...

    @abstractmethod
    def open_input(self, path: str) -> BinaryIO | pa.NativeFile:
        """A seekable binary stream (for Parquet readers)."""

    @abstractmethod
    def open_output(self, path: str) -> BinaryIO | pa.NativeFile:
        """A binary output stream for a new file (for Parquet writers); parents are created."""

    def rename(self, src: str, dst: str) -> None:
        """Move ``src`` (a file or a directory) to ``dst``, which must not exist, in one step (parents created).
        Object stores cannot (see :attr:`has_directories`)."""
        raise UnsupportedError(f"{type(self).__name__} cannot rename {src}: an object store has no rename")

    def overwrite_hint(self, path: str, data: bytes) -> None:
        """Best-effort overwrite of a small hint file (LATEST/EARLIEST); readers verify hints."""
        self.write_bytes(path, data, overwrite=True)

    def walk(self, path: str) -> Iterator[FileStatus]:
        """Every file below directory ``path``, recursively (object stores: one paginated flat listing)."""
        for st in self.list_status(path):
            if st.is_dir:
                yield from self.walk(st.path)
            else:
                yield st

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    def try_delete(self, path: str) -> None:
        try:
            self.delete(path)
        except OSError:
            pass
