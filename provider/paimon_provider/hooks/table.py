"""Read-only access to Paimon tables through the bundled engine, for sensors and XCom summaries (no Spark)."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from paimon_provider.utils.connection import CONN_TYPE, DEFAULT_CONN_ID, PaimonConnectionConfig
from paimon_provider.utils.job_spec import SPARK_CONNECT_CONN_TYPE, SparkConnection
from paimon_provider.utils.metadata import SnapshotInfo, latest_snapshot_info, open_table

if TYPE_CHECKING:
    import pyarrow as pa

    from table_engine.catalog import Catalog
    from table_engine.table import Table


def load_connection_config(conn_id: str) -> PaimonConnectionConfig:
    """Fetch and parse a ``paimon`` connection (secrets backends, environment, metadata DB)."""
    conn = BaseHook.get_connection(conn_id)
    return PaimonConnectionConfig.from_connection_fields(conn_id, conn.host, conn.extra_dejson, login=conn.login,
                                                         password=conn.password)


class PaimonTableHook(BaseHook):
    """Opens the tables of a Paimon warehouse read-only through ``table_engine``.

    The connection is resolved on first use, never in the constructor.

    :param paimon_conn_id: the ``paimon`` connection (warehouse, catalog options).
    :param warehouse: a warehouse URI that overrides the connection's (then the connection may be absent).
    """

    conn_name_attr = "paimon_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = CONN_TYPE
    hook_name = "Apache Paimon"

    def __init__(self, paimon_conn_id: str = DEFAULT_CONN_ID, warehouse: str | None = None) -> None:
        super().__init__()
        self.paimon_conn_id = paimon_conn_id
        self.warehouse_override = warehouse
        self._config: PaimonConnectionConfig | None = None

    def get_conn(self) -> PaimonConnectionConfig:
        """The resolved connection (cached)."""
        if self._config is None:
            if self.warehouse_override:
                try:
                    base = load_connection_config(self.paimon_conn_id)
                    self._config = dataclasses.replace(base, warehouse=self.warehouse_override)
                except Exception as e:  # noqa: BLE001 - any lookup failure: the explicit warehouse suffices
                    self.log.info("connection %s not usable (%s); using warehouse %s", self.paimon_conn_id, e,
                                  self.warehouse_override)
                    self._config = PaimonConnectionConfig(conn_id=self.paimon_conn_id,
                                                          warehouse=self.warehouse_override)
            else:
                self._config = load_connection_config(self.paimon_conn_id)
        return self._config

    @property
    def warehouse(self) -> str:
        return self.get_conn().warehouse

    def get_catalog(self) -> Catalog:
        """The warehouse's catalog in this process, the one the connection's ``metastore`` names (filesystem, JDBC or
        Hive: :meth:`PaimonConnectionConfig.open_catalog`), with the connection's catalog options and credentials.
        The caller closes it (``contextlib.closing``): a metastore's catalog holds connections to it."""
        return self.get_conn().open_catalog()

    def get_table(self, table: str) -> Table:
        """The engine's table object; this hook uses it for reading only (the catalog that found it is closed: a
        table reads its files without it)."""
        with contextlib.closing(self.get_catalog()) as catalog:
            return catalog.get_table(table)

    def find_table(self, table: str) -> Table | None:
        """The engine's table object, or None while the table does not exist (for
        :mod:`paimon_provider.utils.metadata`)."""
        with contextlib.closing(self.get_catalog()) as catalog:
            return open_table(catalog, table)

    def table_exists(self, table: str) -> bool:
        with contextlib.closing(self.get_catalog()) as catalog:
            return catalog.table_exists(table)

    def latest_snapshot(self, table: str) -> SnapshotInfo | None:
        return latest_snapshot_info(self.find_table(table))

    def read(self, table: str, columns: list[str] | None = None, filter: Any = None, limit: int | None = None,
             snapshot_id: int | None = None, tag: str | None = None) -> pa.Table:
        """Merged rows of the latest snapshot (or of ``snapshot_id`` / ``tag``); ``limit`` keeps the first rows.
        The table is reported to Airflow's hook lineage as an input, so a ``@task`` reading it through this hook
        names it in its OpenLineage events (docs/lineage.md)."""
        result = self.get_table(table).read(columns=columns, filter=filter, snapshot_id=snapshot_id, tag=tag)
        self._report_input(table)
        return result.slice(0, limit) if limit is not None else result

    def _report_input(self, table: str) -> None:
        """Hook lineage: ``table``'s Asset as an input of the running task (nothing when the warehouse is not the
        connection's: the Asset names the connection)."""
        if self.warehouse_override:
            return
        try:
            from airflow.sdk.lineage import get_hook_lineage_collector
        except ImportError:  # pragma: no cover - Airflow before 3.1
            return
        from paimon_provider.utils.assets import table_asset

        asset = table_asset(table, self.paimon_conn_id)
        get_hook_lineage_collector().add_input_asset(context=self, uri=asset.uri, name=asset.name,
                                                     group=asset.group)

    def table_summary(self, table: str) -> dict[str, Any]:
        """A JSON-friendly summary: keys, options, latest snapshot, snapshot ids, tags and consumers."""
        t = self.get_table(table)
        latest = latest_snapshot_info(t)
        return {
            "table": t.identifier,
            "path": t.path,
            "primary_keys": list(t.primary_keys),
            "partition_keys": list(t.partition_keys),
            "options": dict(t.schema.options),
            "latest_snapshot": latest.to_dict() if latest else None,
            "earliest_snapshot_id": t.earliest_snapshot_id(),
            "tags": t.list_tags(),
            "consumers": t.consumers(),
        }

    def test_connection(self) -> tuple[bool, str]:
        """For the connection form's Test button: the catalog the ``metastore`` names opens (a JDBC database or a
        Hive Metastore answers) and lists its databases (``ok: N databases``); the warehouse exists (on a file
        system: its directory; an object store has none); a probe object is created there (a conditional create, as
        commits do) and deleted, so the credentials may write; the Spark connection the jobs use is defined and
        valid. The first failure is the result; it never shows a secret (the engine's errors name the option and the
        server, not the value)."""
        try:
            config = self.get_conn()
            catalog = self.get_catalog()
        except Exception as e:  # noqa: BLE001 - reported to the user as the test result
            return False, f"connection {self.paimon_conn_id}: {e}"
        with contextlib.closing(catalog):  # a metastore's connections: not kept by the API server
            return self._test_catalog(config, catalog)

    def _test_catalog(self, config: PaimonConnectionConfig, catalog: Catalog) -> tuple[bool, str]:
        from table_engine.catalog import MetastoreKind

        # a REST server says where each table is (and may vend its credentials): no warehouse to probe
        rest = catalog.catalog_options.metastore() is MetastoreKind.REST
        try:
            if not rest and catalog.file_io.has_directories and not catalog.file_io.exists(config.warehouse):
                return False, (f"warehouse {config.warehouse} does not exist (no directory there: a wrong path, or "
                               "a warehouse no table was created in yet)")
            databases = catalog.list_databases()
        except Exception as e:  # noqa: BLE001
            return False, f"cannot list {_catalog_name(catalog, config.warehouse)}: {e}"
        done = [f"{_catalog_name(catalog, config.warehouse)} lists databases {databases} (ok: {len(databases)} "
                "databases)"]
        if rest:
            done.append("the REST server keeps the table files (no warehouse probe)")
        else:
            probe = f"{config.warehouse.rstrip('/')}/.airflow-test-connection-{uuid.uuid4().hex}"
            try:
                if not catalog.file_io.write_if_absent(probe, b"test_connection probe\n"):
                    return False, f"cannot create {probe}: it exists"
                catalog.file_io.delete(probe)
            except Exception as e:  # noqa: BLE001
                return False, f"cannot write to warehouse {config.warehouse} (create and delete {probe}): {e}"
            done.append("a probe object was created (if absent) and deleted")
        try:
            spark = BaseHook.get_connection(config.spark_conn_id)
            if spark.conn_type == SPARK_CONNECT_CONN_TYPE:  # jobs run as clients of a Spark Connect server
                master = _connect_server_answers(config.spark_conn_id)
            else:
                master = SparkConnection.from_fields(spark.conn_type, spark.host, spark.port,
                                                     spark.extra_dejson).master
        except Exception as e:  # noqa: BLE001
            return False, f"{'; '.join(done)}; but Spark connection {config.spark_conn_id!r}: {e}"
        done.append(f"Spark connection {config.spark_conn_id} has master {master}")
        return True, "; ".join(done)


def _catalog_name(catalog: Catalog, warehouse: str) -> str:
    """``warehouse <w>`` for the filesystem catalog, ``the <metastore> catalog of <w>`` for a metastore's."""
    from table_engine.catalog import Catalog as FileSystemCatalog

    return f"warehouse {warehouse}" if type(catalog) is FileSystemCatalog else catalog.describe()


def _connect_server_answers(conn_id: str) -> str:
    """The Spark Connect server of connection ``conn_id`` (a ``spark_connect`` connection), as its URL without
    parameters, once its port accepts a connection; an error naming it otherwise."""
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    return connect_server_answers(SparkConnectHook(conn_id).get_connection_url())


def connect_server_answers(url: str) -> str:
    """The Spark Connect server at ``url`` (``sc://host[:port][/;params]``) as its URL without parameters, once its
    port accepts a connection; an error naming it otherwise."""
    import socket

    from table_engine.spark.compat import connect_address, redacted_url

    try:
        socket.create_connection(connect_address(url), timeout=5).close()
    except OSError as e:
        raise ValueError(f"Spark Connect server {redacted_url(url)} is not reachable: {e.strerror or e}") from None
    return f"{redacted_url(url)} (a Spark Connect server, answering)"
