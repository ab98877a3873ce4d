"""File access for the table engine: one small interface, a local implementation, and Arrow filesystems.

Paths are strings: plain local paths, ``file://`` URIs, ``s3://`` (``s3a://``) object-store URIs served by
:class:`~table_engine.io.object_store.S3FileIO`, or ``hdfs://`` URIs through pyarrow. The one operation a table format
needs beyond plain reads and writes is :meth:`FileIO.write_if_absent`, the atomic create-if-absent that publishes a
snapshot: it must be safe across processes and machines, never a check-then-write guarded by an in-process lock.
:func:`file_io_for` is the one place that builds a FileIO from a path and the catalog's options.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from table_engine.errors import UnsupportedError
from table_engine.io.base import FileIO, FileStatus

__all__ = ["ArrowFileIO", "FileIO", "FileStatus", "LocalFileIO", "file_io_for", "normalize_path"]

T = TypeVar("T")

DIRECTORY_ATTEMPTS = 5
"""How often a file is created again when its directory vanished between its creation and the file's."""


def _in_directory(path: str, create: Callable[[], T]) -> T:
    """``create()`` a file at local ``path`` after making its directory. A concurrent writer may remove an empty
    directory it made (a commit pin of the table's ``consumer/`` directory, see :mod:`table_engine.store.pins`)
    between this ``makedirs`` and the create, which then fails with ``FileNotFoundError``: the directory is made
    again and the create repeated (bounded)."""
    directory = os.path.dirname(path)
    for attempt in range(DIRECTORY_ATTEMPTS):
        os.makedirs(directory, exist_ok=True)
        try:
            return create()
        except FileNotFoundError:
            if attempt == DIRECTORY_ATTEMPTS - 1 or os.path.isdir(directory):
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _strip_file_scheme(path: str) -> str:
    if path.startswith("file://"):
        parsed = urlparse(path)
        return parsed.path or "/"
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


