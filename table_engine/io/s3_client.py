"""The requests :class:`~table_engine.io.object_store.S3FileIO` sends, in this process or, after a fork, in a helper.

:func:`client_for` gives a client bound to one bucket. In a process that has not inherited a started obstore runtime
the client is :class:`DirectClient` (obstore in this process). In a process forked after obstore started in an
ancestor it is :class:`HelperClient`: the same requests run in :mod:`table_engine.io.s3_helper`, a fresh interpreter
started on first use, because the inherited runtime can neither serve the child nor be used without breaking the
parent (docs/adr/0040-s3-after-fork.md). Both raise the same exceptions: ``FileNotFoundError``, obstore's
``AlreadyExistsError`` for a lost conditional create, and any other failure with the store's message (which the
FileIO classifies and retries).
"""

from __future__ import annotations

import atexit
import io
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import IO, TYPE_CHECKING, Any, Protocol

from table_engine.errors import StorageError, UnsupportedError
from table_engine.options.storage import AWS_PROFILE, S3_ACCESS_KEY, S3_ENDPOINT, S3_REGION, aws_environment_value

if TYPE_CHECKING:
    from table_engine.options.storage import S3Settings

#: the process whose obstore runtime this memory holds (None: none started yet)
_runtime_pid: int | None = None


class S3RequestError(Exception):
    """A request run by the helper failed; the message is the store's (credentials never appear in it)."""


class S3Client(Protocol):
    """The requests of one bucket."""

    def get(self, key: str) -> bytes: ...
    def head(self, key: str) -> dict[str, Any]: ...
    def pages(self, prefix: str | None, offset: str | None, chunk_size: int) -> Iterator[list[dict[str, Any]]]: ...
    def list_with_delimiter(self, prefix: str | None) -> dict[str, Any]: ...
    def get_ranges(self, key: str, starts: list[int], ends: list[int]) -> list[bytes]: ...
    def open_reader(self, key: str, size: int, buffer_size: int) -> IO[bytes]: ...
    def put(self, key: str, data: bytes | memoryview, create: bool) -> None: ...
    def delete(self, keys: str | Sequence[str]) -> None: ...


def store_kwargs(settings: S3Settings) -> tuple[dict[str, Any], str | None]:
    """The arguments of obstore's ``S3Store`` for ``settings``, and the AWS profile whose credentials it needs (a
    provider object, built where the store is)."""
    s = settings
    endpoint = s.endpoint or aws_environment_value(S3_ENDPOINT)
    kwargs: dict[str, Any] = {}
    profile = None
    if s.endpoint:
        kwargs["endpoint"] = s.endpoint
    if s.region:
        kwargs["region"] = s.region
    elif not aws_environment_value(S3_REGION):
        kwargs["region"] = "us-east-1"
    if s.access_key:
        kwargs["access_key_id"] = s.access_key
        kwargs["secret_access_key"] = s.secret_key or ""
        if s.session_token:
            kwargs["token"] = s.session_token
    elif os.environ.get(AWS_PROFILE) and not aws_environment_value(S3_ACCESS_KEY):
        profile = os.environ[AWS_PROFILE]
    if s.path_style:
        kwargs["virtual_hosted_style_request"] = False
    client: dict[str, Any] = {"timeout": timedelta(milliseconds=s.timeout_ms),
                              "connect_timeout": timedelta(milliseconds=s.connect_timeout_ms)}
    if endpoint and endpoint.startswith("http://"):
        client["allow_http"] = True
    kwargs["client_options"] = client
    kwargs["retry_config"] = {"max_retries": s.max_retries,
                              "retry_timeout": timedelta(milliseconds=s.retry_timeout_ms),
                              "backoff": {"init_backoff": timedelta(milliseconds=50),
                                          "max_backoff": timedelta(seconds=5), "base": 2}}
    return kwargs, profile


def _profile_credentials(profile: str) -> Any:
    """Credentials of an AWS profile through boto3's chain (obstore alone does not read ~/.aws profiles)."""
    try:
        import boto3
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        raise UnsupportedError("AWS_PROFILE is set but boto3 is not installed: install boto3, or give "
                               "s3.access-key / AWS_ACCESS_KEY_ID") from None
    return Boto3CredentialProvider(boto3.Session(profile_name=profile))


def client_for(settings: S3Settings, bucket: str) -> S3Client:
    """A client of ``bucket``: obstore in this process, or the helper in a process forked after obstore started."""
    global _runtime_pid
    if _runtime_pid is not None and _runtime_pid != os.getpid():
        return HelperClient(settings, bucket)
    _runtime_pid = os.getpid()
    return DirectClient(settings, bucket)


