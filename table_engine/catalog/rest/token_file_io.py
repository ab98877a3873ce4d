"""A table's FileIO over the storage credentials its REST catalog vends (``data-token.enabled``; Paimon's
``RESTTokenFileIO``).

The server answers ``GET .../tables/{table}/token`` with storage options (``fs.s3.accessKeyId``,
``fs.s3.accessKeySecret``, ``fs.s3.securityToken``, ``fs.s3.endpoint``... as Paimon's servers send them; ``s3.*``
keys too) and their expiry. They are laid over the catalog's own options and the FileIO of the table's path is built
from the result by the one :func:`~table_engine.io.file_io.file_io_for`; the storage option registry
(:mod:`table_engine.options.storage`) already reads pypaimon's ``fs.s3.*`` names, so no key is renamed here. Before
each operation the credentials are fetched again once they are within :func:`refresh_margin_ms` of their expiry.

A copy pickled for a Spark task carries the credentials current at pickling (the task has no catalog to ask for
more; tasks are short next to a token's life). Neither ``repr`` nor any message shows a credential.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

import pyarrow as pa

from table_engine.catalog.rest.messages import DataToken
from table_engine.errors import UnsupportedError
from table_engine.io.base import FileIO, FileStatus
from table_engine.io.file_io import file_io_for
from table_engine.options.storage import is_storage_option

log = logging.getLogger(__name__)

MIN_REFRESH_MARGIN_MS = 60_000


def refresh_margin_ms(token: DataToken, fetched_at_ms: int) -> int:
    """How long before its expiry a token is replaced: a tenth of its lifetime, at least a minute."""
    return max(MIN_REFRESH_MARGIN_MS, (token.expires_at_millis - fetched_at_ms) // 10)


def _now_ms() -> int:
    return int(time.time() * 1000)


class TokenFileIO(FileIO):
    """The FileIO of one table (``path``) with the credentials ``fetch`` returns (see the module)."""

    def __init__(self, path: str, options: Mapping[str, str], fetch: Callable[[], DataToken] | None,
                 token: DataToken | None = None) -> None:
        self.path = path
        self._options = dict(options)
        self._fetch = fetch
        self._lock = threading.Lock()
        self._token: DataToken | None = None
        self._fetched_at = 0
        self._inner: FileIO | None = None
        if token is not None:
            self._use(token, _now_ms())
        else:
            self._refresh()
        self.has_directories = self.current().has_directories

    def __repr__(self) -> str:
        expires = None if self._token is None else self._token.expires_at_millis
        return f"TokenFileIO(path={self.path!r}, expires_at_millis={expires})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "options": self._options, "token": self._token}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["options"], None, state["token"])  # type: ignore[misc]

    def _use(self, token: DataToken, fetched_at: int) -> None:
        if "://" in self.path and not self.path.startswith("file:") and not any(
                is_storage_option(k) for k in token.token):
            raise UnsupportedError(f"the REST catalog vended credentials for {self.path} with keys "
                                   f"{sorted(token.token)}, none of which this engine's storage reads (s3.*, "
                                   "fs.s3.*)")
        self._inner = file_io_for(self.path, {**self._options, **token.token})
        self._token, self._fetched_at = token, fetched_at

    def _refresh(self) -> None:
        if self._fetch is None:
            raise UnsupportedError(f"the storage credentials of {self.path} expired in a copy of the table sent to "
                                   "another process, which cannot ask the catalog for new ones")
        fetched_at = _now_ms()
        self._use(self._fetch(), fetched_at)
        assert self._token is not None
        log.info("storage credentials of %s fetched from the REST catalog (valid until %d)", self.path,
                 self._token.expires_at_millis)

    def current(self) -> FileIO:
        """The FileIO with valid credentials (fetched again when they are about to expire)."""
        with self._lock:
            token, inner = self._token, self._inner
            if token is None or inner is None or self._stale(token):
                self._refresh()
            assert self._inner is not None
            return self._inner

    def _stale(self, token: DataToken) -> bool:
        """Whether ``token`` is to be replaced: near its expiry (a copy without a catalog: past it)."""
        if token.expires_at_millis <= 0:  # no expiry given
            return False
        left = token.expires_at_millis - _now_ms()
        return left < refresh_margin_ms(token, self._fetched_at) if self._fetch is not None else left <= 0

    # ---- FileIO, delegated --------------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        return self.current().read_bytes(path)

    def read_if_exists(self, path: str) -> bytes | None:
        return self.current().read_if_exists(path)

    def write_bytes(self, path: str, data: bytes, overwrite: bool = False) -> None:
        self.current().write_bytes(path, data, overwrite)

    def write_if_absent(self, path: str, data: bytes) -> bool:
        return self.current().write_if_absent(path, data)

    def exists(self, path: str) -> bool:
        return self.current().exists(path)

    def is_file(self, path: str) -> bool:
        return self.current().is_file(path)

    def list_status(self, path: str) -> list[FileStatus]:
        return self.current().list_status(path)

    def walk(self, path: str) -> Iterator[FileStatus]:
        return self.current().walk(path)

    def delete(self, path: str, recursive: bool = False) -> bool:
        return self.current().delete(path, recursive)

    def try_delete(self, path: str) -> None:
        self.current().try_delete(path)

    def mkdirs(self, path: str) -> None:
        self.current().mkdirs(path)

    def file_size(self, path: str) -> int:
        return self.current().file_size(path)

    def open_input(self, path: str) -> BinaryIO | pa.NativeFile:
        return self.current().open_input(path)

    def open_output(self, path: str) -> BinaryIO | pa.NativeFile:
        return self.current().open_output(path)

    def rename(self, src: str, dst: str) -> None:
        self.current().rename(src, dst)

    def overwrite_hint(self, path: str, data: bytes) -> None:
        self.current().overwrite_hint(path, data)
