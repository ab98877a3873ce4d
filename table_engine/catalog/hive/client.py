"""Connections to a Hive Metastore over Thrift (thriftpy2: binary protocol, buffered transport), a small pool of
them, and the one error every failure becomes.

``uri`` is Paimon's: ``thrift://host:port[,thrift://host2:port2]`` (or ``host2:port2`` after a comma); each address is
tried in order until one answers. Without ``uri``, ``hive-conf-dir``'s ``hive-site.xml`` gives
``hive.metastore.uris``, as in Paimon's ``HiveCatalog.createHiveConf``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from table_engine.catalog.hive.idl import hms
from table_engine.catalog.options import CLIENT_POOL_SIZE, HIVE_CONF_DIR, URI, CatalogOptions
from table_engine.errors import CatalogError

DEFAULT_TIMEOUT_MS = 60_000  # a metastore call (Hive's hive.metastore.client.socket.timeout is 600 s; ours shorter)
URIS_KEY = "hive.metastore.uris"

T = TypeVar("T")


def resolve_uri(options: CatalogOptions) -> str:
    """The metastore's ``thrift://`` uri: the ``uri`` option, else ``hive.metastore.uris`` from ``hive-conf-dir``'s
    ``hive-site.xml``; a CatalogError naming what is missing otherwise."""
    uri = (options.get(URI) or "").strip()
    if uri:
        return uri
    conf_dir = options.get(HIVE_CONF_DIR)
    if not conf_dir:
        raise CatalogError("hive catalog: no 'uri' (thrift://host:port) and no 'hive-conf-dir' to read it from")
    site = os.path.join(conf_dir, "hive-site.xml")
    try:
        root = ET.parse(site).getroot()
    except (OSError, ET.ParseError) as e:
        raise CatalogError(f"hive catalog: cannot read {site}: {e}") from None
    for prop in root.iter("property"):
        if (prop.findtext("name") or "").strip() == URIS_KEY:
            value = (prop.findtext("value") or "").strip()
            if value:
                return value
    raise CatalogError(f"hive catalog: no 'uri' option and {site} does not set {URIS_KEY}")


def parse_addresses(uri: str) -> list[tuple[str, int]]:
    """``thrift://h:p[,thrift://h2:p2]`` -> [(h, p), (h2, p2)]; a CatalogError naming the uri if it is malformed."""
    out = []
    for part in uri.split(","):
        address = part.strip().removeprefix("thrift://").rstrip("/")
        host, sep, port = address.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise CatalogError(f"hive catalog {uri}: {part.strip()!r} is not thrift://host:port")
        out.append((host.strip("[]"), int(port)))
    return out


def describe(e: BaseException) -> str:
    """A Thrift exception as one phrase: its type and its message (the metastore's exceptions carry ``message``)."""
    message = getattr(e, "message", None) or str(e) or repr(e)
    cause = e.__cause__ or e.__context__  # thriftpy2 hides why a connection failed (refused, timed out) in there
    if isinstance(cause, OSError):
        message = f"{message}: {cause.strerror or type(cause).__name__}"
    return f"{type(e).__name__}: {message}"


class ClientPool:
    """Up to ``size`` open connections to the metastore, shared by threads; a caller holds one only for one call.

    A call that fails in the transport (connection reset, timeout) closes its connection and is retried once on a
    new one, as Hive's ``RetryingMetaStoreClient`` does; the metastore's own exceptions (``MetaException``,
    ``NoSuchObjectException``, ...) reach the caller unchanged, the connection stays in the pool."""

    def __init__(self, uri: str, size: int = CLIENT_POOL_SIZE.default, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        if size < 1:
            raise CatalogError(f"hive catalog {uri}: client-pool-size must be at least 1, not {size}")
        self.uri = uri
        self.addresses = parse_addresses(uri)
        self.timeout_ms = timeout_ms
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> Any:
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.rpc import make_client
        from thriftpy2.transport import TBufferedTransportFactory

        problems = []
        for host, port in self.addresses:
            try:
                return make_client(hms().ThriftHiveMetastore, host, port, timeout=self.timeout_ms,
                                   proto_factory=TBinaryProtocolFactory(),  # type: ignore[no-untyped-call]
                                   trans_factory=TBufferedTransportFactory())
            except Exception as e:  # noqa: BLE001 (every address is tried; the error names each failure)
                problems.append(f"{host}:{port}: {describe(e)}")
        raise CatalogError(f"hive catalog {self.uri}: cannot connect ({'; '.join(problems)})")

    def run(self, what: str, call: Callable[[Any], T]) -> T:
        """``call(client)`` on a pooled connection. ``what`` names the operation in errors other than the
        metastore's own exceptions, which are raised as they are (callers translate them, :meth:`HiveErrors`)."""
        from thriftpy2.thrift import TApplicationException
        from thriftpy2.transport import TTransportException

        if self._closed:
            raise CatalogError(f"hive catalog {self.uri}: {what}: the catalog is closed")
        with self._slots:
            for attempt in (1, 2):
                with self._lock:
                    client = self._idle.pop() if self._idle else None
                if client is None:
                    client = self._connect()
                try:
                    result = call(client)
                except (TTransportException, OSError, EOFError) as e:  # socket.timeout is an OSError
                    client.close()
                    if attempt == 2:
                        raise CatalogError(f"hive catalog {self.uri}: {what}: {describe(e)}") from None
                    continue
                except TApplicationException as e:
                    client.close()
                    raise CatalogError(f"hive catalog {self.uri}: {what}: {describe(e)}") from None
                except BaseException:
                    self._give_back(client)
                    raise
                self._give_back(client)
                return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _give_back(self, client: Any) -> None:
        with self._lock:
            if self._closed:
                client.close()
            else:
                self._idle.append(client)

    def close(self) -> None:
        """Close every idle connection; connections in use close when their call ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for client in idle:
            with contextlib.suppress(Exception):
                client.close()


@contextlib.contextmanager
def metastore_errors(uri: str, what: str, keep: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """The metastore's exceptions (and any other Thrift failure) inside as one CatalogError naming
    ``hive catalog <uri>``, the operation and the problem; those of the types in ``keep`` (the caller handles
    them: ``NoSuchObjectException``, ...) unchanged."""
    from thriftpy2.thrift import TException

    try:
        yield
    except CatalogError:
        raise
    except TException as e:
        if isinstance(e, keep):
            raise
        raise CatalogError(f"hive catalog {uri}: {what}: {describe(e)}") from None
