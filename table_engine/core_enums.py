"""The enumerated values of Paimon table options (each member's value is the exact string Paimon writes)."""

from __future__ import annotations

import enum


class RowLevelOp(enum.Enum):
    """A row-level change (Paimon's Spark ``RowLevelOp``): what each merge engine takes is decided once, in its
    :data:`~table_engine.lsm.merge_engines.registry.ENGINES` entry."""

    DELETE = "delete"
    UPDATE = "update"
    MERGE = "merge"


class MergeEngine(enum.Enum):
    """Values of ``merge-engine``."""

    DEDUPLICATE = "deduplicate"
    PARTIAL_UPDATE = "partial-update"
    AGGREGATION = "aggregation"
    FIRST_ROW = "first-row"


class ChangelogProducer(enum.Enum):
    """Values of ``changelog-producer``."""

    NONE = "none"
    INPUT = "input"
    FULL_COMPACTION = "full-compaction"
    LOOKUP = "lookup"


class StartupMode(enum.Enum):
    """Values of ``scan.mode``."""

    DEFAULT = "default"
    LATEST_FULL = "latest-full"
    FULL = "full"
    LATEST = "latest"
    LATEST_DELTA = "latest-delta"
    COMPACTED_FULL = "compacted-full"
    FROM_TIMESTAMP = "from-timestamp"
    FROM_CREATION_TIMESTAMP = "from-creation-timestamp"
    FROM_FILE_CREATION_TIME = "from-file-creation-time"
    FROM_SNAPSHOT = "from-snapshot"
    FROM_SNAPSHOT_FULL = "from-snapshot-full"
    INCREMENTAL = "incremental"


class IncrementalBetweenScanMode(enum.Enum):
    """Values of ``incremental-between-scan-mode``."""

    AUTO = "auto"
    DELTA = "delta"
    CHANGELOG = "changelog"
    DIFF = "diff"


class ConsumerMode(enum.Enum):
    """Values of ``consumer.mode``."""

    EXACTLY_ONCE = "exactly-once"
    AT_LEAST_ONCE = "at-least-once"


class SortOrder(enum.Enum):
    """Values of ``sequence.field.sort-order``."""

    ASCENDING = "ascending"
    DESCENDING = "descending"


class BucketFunctionType(enum.Enum):
    """Values of ``bucket-function.type``."""

    DEFAULT = "default"
    MOD = "mod"
    HIVE = "hive"


class GlobalIndexColumnUpdateAction(enum.Enum):
    """Values of ``global-index.column-update-action``."""

    THROW_ERROR = "THROW_ERROR"
    DROP_PARTITION_INDEX = "DROP_PARTITION_INDEX"
    IGNORE = "IGNORE"


class TagCreationMode(enum.Enum):
    """Values of ``tag.automatic-creation``."""

    NONE = "none"
    PROCESS_TIME = "process-time"
    WATERMARK = "watermark"
    BATCH = "batch"


class TagCreationPeriod(enum.Enum):
    """Values of ``tag.creation-period``."""

    DAILY = "daily"
    HOURLY = "hourly"
    TWO_HOURS = "two-hours"


class TagPeriodFormatter(enum.Enum):
    """Values of ``tag.period-formatter``."""

    WITH_DASHES = "with_dashes"
    WITHOUT_DASHES = "without_dashes"
    WITHOUT_DASHES_AND_SPACES = "without_dashes_and_spaces"


class PartitionExpireStrategy(enum.Enum):
    """Values of ``partition.expiration-strategy``."""

    VALUES_TIME = "values-time"
    UPDATE_TIME = "update-time"


class RecordLevelTimeFieldType(enum.Enum):
    """Values of ``record-level.time-field-type``."""

    SECONDS_INT = "seconds-int"
    SECONDS_LONG = "seconds-long"
    MILLIS_LONG = "millis-long"
    TIMESTAMP = "timestamp"


class ExternalPathStrategy(enum.Enum):
    """Values of ``data-file.external-paths.strategy`` (Paimon's ``ExternalPathStrategy``)."""

    NONE = "none"
    SPECIFIC_FS = "specific-fs"
    ROUND_ROBIN = "round-robin"
    ENTROPY_INJECT = "entropy-inject"
    WEIGHTED = "weight-robin"


class IcebergStorage(enum.Enum):
    """Values of ``metadata.iceberg.storage`` (Paimon's ``IcebergOptions.StorageType``): where a commit writes the
    Iceberg metadata of its snapshot (docs/iceberg.md)."""

    DISABLED = "disabled"
    TABLE_LOCATION = "table-location"
    HADOOP_CATALOG = "hadoop-catalog"
    HIVE_CATALOG = "hive-catalog"
    REST_CATALOG = "rest-catalog"


class IcebergStorageLocation(enum.Enum):
    """Values of ``metadata.iceberg.storage-location`` (Paimon's ``IcebergOptions.StorageLocation``)."""

    TABLE_LOCATION = "table-location"
    CATALOG_LOCATION = "catalog-location"


class TableType(enum.Enum):
    """Values of ``type`` (Paimon's ``org.apache.paimon.TableType``, ``CoreOptions.TYPE``; not the Hive catalog's
    ``table.type``, :class:`table_engine.catalog.options.TableType`)."""

    TABLE = "table"
    FORMAT_TABLE = "format-table"
    MATERIALIZED_TABLE = "materialized-table"
    OBJECT_TABLE = "object-table"
    LANCE_TABLE = "lance-table"
    ICEBERG_TABLE = "iceberg-table"


DATA_TABLE_TYPES = frozenset({TableType.TABLE, TableType.MATERIALIZED_TABLE})
"""The ``type`` values of a Paimon data table (schema, snapshots, manifests): a materialized table is a data table
whose definition options (``materialized-table.*``) Flink reads."""

FILE_FORMATS = ("parquet", "orc", "avro")
"""The data file formats (``file.format`` values and data file name extensions), Parquet the default."""


class OrderType(enum.Enum):
    """How a sort compaction or a clustering orders rows (Paimon's ``OrderType``: the procedure's ``order_strategy``,
    and ``clustering.strategy`` besides ``auto``)."""

    ORDER = "order"
    ZORDER = "zorder"
    HILBERT = "hilbert"
    NONE = "none"
