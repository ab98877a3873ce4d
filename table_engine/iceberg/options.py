"""The ``metadata.iceberg.*`` table options of one schema, parsed (Paimon's ``IcebergOptions``).

The keys, their types, defaults and descriptions are registered in :mod:`table_engine.core_options` (section
"Iceberg compatibility"); this module reads them into :class:`IcebergOptions`, the one place that decides which
storage a table's commits write to (Paimon 0.9's ``metadata.iceberg-compatible`` counts as ``table-location``) and
which manifest codec they use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from table_engine.core_enums import IcebergStorage, IcebergStorageLocation
from table_engine.core_options import (
    METADATA_ICEBERG_COMPACT_MAX_FILE_NUM,
    METADATA_ICEBERG_COMPACT_MIN_FILE_NUM,
    METADATA_ICEBERG_COMPATIBLE,
    METADATA_ICEBERG_DELETE_AFTER_COMMIT,
    METADATA_ICEBERG_MANIFEST_COMPRESSION,
    METADATA_ICEBERG_MANIFEST_LEGACY_VERSION,
    METADATA_ICEBERG_PREVIOUS_VERSIONS_MAX,
    METADATA_ICEBERG_STORAGE,
    METADATA_ICEBERG_STORAGE_LOCATION,
    METADATA_ICEBERG_TABLE_PROPERTIES_PREFIX,
)
from table_engine.errors import OptionError, UnsupportedError

StorageType = IcebergStorage
"""Where Iceberg metadata goes (``metadata.iceberg.storage``); the name this package has always used."""
StorageLocation = IcebergStorageLocation

_CODECS = {"null": "null", "none": "null", "deflate": "deflate", "gzip": "deflate", "zstd": "zstandard",
           "zstandard": "zstandard"}


def iceberg_storage(options: Mapping[str, str]) -> IcebergStorage:
    """The storage a table with ``options`` writes Iceberg metadata to (``disabled``: none); Paimon 0.9's
    ``metadata.iceberg-compatible`` = true is ``table-location``."""
    storage = METADATA_ICEBERG_STORAGE.value_from(options)
    if storage == IcebergStorage.DISABLED and METADATA_ICEBERG_COMPATIBLE.value_from(options):
        return IcebergStorage.TABLE_LOCATION
    return storage


@dataclass(frozen=True)
class IcebergOptions:
    """The Iceberg options of one table schema, parsed."""

    storage: IcebergStorage
    storage_location: IcebergStorageLocation | None
    """``metadata.iceberg.storage-location`` (None: the storage's default)"""
    compaction_min_file_num: int
    compaction_max_file_num: int
    codec: str
    """fastavro's codec name"""
    legacy_manifest_list: bool
    delete_after_commit: bool
    previous_versions_max: int
    table_properties: dict[str, str]
    """``metadata.iceberg.table-properties.<key>`` values by ``<key>``"""

    @staticmethod
    def of(options: Mapping[str, str]) -> IcebergOptions:
        """Parse ``options``; :class:`OptionError` for a bad value, :class:`UnsupportedError` for snappy."""
        compression = METADATA_ICEBERG_MANIFEST_COMPRESSION.value_from(options).strip().lower()
        if compression == "snappy":
            raise UnsupportedError("metadata.iceberg.manifest-compression=snappy: no snappy codec is installed; "
                                   "use deflate (the default here), zstd or null")
        if compression not in _CODECS:
            raise OptionError(f"metadata.iceberg.manifest-compression: unknown codec {compression!r} "
                              f"(one of {sorted(_CODECS)})")
        prefix = METADATA_ICEBERG_TABLE_PROPERTIES_PREFIX
        return IcebergOptions(
            iceberg_storage(options), METADATA_ICEBERG_STORAGE_LOCATION.value_from(options),
            METADATA_ICEBERG_COMPACT_MIN_FILE_NUM.value_from(options),
            METADATA_ICEBERG_COMPACT_MAX_FILE_NUM.value_from(options), _CODECS[compression],
            METADATA_ICEBERG_MANIFEST_LEGACY_VERSION.value_from(options),
            METADATA_ICEBERG_DELETE_AFTER_COMMIT.value_from(options),
            METADATA_ICEBERG_PREVIOUS_VERSIONS_MAX.value_from(options),
            {k[len(prefix):]: str(v) for k, v in sorted(options.items())
             if k.startswith(prefix) and len(k) > len(prefix)})
