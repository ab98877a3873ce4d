"""Warehouses on object storage through the S3 API (AWS S3, MinIO, Ceph, and every store that speaks it).

Built on obstore (Python bindings of the Rust ``object_store`` crate), chosen over pyarrow's ``S3FileSystem``
because it can do the one thing a table format needs: a conditional create. Every publication (snapshot, schema,
tag, consumer...) is a ``PUT`` with ``If-None-Match: *``; the store answers 412 when the key exists, and the commit
loop retries on the next id exactly as on a local disk. There is no check-then-write and no lock service
(docs/adr/0007-object-storage.md).

A request that fails with a 5xx, a timeout or a broken connection is retried (``s3.attempts.maximum``); the client
does not repeat a PUT that timed out or broke after it was sent, so :meth:`S3FileIO._put` does (every PUT of ours is
safe to repeat). A retried conditional create can meet its own first attempt (the object was written, the response
was lost): the 412 is then resolved by reading the object back; if it holds exactly our bytes, the publication is
ours. When even that fails, the committer reads the snapshot back (``FileStoreCommit._publish``).

Object stores have no directories: a "directory" exists while an object exists below it, listings group keys by
``/``, :meth:`mkdirs` writes a zero-byte ``.keep`` object so that an empty database is visible.

The requests go through :mod:`table_engine.io.s3_client`: obstore in this process, or, in a process forked after obstore
started (Airflow's OpenLineage listener, Celery, ``multiprocessing``), a helper process, because obstore's runtime does
not survive a fork (docs/adr/0040-s3-after-fork.md).
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlparse

import pyarrow as pa

from table_engine.errors import StorageError, UnsupportedError
from table_engine.io.base import FileIO, FileStatus
from table_engine.io.s3_client import S3Client, client_for
from table_engine.options.storage import S3Settings

_T = TypeVar("_T")

#: schemes served by this FileIO; ``s3a``/``s3n`` (Hadoop's names) are aliases of ``s3``
S3_SCHEMES = ("s3", "s3a", "s3n")
#: a data file up to this size is fetched whole (in concurrent ranged GETs) when opened for reading
_WHOLE_FILE_LIMIT = 64 * 1024 * 1024
#: size of one ranged GET when a file is fetched in parts
_RANGE_SIZE = 8 * 1024 * 1024
#: zero-byte object that keeps an empty "directory" visible
DIR_MARKER = ".keep"
_DELETE_BATCH = 1000
#: sizes of written objects remembered (then forgotten all at once)
_SIZES_KEPT = 4096


def split_s3_uri(path: str) -> tuple[str, str]:
    """``s3://bucket/a/b`` -> ``("bucket", "a/b")`` (``s3a://`` and ``s3n://`` alike)."""
    parsed = urlparse(path)
    if parsed.scheme not in S3_SCHEMES or not parsed.netloc:
        raise UnsupportedError(f"not an S3 path: {path!r} (expected s3://<bucket>/<key>)")
    return parsed.netloc, parsed.path.strip("/")


def _transport_error(e: Exception) -> bool:
    """A request that failed in transport (timeout, broken connection), not with an answer of the store."""
    text = str(e).lower()
    if "server returned" in text:  # the store answered (a 5xx the client already retried): not ours to repeat
        return False
    return any(m in text for m in ("error sending request", "timed out", "connection closed", "connection reset",
                                   "broken pipe"))


def _store_error(action: str, path: str, e: Exception) -> StorageError:
    # obstore's messages name the request and the status, never the credentials; keep the first line only
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return StorageError(f"{action} {path} failed: {first}")


