"""Options of the ``paimon`` data source, and how it finds (or creates) its table.

A table is named by ``load(...)``/``save(...)`` (Spark's ``path`` option): either ``db.table`` together with the
``warehouse`` option, or the table's directory. Read options use Paimon's keys; write options are this data
source's own. Any other option of a write that creates the table becomes a table option (validated by the engine).

Object storage: ``warehouse`` and table paths may be ``s3://bucket/prefix`` (``s3a://`` alike). The storage options
(``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``, ``s3.region``, ``s3.path.style.access``... and pypaimon's
``fs.s3.*`` aliases, :mod:`table_engine.options.storage`) given as reader/writer options are catalog options: they
reach ``create_catalog(warehouse, options)`` / ``open_table(path, options)`` and never become table options of a table
the write creates (they stay out of its schema file). So do the catalog options of a metastore (``metastore``,
``uri``, ``lock.enabled``, ``catalog-key``, ``jdbc.*``, ``hive-conf-dir``: docs/catalogs.md) given with a
``warehouse``: the table is then found through that catalog (:func:`table_engine.catalog.create_catalog`).

Credentials on executors: the table (with its FileIO) is planned on the driver and pickled into every task, and an
S3 FileIO pickles as its settings. When no access key is given as an option, the credentials of the driver's
environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, and ``AWS_ENDPOINT_URL`` /
``AWS_ENDPOINT_URL_S3`` and ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` when the options name no endpoint or region) are
captured into those settings (:func:`catalog_options`), so executors on other hosts reach the store although only the
spark-submit process had them (the provider's route). They travel in the serialized tasks only: never in a Spark
option, a log line or an error (:class:`~table_engine.options.storage.S3Settings` hides them in its ``repr``).
Credentials that only a host's profile or instance role provides are resolved on each host by the AWS chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pyarrow as pa

from table_engine.catalog import create_catalog, open_table
from table_engine.catalog import options as catalog_registry
from table_engine.errors import TableEngineError, TableNotExistError
from table_engine.io.object_store import S3_SCHEMES
from table_engine.options import storage
from table_engine.table import Table

SOURCE_NAME = "paimon"
"""The data source's name: ``spark.read.format("paimon")`` (Spark 4.0+)."""
# where the table is
WAREHOUSE = "warehouse"
PATH = "path"
# reads (Paimon's keys)
SCAN_SNAPSHOT_ID = "scan.snapshot-id"
SCAN_TAG_NAME = "scan.tag-name"
SCAN_TIMESTAMP_MILLIS = "scan.timestamp-millis"
SCAN_MODE = "scan.mode"
INCREMENTAL_BETWEEN = "incremental-between"
INCREMENTAL_BETWEEN_TIMESTAMP = "incremental-between-timestamp"
CONSUMER_ID = "consumer-id"
CONSUMER_IGNORE_PROGRESS = "consumer.ignore-progress"
STREAMING_READ_OVERWRITE = "streaming-read-overwrite"
MAX_ROWS_PER_TRIGGER = "read.stream.maxRowsPerTrigger"
# reads (this data source)
AUDIT_LOG = "audit-log"
"""``true``: a leading ``rowkind`` column, and incremental/streaming reads keep -U/-D rows (Paimon's
``$audit_log``). Otherwise incremental and streaming reads return only +I/+U rows."""
FILTER_PUSHDOWN = "filterPushdown"
READ_FILES = "read.files"
"""Comma-separated data file names: read only these files of the planned splits (set by
:func:`table_engine.spark.datasource.native_read.read_table` for the files it leaves to this source)."""
"""``false`` for sessions that keep ``spark.sql.python.filterPushdown.enabled`` off."""
# writes (this data source)
COMMIT_USER = "commit-user"
"""Commit user of the job; a re-run with the same value does not commit twice (default: a fresh UUID per job,
for streams one derived from the checkpoint location)."""
COMMIT_USER_GENERATED = "commit-user.generated"
"""``true``: ``commit-user`` was generated for this write (``write_dataframe`` sets it), so no earlier snapshot can
be its and the commit reads no history to find one (constant cost however many snapshots the table has)."""
COMMIT_IDENTIFIER = "commit-identifier"
ASSIGNERS = "dynamic-bucket.assigner-parallelism"
"""Dynamic-bucket tables: number of routed writer tasks (set by :func:`table_engine.spark.prepare_write`)."""
ROWKIND_COLUMN = "rowkind-column"
"""A DataFrame column holding each row's kind (+I, -U, +U, -D), e.g. the ``rowkind`` of an audit-log read; it is
not written. (Tables with the ``rowkind.field`` option take kinds from that table column instead.)"""
UPSERT_KEYS = "upsert-keys"
"""Data-evolution tables: comma-separated key columns; the write is an upsert by key (``Table.upsert_by_key``)."""
PRIMARY_KEY = "primary-key"
PARTITION = "partition"
CHECKPOINT_LOCATION = "checkpointLocation"

