"""Iceberg-compatible metadata for Paimon tables (Paimon's ``metadata.iceberg.storage``; docs/iceberg.md).

:func:`write_iceberg_metadata` writes, for one Paimon snapshot, the Iceberg metadata Paimon Java's commit callback
writes (``<table>/metadata/v<N>.metadata.json``, ``version-hint.text``, manifest lists and manifests), so Iceberg
readers read the table's data files at that snapshot. A table whose options turn it on gives its store context an
:class:`IcebergCommitCallback`, so every snapshot a commit publishes gets its metadata (ADR 0046).
"""

from __future__ import annotations

from table_engine.iceberg.commit import (
    IcebergCommitCallback,
    IcebergCommitter,
    metadata_dir,
    write_iceberg_metadata,
    writes_iceberg_metadata,
)
from table_engine.iceberg.options import IcebergOptions, StorageType

__all__ = ["IcebergCommitCallback", "IcebergCommitter", "IcebergOptions", "StorageType", "metadata_dir",
           "write_iceberg_metadata", "writes_iceberg_metadata"]
