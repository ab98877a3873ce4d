"""Format tables: a directory of csv, parquet, orc or json files in Hive-style partition directories, read and
written as a table as Paimon's ``FormatTable`` does (docs/format-tables.md). A catalog that holds them (Hive) builds
them with :func:`table_engine.format_table.catalog.format_table_from_schema`."""

from __future__ import annotations

from table_engine.format_table.options import CsvMode, FileFormat, FormatTableImplementation, FormatTableOptions
from table_engine.format_table.table import CommitResult, DataFile, FormatTable

__all__ = ["CommitResult", "CsvMode", "DataFile", "FileFormat", "FormatTable", "FormatTableImplementation",
           "FormatTableOptions"]