class S3FileIO(FileIO):
    """FileIO over the S3 API. Pickles as its settings (Spark ships it to executors) and reconnects lazily."""

    has_directories = False

    def __init__(self, settings: S3Settings | None = None) -> None:
        self.settings = settings or S3Settings()
        self._clients: dict[str, S3Client] = {}
        self._pid = os.getpid()
        self._written: dict[str, int] = {}
        """Sizes of the objects this FileIO wrote (a data file's size is asked right after it is written: no HEAD)."""

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"S3FileIO(endpoint={self.settings.endpoint!r}, region={self.settings.region!r})"

    # ---- connection ----------------------------------------------------------------------------------------------
    def _client(self, bucket: str) -> S3Client:
        if self._pid != os.getpid():  # a forked child must not reuse the parent's connections
            self._clients = {}
            self._pid = os.getpid()
        client = self._clients.get(bucket)
        if client is None:
            client = self._clients[bucket] = client_for(self.settings, bucket)
        return client

    def _again(self, attempt: int, deadline: float, e: Exception) -> bool:
        """After a failed attempt: whether to send an idempotent request once more (a transport error within the
        retry budget), having slept the backoff. The client retries most broken connections itself; one that breaks
        as a reused connection is written to ("error sending request") it may not, and a read is always safe to
        repeat."""
        if attempt > self.settings.max_retries or time.monotonic() > deadline or not _transport_error(e):
            return False
        time.sleep(min(5.0, 0.05 * 2 ** attempt))
        return True

    def _idempotent(self, action: str, path: str, fn: Callable[[], _T]) -> _T:
        """``fn()`` (a read: GET, HEAD, LIST), sent again after a transport error; ``FileNotFoundError`` passes
        through, anything else becomes one :class:`StorageError` naming ``action`` and ``path``."""
        deadline = time.monotonic() + self.settings.retry_timeout_ms / 1000
        attempt = 0
        while True:
            try:
                return fn()
            except FileNotFoundError:
                raise
            except Exception as e:
                attempt += 1
                if not self._again(attempt, deadline, e):
                    raise _store_error(action, path, e) from None

    def _locate(self, path: str) -> tuple[S3Client, str]:
        bucket, key = split_s3_uri(path)
        return self._client(bucket), key

    # ---- reads ---------------------------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        client, key = self._locate(path)
        try:
            return self._idempotent("reading", path, lambda: client.get(key))
        except FileNotFoundError:
            raise FileNotFoundError(path) from None

    def _head(self, path: str) -> dict[str, Any] | None:
        client, key = self._locate(path)
        if not key:
            return None
        try:
            return self._idempotent("inspecting", path, lambda: client.head(key))
        except FileNotFoundError:
            return None

    def exists(self, path: str) -> bool:
        return self._head(path) is not None or self._is_dir(path)

    def is_file(self, path: str) -> bool:
        return self._head(path) is not None

    def _is_dir(self, path: str) -> bool:
        client, key = self._locate(path)

        def any_below() -> bool:
            return any(len(batch) for batch in client.pages(f"{key}/" if key else None, None, 1))

        return self._idempotent("listing", path, any_below)

    def file_size(self, path: str) -> int:
        size = self._written.get(path)
        if size is not None:
            return size
        meta = self._head(path)
        if meta is None:
            raise FileNotFoundError(path)
        return int(meta["size"])

    def list_status(self, path: str) -> list[FileStatus]:
        client, key = self._locate(path)
        base = path.rstrip("/")
        prefix = f"{key}/" if key else ""
        try:
            # the crate follows continuation tokens: every page, not only the first 1,000 keys
            listing = self._idempotent("listing", path, lambda: client.list_with_delimiter(prefix or None))
        except FileNotFoundError:
            return []
        out = [FileStatus(f"{base}/{p[len(prefix):].strip('/')}", 0, True, 0)
               for p in listing["common_prefixes"]]
        for o in listing["objects"]:
            name = o["path"][len(prefix):]
            if not name or name == DIR_MARKER:
                continue
            out.append(FileStatus(f"{base}/{name}", int(o["size"]), False,
                                  int(o["last_modified"].timestamp() * 1000)))
        return out

    def walk(self, path: str) -> Iterator[FileStatus]:
        """Every object below ``path``, recursively, page by page (for orphan cleanup and recursive deletes)."""
        client, key = self._locate(path)
        prefix = f"{key}/" if key else ""
        base = path.rstrip("/")
        deadline = time.monotonic() + self.settings.retry_timeout_ms / 1000
        attempt, last = 0, None
        while True:
            try:
                # a listing broken part-way resumes after the last key it gave (keys come in lexicographic order)
                pages = client.pages(prefix or None, last, 1000)
                for batch in pages:
                    for o in batch:
                        last = o["path"]
                        yield FileStatus(f"{base}/{o['path'][len(prefix):]}", int(o["size"]), False,
                                         int(o["last_modified"].timestamp() * 1000))
                return
            except Exception as e:
                attempt += 1
                if not self._again(attempt, deadline, e):
                    raise _store_error("listing", path, e) from None

    def open_input(self, path: str) -> pa.NativeFile:
        """The object as a seekable Arrow file. Up to 64 MiB it is fetched at once, in concurrent 8 MiB ranged GETs;
        a larger one is read on demand by ranged GETs as the Parquet reader seeks."""
        client, key = self._locate(path)
        size = self.file_size(path)

        def fetch() -> pa.NativeFile:
            if size <= _WHOLE_FILE_LIMIT:
                if size <= _RANGE_SIZE:
                    return pa.BufferReader(pa.py_buffer(client.get(key)))
                starts = list(range(0, size, _RANGE_SIZE))
                ends = [min(s + _RANGE_SIZE, size) for s in starts]
                parts = client.get_ranges(key, starts, ends)
                return pa.BufferReader(pa.py_buffer(b"".join(parts)))
            return pa.PythonFile(client.open_reader(key, size, _RANGE_SIZE), mode="r")

        try:
            return self._idempotent("reading", path, fetch)
        except FileNotFoundError:
            raise FileNotFoundError(path) from None

    # ---- writes --------------------------------------------------------------------------------------------------
    def _put(self, path: str, data: bytes | memoryview, create: bool) -> bool:
        """PUT ``data``; with ``create``, only if absent (False when the key exists with other content)."""
        from obstore.exceptions import AlreadyExistsError

        client, key = self._locate(path)
        deadline = time.monotonic() + self.settings.retry_timeout_ms / 1000
        attempt = 0
        while True:
            try:
                client.put(key, data, create)
                if len(self._written) >= _SIZES_KEPT:
                    self._written.clear()
                self._written[path] = len(data)
                return True
            except AlreadyExistsError:
                # a lost race, or our own earlier attempt whose response was lost (the request was retried)
                try:
                    return client.get(key) == bytes(data)
                except FileNotFoundError:  # deleted in between: it was not ours to keep
                    return False
                except Exception as e:
                    raise _store_error("reading back", path, e) from None
            except Exception as e:
                # the client does not retry a PUT that timed out or whose connection broke after it was sent (it may
                # have been applied): ours is safe to repeat -- a conditional create meets its own object above, an
                # overwrite writes the same bytes again
                attempt += 1
                if not self._again(attempt, deadline, e):
                    raise _store_error("writing", path, e) from None

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        if not self._put(path, data, create=not overwrite):
            raise FileExistsError(path)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        return self._put(path, data, create=True)

    def open_output(self, path: str) -> pa.NativeFile:
        """A stream buffered in memory and uploaded when closed (multipart above the client's chunk size)."""
        return pa.PythonFile(_UploadOnClose(self, path), mode="w")

    def try_delete(self, path: str) -> None:
        """Delete the object ``path`` if it is there, in one DELETE (an absent key is no error on S3); a failure is
        ignored, as :meth:`FileIO.try_delete` (a file, never a prefix: what callers of it delete)."""
        client, key = self._locate(path)
        self._written.pop(path, None)
        try:
            client.delete(key)
        except Exception:  # noqa: BLE001 - best effort by contract
            pass

    def delete(self, path: str, recursive: bool = False) -> bool:
        client, key = self._locate(path)
        self._written.pop(path, None)
        if self._head(path) is not None:
            try:
                client.delete(key)
            except FileNotFoundError:
                return False
            except Exception as e:
                raise _store_error("deleting", path, e) from None
            return True
        keys = [f"{key}/{st.path[len(path.rstrip('/')) + 1:]}" for st in self.walk(path)]
        if not keys:
            return False
        if not recursive:
            raise UnsupportedError(f"{path} is a directory; pass recursive=True")
        self._written.clear()
        try:
            for i in range(0, len(keys), _DELETE_BATCH):
                client.delete(keys[i:i + _DELETE_BATCH])
        except Exception as e:
            raise _store_error("deleting", path, e) from None
        return True

    def mkdirs(self, path: str) -> None:
        if not self.exists(path):
            self._put(f"{path.rstrip('/')}/{DIR_MARKER}", b"", create=False)


class _UploadOnClose(io.RawIOBase):
    """A write-only file that keeps what is written and uploads it in one PUT on close."""

    def __init__(self, file_io: S3FileIO, path: str) -> None:
        super().__init__()
        self._file_io = file_io
        self._path = path
        self._buffer = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._buffer.write(data)

    def tell(self) -> int:
        return self._buffer.tell()

    def close(self) -> None:
        if self.closed:
            return
        try:
            # data files have fresh UUID names: a plain (idempotent, multipart-capable) PUT
            self._file_io._put(self._path, self._buffer.getbuffer(), create=False)
        finally:
            self._buffer = io.BytesIO()
            super().close()