class LocalFileIO(FileIO):
    """Local filesystem. ``write_if_absent`` uses ``os.link`` of a fully written temp file (atomic, cross-process)."""

    def __init__(self) -> None:
        self._fs = pafs.LocalFileSystem()

    def to_fs_path(self, path: str) -> str:
        """The local path of ``path`` (a ``file://`` URI or a relative path made absolute)."""
        return os.path.abspath(_strip_file_scheme(path))

    def read_bytes(self, path: str) -> bytes:
        with open(self.to_fs_path(path), "rb") as f:
            return f.read()

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        p = self.to_fs_path(path)
        if overwrite:
            # write a sibling temp file and rename it over the target so readers never see a torn file
            fd, tmp = _in_directory(p, lambda: tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(p)))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, p)
            except BaseException:
                _silent_unlink(tmp)
                raise
            return
        with _in_directory(p, lambda: open(p, "xb")) as f:
            f.write(data)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        p = self.to_fs_path(path)
        d = os.path.dirname(p)
        tmp = os.path.join(d, f".{os.path.basename(p)}.{uuid.uuid4().hex}.tmp")
        with _in_directory(tmp, lambda: open(tmp, "xb")) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, p)  # fails with EEXIST if another process published first: atomic on POSIX
            return True
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                # filesystems without hard links: O_EXCL create, then content (readers retry on empty JSON)
                try:
                    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                return True
            raise
        finally:
            _silent_unlink(tmp)

    def exists(self, path: str) -> bool:
        return os.path.exists(self.to_fs_path(path))

    def list_status(self, path: str) -> list[FileStatus]:
        p = self.to_fs_path(path)
        out: list[FileStatus] = []
        try:
            it = os.scandir(p)
        except FileNotFoundError:
            return []
        with it:
            for e in it:
                try:
                    st = e.stat()
                    is_dir = e.is_dir()
                except FileNotFoundError:
                    continue  # deleted while we list (e.g. a snapshot a concurrent expiry removes): not there
                # milliseconds as Java's File.lastModified(): the nanoseconds truncated (a float st_mtime * 1000
                # can fall 1 ms below)
                out.append(FileStatus(os.path.join(path, e.name), st.st_size, is_dir, st.st_mtime_ns // 1_000_000))
        return out

    def delete(self, path: str, recursive: bool = False) -> bool:
        p = self.to_fs_path(path)
        if os.path.isdir(p) and not os.path.islink(p):
            if recursive:
                shutil.rmtree(p)
            else:
                os.rmdir(p)
            return True
        try:
            os.unlink(p)
            return True
        except FileNotFoundError:
            return False

    def mkdirs(self, path: str) -> None:
        os.makedirs(self.to_fs_path(path), exist_ok=True)

    def rename(self, src: str, dst: str) -> None:
        d = self.to_fs_path(dst)
        if os.path.lexists(d):
            raise FileExistsError(dst)
        _in_directory(d, lambda: os.rename(self.to_fs_path(src), d))

    def file_size(self, path: str) -> int:
        return os.path.getsize(self.to_fs_path(path))

    def open_input(self, path: str) -> pa.NativeFile:
        return pa.OSFile(self.to_fs_path(path), "rb")

    def open_output(self, path: str) -> pa.NativeFile:
        p = self.to_fs_path(path)
        return _in_directory(p, lambda: pa.OSFile(p, "wb"))


class ArrowFileIO(FileIO):
    """HDFS through pyarrow. Its :meth:`write_if_absent` checks, then writes: one committer per table only."""

    def __init__(self, uri: str) -> None:
        fs, _ = pafs.FileSystem.from_uri(uri)
        self._fs = fs
        self._scheme = urlparse(uri).scheme

    def to_fs_path(self, path: str) -> str:
        """The path inside the filesystem."""
        parsed = urlparse(path)
        if parsed.scheme:
            return (parsed.netloc + parsed.path) if self._scheme != "hdfs" else parsed.path
        return path

    def read_bytes(self, path: str) -> bytes:
        try:
            with self._fs.open_input_stream(self.to_fs_path(path)) as f:
                return bytes(f.read())
        except OSError as e:
            if not self.exists(path):
                raise FileNotFoundError(path) from e
            raise

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        if not overwrite and self.exists(path):
            raise FileExistsError(path)
        p = self.to_fs_path(path)
        self._fs.create_dir(os.path.dirname(p), recursive=True)
        with self._fs.open_output_stream(p) as f:
            f.write(data)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        if self.exists(path):
            return False
        self.write_bytes(path, data, overwrite=True)
        return True

    def exists(self, path: str) -> bool:
        return bool(self._fs.get_file_info(self.to_fs_path(path)).type != pafs.FileType.NotFound)

    def list_status(self, path: str) -> list[FileStatus]:
        sel = pafs.FileSelector(self.to_fs_path(path), allow_not_found=True)
        out = []
        for info in self._fs.get_file_info(sel):
            mtime = int(info.mtime.timestamp() * 1000) if info.mtime else 0
            out.append(FileStatus(path.rstrip("/") + "/" + info.base_name, info.size or 0,
                                  info.type == pafs.FileType.Directory, mtime))
        return out

    def delete(self, path: str, recursive: bool = False) -> bool:
        p = self.to_fs_path(path)
        info = self._fs.get_file_info(p)
        if info.type == pafs.FileType.NotFound:
            return False
        if info.type == pafs.FileType.Directory:
            if not recursive and self._fs.get_file_info(pafs.FileSelector(p)):
                raise OSError(errno.ENOTEMPTY, f"{path} is a directory that is not empty; pass recursive=True")
            self._fs.delete_dir(p)
        else:
            self._fs.delete_file(p)
        return True

    def mkdirs(self, path: str) -> None:
        self._fs.create_dir(self.to_fs_path(path), recursive=True)

    def rename(self, src: str, dst: str) -> None:
        if self.exists(dst):
            raise FileExistsError(dst)
        d = self.to_fs_path(dst)
        self._fs.create_dir(os.path.dirname(d), recursive=True)
        self._fs.move(self.to_fs_path(src), d)

    def file_size(self, path: str) -> int:
        return int(self._fs.get_file_info(self.to_fs_path(path)).size or 0)

    def open_input(self, path: str) -> pa.NativeFile:
        return self._fs.open_input_file(self.to_fs_path(path))

    def open_output(self, path: str) -> pa.NativeFile:
        p = self.to_fs_path(path)
        self._fs.create_dir(os.path.dirname(p), recursive=True)
        return self._fs.open_output_stream(p)


def _silent_unlink(p: str) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


_HDFS_SCHEMES = ("hdfs", "viewfs")


def file_io_for(path: str, options: Mapping[str, str] | None = None) -> FileIO:
    """The FileIO for a warehouse or table path, by its URI scheme, configured by the catalog's ``options``
    (``s3.*`` storage options, see :mod:`table_engine.options.storage`)."""
    scheme = urlparse(path).scheme
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        return LocalFileIO()
    from table_engine.io.object_store import S3_SCHEMES, S3FileIO
    from table_engine.options.storage import S3Settings

    if scheme in S3_SCHEMES:
        return S3FileIO(S3Settings.of(options or {}))
    if scheme in _HDFS_SCHEMES:
        return ArrowFileIO(path)
    raise UnsupportedError(f"unsupported warehouse scheme {scheme!r} in {path!r}: use a local path, s3:// (any "
                           "S3-compatible store) or hdfs://")


def normalize_path(path: str) -> str:
    """A canonical form for a warehouse/table path: absolute local paths, ``s3a://``/``s3n://`` as ``s3://``, URIs
    otherwise unchanged but for trailing slashes."""
    scheme = urlparse(path).scheme
    if scheme in ("", "file"):
        return os.path.abspath(_strip_file_scheme(path))
    if scheme in ("s3a", "s3n"):
        path = "s3" + path[len(scheme):]
    return path.rstrip("/")
