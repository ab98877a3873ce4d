"""The ``paimon`` Python data source: ``spark.read/readStream/write/writeStream.format("paimon")`` (Spark 4.0+: import
this module only after :func:`table_engine.spark.require_data_sources`)."""

from __future__ import annotations

import logging
import os

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StringType, StructField, StructType

from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.reader import PaimonBatchReader, PaimonPushdownReader, PaimonStreamReader
from table_engine.spark.datasource.source_writer import PaimonBatchWriter, PaimonStreamWriter
from table_engine.spark.datasource.spark_types import arrow_schema_for, spark_schema
from table_engine.spark.datasource.writer import ROUTING_COLUMNS
from table_engine.store.changes.incremental import ROWKIND_COLUMN
from table_engine.table import Table

log = logging.getLogger(__name__)

SOURCE_NAME = o.SOURCE_NAME


class PaimonDataSource(DataSource):
    """Reads and writes a Paimon table through the table engine (options:
    :mod:`table_engine.spark.datasource.options`)."""

    #: The parallelism append scans are cut for (set by :func:`table_engine.spark.register` from the session;
    #: 0: this machine's cores). Python data sources run their planning outside the session, so it is baked here.
    parallelism: int = 0

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def _parallelism(self) -> int:
        return self.parallelism or os.cpu_count() or 1

    def _location(self) -> o.TableLocation:
        return o.TableLocation.of(self.options)

    def schema(self) -> StructType:
        table = self._location().open()
        leading = [StructField(ROWKIND_COLUMN, StringType(), False)] if o.get_bool(
            self.options, o.AUDIT_LOG, False) else []
        return spark_schema(table.schema.fields, leading)

    def reader(self, schema: StructType) -> DataSourceReader:
        table = self._location().open()
        if o.get_bool(self.options, o.FILTER_PUSHDOWN, True):
            return PaimonPushdownReader(table, self.options, schema, self._parallelism())
        return PaimonBatchReader(table, self.options, schema, self._parallelism())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return PaimonStreamReader(self._location().open(), self.options, schema, self._parallelism())

    def _table_for_write(self, schema: StructType) -> Table:
        location = self._location()
        if location.exists():
            return location.open()
        data_schema = StructType([f for f in schema.fields if f.name not in ROUTING_COLUMNS])
        table = location.create(arrow_schema_for(data_schema), self.options)
        log.info("created table %s for the write", table.identifier)
        return table

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return PaimonBatchWriter(self._table_for_write(schema), schema, overwrite, self.options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return PaimonStreamWriter(self._table_for_write(schema), schema, overwrite, self.options)