_NOT_TABLE_OPTIONS = frozenset(k.lower() for k in (
    WAREHOUSE, PATH, SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, SCAN_MODE, INCREMENTAL_BETWEEN,
    INCREMENTAL_BETWEEN_TIMESTAMP, CONSUMER_ID, CONSUMER_IGNORE_PROGRESS, STREAMING_READ_OVERWRITE,
    MAX_ROWS_PER_TRIGGER, AUDIT_LOG, FILTER_PUSHDOWN, READ_FILES, COMMIT_USER, COMMIT_USER_GENERATED, COMMIT_IDENTIFIER,
    ASSIGNERS, ROWKIND_COLUMN, UPSERT_KEYS,
    PRIMARY_KEY, PARTITION, CHECKPOINT_LOCATION))


class DataSourceOptionError(TableEngineError, ValueError):
    """A bad option of the ``paimon`` data source."""


def get(options: Mapping[str, str], key: str) -> str | None:
    """Option ``key``, case-insensitively (Spark lower-cases option keys); blank counts as absent."""
    value = options.get(key)
    if value is None:
        value = options.get(key.lower())
    return value if value is not None and value.strip() != "" else None


def get_int(options: Mapping[str, str], key: str) -> int | None:
    """Data source option ``key`` as an integer, or None; DataSourceOptionError if it is not one."""
    value = get(options, key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise DataSourceOptionError(f"option {key!r} must be an integer, not {value!r}") from None


def get_bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    """Data source option ``key`` as ``true``/``false`` (``default`` if unset); DataSourceOptionError otherwise."""
    value = get(options, key)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise DataSourceOptionError(f"option {key!r} must be true or false, not {value!r}")
    return value.lower() == "true"


#: lower-cased storage option key (or alias) -> the key as registered (Spark lower-cases data source option keys)
_STORAGE_KEYS = {k.lower(): k for section in storage.REGISTRY.sections for opt in section.options for k in opt.keys}

#: the credentials among the AWS variables: taken from the driver's environment together, or not at all
_CREDENTIALS = (storage.S3_ACCESS_KEY, storage.S3_SECRET_KEY, storage.S3_SESSION_TOKEN)


#: lower-cased catalog option key (not a storage one) -> the key as registered: ``metastore``, ``uri``, ...
_METASTORE_KEYS = {k.lower(): k for section in catalog_registry.SECTIONS for opt in section.options for k in opt.keys
                   if k.lower() not in _STORAGE_KEYS and k != WAREHOUSE}


def is_storage_key(key: str) -> bool:
    """Whether ``key`` (in any case) is a storage (catalog) option or one of its aliases."""
    return key.lower() in _STORAGE_KEYS


def is_metastore_key(key: str) -> bool:
    """Whether ``key`` (in any case) is a catalog option of the metastore (``metastore``, ``uri``, ``lock.enabled``,
    ``catalog-key``, ``jdbc.*``, ``hive-conf-dir``, ...): given to the catalog of a ``warehouse``, never a table
    option."""
    return key.lower() in _METASTORE_KEYS or key.lower().startswith(catalog_registry.JDBC_PREFIX)


def metastore_options(options: Mapping[str, str]) -> dict[str, str]:
    """The catalog options of the metastore among ``options`` (keys as registered; ``jdbc.*`` as given)."""
    return {_METASTORE_KEYS.get(k.lower(), k): v for k, v in options.items() if is_metastore_key(k) and v is not None}


def catalog_options(path: str | None, options: Mapping[str, str]) -> dict[str, str]:
    """The catalog options of a warehouse or table ``path``: the storage options among ``options`` (any case, keys
    as registered), and, for an ``s3://`` path, what the options leave unset taken from this process's AWS
    environment (see the module docstring: the driver's credentials captured for the executors)."""
    out = {_STORAGE_KEYS[k.lower()]: v for k, v in options.items() if k.lower() in _STORAGE_KEYS and v is not None}
    if path is None or urlparse(path).scheme not in S3_SCHEMES:
        return out
    for variable in storage.AWS_ENVIRONMENT:  # endpoint and region, each where the options name none
        value = storage.aws_environment_value(variable.option)
        if variable.option not in _CREDENTIALS and value is not None and variable.option.find_key(out) is None:
            out[variable.option.key] = value
    if storage.S3_ACCESS_KEY.find_key(out) is None and storage.aws_environment_value(storage.S3_ACCESS_KEY):
        for option in _CREDENTIALS:  # the driver's credentials as a whole
            value = storage.aws_environment_value(option)
            if value is not None:
                out[option.key] = value
    return out


def _split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@dataclass(frozen=True)
class TableLocation:
    """Where the table of a read or write is: ``identifier`` in ``warehouse``, or a table directory."""

    target: str
    warehouse: str | None
    #: catalog options (storage access, possibly the driver's captured credentials): never shown
    catalog_options: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def of(options: Mapping[str, str]) -> TableLocation:
        target = get(options, PATH)
        if target is None:
            raise DataSourceOptionError(
                "no table given: use load('db.table') / save('db.table') with option 'warehouse', or the table path")
        warehouse = get(options, WAREHOUSE)
        location = TableLocation(target, warehouse)
        root = warehouse if location.is_identifier else target
        found = catalog_options(root, options)
        if location.is_identifier:  # the warehouse's catalog: the one its metastore options name
            found |= metastore_options(options)
        return TableLocation(target, warehouse, found)

    @property
    def is_identifier(self) -> bool:
        return self.warehouse is not None and "/" not in self.target and "://" not in self.target

    def open(self) -> Table:
        if self.is_identifier:
            assert self.warehouse is not None
            return create_catalog(self.warehouse, self.catalog_options).get_table(self.target)
        return open_table(self.target, self.catalog_options)

    def exists(self) -> bool:
        try:
            self.open()
        except TableNotExistError:
            return False
        return True

    def create(self, arrow_schema: pa.Schema, options: Mapping[str, str]) -> Table:
        """Create the table from a DataFrame's schema: ``primary-key`` and ``partition`` (comma lists) and every
        other option that is neither a data source option nor a storage option become the table's keys and options."""
        if not self.is_identifier:
            raise TableNotExistError(f"no Paimon table at {self.target}; to create one, save to 'db.table' with "
                                     "option 'warehouse'")
        assert self.warehouse is not None
        table_options = {k: v for k, v in options.items()
                         if k.lower() not in _NOT_TABLE_OPTIONS and not is_storage_key(k) and not is_metastore_key(k)}
        return create_catalog(self.warehouse, self.catalog_options).create_table(
            self.target, arrow_schema, primary_keys=_split_list(get(options, PRIMARY_KEY)),
            partition_keys=_split_list(get(options, PARTITION)), options=table_options, ignore_if_exists=True)
