"""The Hive Metastore metastore (``metastore=hive``), over Thrift with thriftpy2 and our IDL subset (ADR 0044)."""

from table_engine.catalog.hive.hive_metastore import HiveMetastore

__all__ = ["HiveMetastore"]
