"""The ``metadata.iceberg.*`` table options, with Paimon Java's keys and defaults (``IcebergOptions``, 1.0).

They are not in :mod:`table_engine.core_options` (the engine reads such tables but its commits do not yet write
Iceberg metadata: docs/adr/0046-iceberg-metadata.md), so this package declares them itself and reads them from a
schema's options with :meth:`ConfigOption.value_from`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from table_engine.errors import OptionError, UnsupportedError
from table_engine.options.config_option import key


class StorageType(Enum):
    """Where Iceberg metadata goes (``metadata.iceberg.storage``)."""

    DISABLED = "disabled"
    TABLE_LOCATION = "table-location"
    HADOOP_CATALOG = "hadoop-catalog"
    HIVE_CATALOG = "hive-catalog"


METADATA_ICEBERG_STORAGE = key("metadata.iceberg.storage").enum_type(StorageType).default_value(
    StorageType.DISABLED).with_description(
    "When set, produce Iceberg metadata after a snapshot is committed, so that Iceberg readers can read Paimon's "
    "raw data files.")
METADATA_ICEBERG_COMPATIBLE = key("metadata.iceberg-compatible").bool_type().default_value(False).with_description(
    "Paimon 0.9's switch (before `metadata.iceberg.storage`): true means `table-location`.")
COMPACT_MIN_FILE_NUM = key("metadata.iceberg.compaction.min.file-num").int_type().default_value(10).with_description(
    "Minimum number of Iceberg metadata files to trigger metadata compaction.")
COMPACT_MAX_FILE_NUM = key("metadata.iceberg.compaction.max.file-num").int_type().default_value(50).with_description(
    "If number of small Iceberg metadata files exceeds this limit, always trigger metadata compaction regardless "
    "of their total size.")
MANIFEST_COMPRESSION = key("metadata.iceberg.manifest-compression").string_type().default_value(
    "deflate").with_description(
    "Compression for Iceberg manifest files and manifest lists: null, deflate or zstd (Paimon's default, snappy, "
    "needs a snappy codec that neither this engine nor pyiceberg installs).")
MANIFEST_LEGACY_VERSION = key("metadata.iceberg.manifest-legacy-version").bool_type().default_value(
    False).with_description("Should use the legacy manifest version to generate Iceberg's 1.4 manifest files.")

_CODECS = {"null": "null", "none": "null", "deflate": "deflate", "gzip": "deflate", "zstd": "zstandard",
           "zstandard": "zstandard"}


@dataclass(frozen=True)
class IcebergOptions:
    """The Iceberg options of one table schema, parsed."""

    storage: StorageType
    compaction_min_file_num: int
    compaction_max_file_num: int
    codec: str
    """fastavro's codec name"""
    legacy_manifest_list: bool

    @staticmethod
    def of(options: Mapping[str, str]) -> IcebergOptions:
        """Parse ``options``; :class:`OptionError` for a bad value, :class:`UnsupportedError` for snappy."""
        storage = METADATA_ICEBERG_STORAGE.value_from(options)
        if storage == StorageType.DISABLED and METADATA_ICEBERG_COMPATIBLE.value_from(options):
            storage = StorageType.TABLE_LOCATION
        compression = MANIFEST_COMPRESSION.value_from(options).strip().lower()
        if compression == "snappy":
            raise UnsupportedError("metadata.iceberg.manifest-compression=snappy: no snappy codec is installed; "
                                   "use deflate (the default here), zstd or null")
        if compression not in _CODECS:
            raise OptionError(f"metadata.iceberg.manifest-compression: unknown codec {compression!r} "
                              f"(one of {sorted(_CODECS)})")
        return IcebergOptions(storage, COMPACT_MIN_FILE_NUM.value_from(options),
                              COMPACT_MAX_FILE_NUM.value_from(options), _CODECS[compression],
                              MANIFEST_LEGACY_VERSION.value_from(options))