class DirectClient:
    """obstore, in this process."""

    def __init__(self, settings: S3Settings, bucket: str) -> None:
        from obstore.store import S3Store

        kwargs, profile = store_kwargs(settings)
        if profile is not None:
            kwargs["credential_provider"] = _profile_credentials(profile)
        self._store = S3Store(bucket, **kwargs)

    def get(self, key: str) -> bytes:
        import obstore

        return bytes(obstore.get(self._store, key).bytes())

    def head(self, key: str) -> dict[str, Any]:
        import obstore

        return dict(obstore.head(self._store, key))

    def pages(self, prefix: str | None, offset: str | None, chunk_size: int) -> Iterator[list[dict[str, Any]]]:
        import obstore

        for batch in obstore.list(self._store, prefix=prefix, offset=offset, chunk_size=chunk_size):
            yield [dict(o) for o in batch]

    def list_with_delimiter(self, prefix: str | None) -> dict[str, Any]:
        import obstore

        return dict(obstore.list_with_delimiter(self._store, prefix))

    def get_ranges(self, key: str, starts: list[int], ends: list[int]) -> list[bytes]:
        import obstore

        return [bytes(p) for p in obstore.get_ranges(self._store, key, starts=starts, ends=ends)]

    def open_reader(self, key: str, size: int, buffer_size: int) -> IO[bytes]:
        import obstore

        return obstore.open_reader(self._store, key, buffer_size=buffer_size)  # type: ignore[return-value]

    def put(self, key: str, data: bytes | memoryview, create: bool) -> None:
        import obstore

        obstore.put(self._store, key, data, mode="create" if create else "overwrite")

    def delete(self, keys: str | Sequence[str]) -> None:
        import obstore

        obstore.delete(self._store, keys if isinstance(keys, str) else list(keys))


class _Helper:
    """The helper process of this process (one, shared by every client; requests are sent one at a time)."""

    _lock = threading.Lock()
    _current: _Helper | None = None

    def __init__(self) -> None:
        self.pid = os.getpid()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "s3_helper.py")
        self.process = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.stores: dict[tuple[S3Settings, str], int] = {}
        atexit.register(self.close)

    @classmethod
    def current(cls) -> _Helper:
        helper = cls._current
        if helper is None or helper.pid != os.getpid() or helper.process.poll() is not None:
            helper = cls._current = _Helper()
        return helper

    def close(self) -> None:
        if self.pid == os.getpid() and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def call(self, client: HelperClient, op: str, *args: Any) -> Any:
        with _Helper._lock:
            store = self.stores.get((client.settings, client.bucket))
            if store is None:
                store = self.stores[(client.settings, client.bucket)] = len(self.stores)
                kwargs, profile = store_kwargs(client.settings)
                self._exchange("connect", store, (client.bucket, kwargs, profile))
            return self._exchange(op, store, args)

    def _exchange(self, op: str, store: int, args: tuple[Any, ...]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            pickle.dump((op, store, args), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            kind, value = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as e:
            _Helper._current = None
            raise StorageError(f"the S3 helper process (used after a fork) stopped: {e}") from None
        if kind == "ok":
            return value
        if kind == "missing":
            raise FileNotFoundError(value)
        if kind == "exists":
            from obstore.exceptions import AlreadyExistsError

            raise AlreadyExistsError(value)
        raise S3RequestError(value)


class HelperClient:
    """The same requests as :class:`DirectClient`, run by the helper process."""

    def __init__(self, settings: S3Settings, bucket: str) -> None:
        self.settings = settings
        self.bucket = bucket

    def _call(self, op: str, *args: Any) -> Any:
        return _Helper.current().call(self, op, *args)

    def get(self, key: str) -> bytes:
        return bytes(self._call("get", key))

    def head(self, key: str) -> dict[str, Any]:
        return dict(self._call("head", key))

    def pages(self, prefix: str | None, offset: str | None, chunk_size: int) -> Iterator[list[dict[str, Any]]]:
        while True:
            page: list[dict[str, Any]] = self._call("page", prefix, offset, chunk_size)
            if not page:
                return
            yield page
            offset = page[-1]["path"]

    def list_with_delimiter(self, prefix: str | None) -> dict[str, Any]:
        return dict(self._call("list_with_delimiter", prefix))

    def get_ranges(self, key: str, starts: list[int], ends: list[int]) -> list[bytes]:
        return list(self._call("get_ranges", key, starts, ends))

    def open_reader(self, key: str, size: int, buffer_size: int) -> IO[bytes]:
        return io.BufferedReader(_RangeReader(self, key, size), buffer_size)

    def put(self, key: str, data: bytes | memoryview, create: bool) -> None:
        self._call("put", key, bytes(data), "create" if create else "overwrite")

    def delete(self, keys: str | Sequence[str]) -> None:
        self._call("delete", keys if isinstance(keys, str) else list(keys))


class _RangeReader(io.RawIOBase):
    """A seekable object read by ranged GETs (a big file opened through the helper)."""

    def __init__(self, client: HelperClient, key: str, size: int) -> None:
        super().__init__()
        self._client, self._key, self._size, self._pos = client, key, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        end = min(self._size, self._pos + len(buffer))
        if end <= self._pos:
            return 0
        data = self._client.get_ranges(self._key, [self._pos], [end])[0]
        memoryview(buffer)[:len(data)] = data
        self._pos += len(data)
        return len(data)
