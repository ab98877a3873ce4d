"""Paimon schemas, databases, partitions and views as the Hive Metastore holds them: pure functions from our values
to the Thrift structs (and back for views), exactly as Paimon Java's ``HiveCatalog`` writes them (reference
``catalogs-paimon-java.md`` §2: ``newHmsTable``/``updateHmsTable``, ``HiveTypeUtils``, ``HiveMetastoreClient``,
``createView``/``getView``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from table_engine.catalog.hive.idl import hms
from table_engine.catalog.metastore import ViewDef
from table_engine.errors import CatalogError
from table_engine.format.schema_file import TableSchema
from table_engine.io.paths import escape_path_name
from table_engine.types import MAX_LENGTH, DataField, DataType

TABLE_TYPE_PROP = "table_type"
PAIMON_TABLE_TYPE = "PAIMON"
STORAGE_HANDLER_PROP = "storage_handler"  # hive_metastoreConstants.META_TABLE_STORAGE
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
COMMENT_PROP = "comment"
OWNER_PROP = "owner"
LOCATION_PROP = "location"
HIVE_PREFIX = "hive."
EXTERNAL_PROP = "EXTERNAL"
PARTITIONED_TABLE_OPTION = "metastore.partitioned-table"
MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
# Hive 2.3.10's ``Table.getEmptyTable``, which Paimon's createView starts from
EMPTY_TABLE_INPUT_FORMAT = "org.apache.hadoop.mapred.SequenceFileInputFormat"
EMPTY_TABLE_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
EMPTY_TABLE_SERDE = "org.apache.hadoop.hive.serde2.MetadataTypedColumnsetSerDe"
RETENTION = 2147483647  # Java's Integer.MAX_VALUE
HIVE_MAX_CHAR_LENGTH = 255  # HiveChar.MAX_CHAR_LENGTH
HIVE_MAX_VARCHAR_LENGTH = 65535  # HiveVarchar.MAX_VARCHAR_LENGTH
COLUMN_COMMENT_MAX_LENGTH = 255  # the metastore's COLUMNS_V2.COMMENT

_SIMPLE = {"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int", "BIGINT": "bigint",
           "FLOAT": "float", "DOUBLE": "double", "DATE": "date", "TIME": "string", "TIMESTAMP": "timestamp",
           # Hive 2.3 has no TIMESTAMP WITH LOCAL TIME ZONE: Paimon's LocalZonedTimestampTypeUtils falls back to it
           "TIMESTAMP_LTZ": "timestamp", "BINARY": "binary", "VARBINARY": "binary", "BLOB": "binary"}


def hive_type(t: DataType) -> str:
    """The Hive type string of a Paimon type (``HiveTypeUtils.toTypeInfo(t).getTypeName()``)."""
    r = t.root
    if r in _SIMPLE:
        return _SIMPLE[r]
    if r == "DECIMAL":
        return f"decimal({t.precision},{t.scale})"
    if r in ("CHAR", "VARCHAR"):
        limit = HIVE_MAX_CHAR_LENGTH if r == "CHAR" else HIVE_MAX_VARCHAR_LENGTH
        length = MAX_LENGTH if t.length is None else t.length
        return "string" if length > limit else f"{r.lower()}({length})"
    if r in ("ARRAY", "VECTOR"):
        assert t.element is not None
        return f"array<{hive_type(t.element)}>"
    if r == "MAP":
        assert t.key is not None and t.value is not None
        return f"map<{hive_type(t.key)},{hive_type(t.value)}>"
    if r == "MULTISET":
        assert t.element is not None
        return f"map<{hive_type(t.element)},int>"
    if r == "ROW":
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}" for f in t.fields) + ">"
    if r == "VARIANT":
        return "struct<value:binary,metadata:binary>"
    raise CatalogError(f"type {t.sql()} has no Hive type")


def column(f: DataField) -> Any:
    """A data column (``HiveCatalog.convertToColumnFieldSchema``): the comment on one line, at most 255 characters."""
    comment = f.description
    if comment is not None:
        comment = comment.replace("\n", " ").replace("\r", " ")
        if len(comment) > COLUMN_COMMENT_MAX_LENGTH:
            comment = comment[:COLUMN_COMMENT_MAX_LENGTH - 3] + "..."
    return hms().FieldSchema(name=f.name, type=hive_type(f.type), comment=comment)


def partition_column(f: DataField) -> Any:
    """A partition key column (``HiveCatalog.convertToFieldSchema``): the comment as it is."""
    return hms().FieldSchema(name=f.name, type=hive_type(f.type), comment=f.description)


def hive_location(path: str) -> str:
    """A location as the metastore qualifies it (Hadoop ``Path.toString`` of a local path): ``/w/db.db`` and
    ``file:///w/db.db`` -> ``file:/w/db.db``; other schemes (``s3://b/w``) unchanged."""
    if path.startswith("/"):
        return "file:" + path
    if path.startswith("file:///"):
        return "file:/" + path[len("file:///"):]
    return path


def metastore_partitioned(schema: TableSchema) -> bool:
    """Whether the table's partitions are registered in the metastore (``metastore.partitioned-table=true``)."""
    return bool(schema.partition_keys) and schema.options.get(PARTITIONED_TABLE_OPTION, "false").lower() == "true"


def database(name: str, location: str, properties: Mapping[str, str]) -> Any:
    """A database (``HiveCatalog.convertToHiveDatabase``): ``comment``, ``owner`` and ``location`` properties
    become its description, owner and location; the others its parameters."""
    params = {k: v for k, v in properties.items() if k not in (COMMENT_PROP, OWNER_PROP, LOCATION_PROP)}
    return hms().Database(name=name, description=properties.get(COMMENT_PROP),
                          locationUri=hive_location(properties.get(LOCATION_PROP, location)), parameters=params,
                          ownerName=properties.get(OWNER_PROP), ownerType=None)


def database_properties(db: Any) -> dict[str, str]:
    """A database's properties as Paimon reads them back (``HiveCatalog.getDatabaseImpl``)."""
    props = dict(db.parameters or {})
    if db.description is not None:
        props[COMMENT_PROP] = db.description
    if db.ownerName is not None:
        props[OWNER_PROP] = db.ownerName
    if db.locationUri is not None:
        props[LOCATION_PROP] = db.locationUri
    return props


def table_parameters(schema: TableSchema) -> dict[str, str]:
    """The ``hive.``-prefixed table options without the prefix (``convertToPropertiesPrefixKey``; Java's
    ``sync-all-properties`` default false)."""
    return {k[len(HIVE_PREFIX):]: v for k, v in schema.options.items() if k.startswith(HIVE_PREFIX)}


def table(db: str, name: str, location: str, schema: TableSchema, *, owner: str, now: int,
          external: bool = False) -> Any:
    """A Paimon table's registration (``HiveCatalog.newHmsTable`` + ``updateHmsTable``); ``now`` in seconds."""
    params = table_parameters(schema)
    params[TABLE_TYPE_PROP] = PAIMON_TABLE_TYPE
    params[STORAGE_HANDLER_PROP] = STORAGE_HANDLER
    if external:
        params[EXTERNAL_PROP] = "TRUE"
    t = hms().Table(tableName=name, dbName=db, owner=owner, createTime=now, lastAccessTime=now, retention=RETENTION,
                    sd=None, partitionKeys=[], parameters=params, viewOriginalText=None, viewExpandedText=None,
                    tableType=EXTERNAL_TABLE if external else MANAGED_TABLE, temporary=None)
    update_table(t, location, schema)
    return t


def update_table(t: Any, location: str, schema: TableSchema) -> None:
    """Set a registration's storage descriptor, columns, partition keys, comment and location from ``schema``
    (``HiveCatalog.updateHmsTable``; ``alter_table`` after a schema change calls it on the table it read back)."""
    h = hms()
    sd = t.sd if t.sd is not None else h.StorageDescriptor(
        cols=[], location=None, inputFormat=None, outputFormat=None, compressed=False, numBuckets=0,
        serdeInfo=None, bucketCols=[], sortCols=[], parameters={}, skewedInfo=None, storedAsSubDirectories=None)
    sd.inputFormat = INPUT_FORMAT
    sd.outputFormat = OUTPUT_FORMAT
    serde = sd.serdeInfo if sd.serdeInfo is not None else h.SerDeInfo()
    serde.parameters = {}
    serde.serializationLib = SERDE
    sd.serdeInfo = serde
    if metastore_partitioned(schema):
        keys = set(schema.partition_keys)
        t.partitionKeys = [partition_column(schema.field(k)) for k in schema.partition_keys]
        sd.cols = [column(f) for f in schema.fields if f.name not in keys]
    else:
        sd.cols = [column(f) for f in schema.fields]
    t.sd = sd
    if t.parameters is None:
        t.parameters = {}
    if schema.comment is not None:
        t.parameters[COMMENT_PROP] = schema.comment
    sd.location = hive_location(location)


def is_paimon_table(t: Any) -> bool:
    """A registration of a Paimon table (``HiveCatalog.isPaimonTable``: Paimon's input and output formats)."""
    return t.sd is not None and t.sd.inputFormat == INPUT_FORMAT and t.sd.outputFormat == OUTPUT_FORMAT


def partition_location(table_location: str, spec: Mapping[str, str]) -> str:
    """``<table location>/k=v/...`` with Paimon's escaping (``PartitionPathUtils.generatePartitionPath``, without
    its trailing separator, which the metastore drops)."""
    return table_location.rstrip("/") + "/" + "/".join(
        f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in spec.items())


def partitions(t: Any, specs: Sequence[Mapping[str, str]], *, now: int) -> list[Any]:
    """The metastore partitions of a registered table (``HiveMetastoreClient.addPartition``): values in partition
    key order, a copy of the table's storage descriptor at ``<table location>/k=v``."""
    h = hms()
    keys = [k.name for k in t.partitionKeys or []]
    out = []
    for spec in specs:
        if sorted(spec) != sorted(keys):
            raise CatalogError(f"partition {dict(spec)} of {t.dbName}.{t.tableName} does not name exactly the "
                               f"partition keys {keys}")
        ordered = {k: spec[k] for k in keys}
        sd = _copy(t.sd)
        sd.location = partition_location(t.sd.location, ordered)
        out.append(h.Partition(values=list(ordered.values()), dbName=t.dbName, tableName=t.tableName,
                               createTime=now, lastAccessTime=now, sd=sd, parameters=None))
    return out


def _copy(sd: Any) -> Any:
    """A deep enough copy of a storage descriptor (Java's ``new StorageDescriptor(sd)``)."""
    h = hms()
    serde = sd.serdeInfo
    return h.StorageDescriptor(
        cols=[h.FieldSchema(name=c.name, type=c.type, comment=c.comment) for c in sd.cols or []],
        location=sd.location, inputFormat=sd.inputFormat, outputFormat=sd.outputFormat, compressed=sd.compressed,
        numBuckets=sd.numBuckets,
        serdeInfo=None if serde is None else h.SerDeInfo(name=serde.name, serializationLib=serde.serializationLib,
                                                         parameters=dict(serde.parameters or {})),
        bucketCols=list(sd.bucketCols or []), sortCols=list(sd.sortCols or []), parameters=dict(sd.parameters or {}),
        skewedInfo=sd.skewedInfo, storedAsSubDirectories=sd.storedAsSubDirectories)


def view(v: ViewDef, *, now: int) -> Any:
    """A view (``HiveCatalog.createView``): Hive 2.3.10's ``Table.getEmptyTable`` (its storage descriptor and serde,
    no owner outside a Hive session) as ``VIRTUAL_VIEW``, the query as original and expanded text, the options and
    ``comment`` as parameters, the columns in ``sd.cols``. Paimon keeps no dialects in the metastore."""
    h = hms()
    params = dict(v.options)
    if v.comment is not None:
        params[COMMENT_PROP] = v.comment
    sd = h.StorageDescriptor(
        cols=[column(f) for f in v.fields], location=None, inputFormat=EMPTY_TABLE_INPUT_FORMAT,
        outputFormat=EMPTY_TABLE_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
        serdeInfo=h.SerDeInfo(name=None, serializationLib=EMPTY_TABLE_SERDE, parameters={"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={},
        skewedInfo=h.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=None)
    return h.Table(tableName=v.name, dbName=v.database, owner=None, createTime=now, lastAccessTime=0, retention=0,
                   sd=sd, partitionKeys=[], parameters=params, viewOriginalText=v.query, viewExpandedText=v.query,
                   tableType=VIRTUAL_VIEW, temporary=None)


def view_def(t: Any) -> ViewDef:
    """A view read back (``HiveCatalog.getView``): columns from ``sd.cols``, the expanded text as the query,
    ``comment`` taken out of the parameters (the others, and what the server adds, are its options)."""
    options = dict(t.parameters or {})
    comment = options.pop(COMMENT_PROP, None)
    fields = tuple(DataField(i, c.name, paimon_type(c.type), c.comment) for i, c in enumerate(t.sd.cols or []))
    return ViewDef(database=t.dbName, name=t.tableName, fields=fields, query=t.viewExpandedText or "", dialects={},
                   comment=comment, options=options)


_HIVE_ATOMIC = {"boolean": DataType("BOOLEAN"), "tinyint": DataType("TINYINT"), "smallint": DataType("SMALLINT"),
                "int": DataType("INT"), "bigint": DataType("BIGINT"), "float": DataType("FLOAT"),
                "double": DataType("DOUBLE"), "date": DataType("DATE"), "timestamp": DataType("TIMESTAMP", precision=6),
                "string": DataType("VARCHAR", length=MAX_LENGTH), "binary": DataType("VARBINARY", length=MAX_LENGTH)}
_HIVE_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|\d+|[<>(),:])")


def paimon_type(text: str) -> DataType:
    """The Paimon type of a Hive type string (``HiveTypeUtils.toPaimonType``): ``string`` -> STRING, ``binary`` ->
    BYTES, ``struct<a:int>`` -> ROW<a INT>, ..."""
    parser = _HiveTypeParser(text)
    result = parser.parse()
    if parser.pos != len(parser.tokens):
        raise parser.error()
    return result


class _HiveTypeParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = _HIVE_TOKEN.findall(text)
        self.pos = 0

    def error(self) -> CatalogError:
        return CatalogError(f"cannot read Hive type {self.text!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        if self.pos >= len(self.tokens):
            raise self.error()
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expect(self, tok: str) -> None:
        if self.take() != tok:
            raise self.error()

    def ints(self) -> list[int]:
        out: list[int] = []
        if self.peek() == "(":
            self.take()
            while not out or self.take() == ",":
                out.append(int(self.take()))
            if self.tokens[self.pos - 1] != ")":
                raise self.error()
        return out

    def parse(self) -> DataType:
        name = self.take().lower()
        if name in _HIVE_ATOMIC:
            return _HIVE_ATOMIC[name]
        if name == "decimal":
            args = self.ints() or [10, 0]
            return DataType("DECIMAL", precision=args[0], scale=args[1] if len(args) > 1 else 0)
        if name in ("char", "varchar"):
            args = self.ints()
            if len(args) != 1:
                raise self.error()
            return DataType(name.upper(), length=args[0])
        self.expect("<")
        if name == "array":
            out = DataType("ARRAY", element=self.parse())
        elif name == "map":
            key = self.parse()
            self.expect(",")
            out = DataType("MAP", key=key, value=self.parse())
        elif name == "struct":
            out = DataType("ROW", fields=self.struct_fields())
        else:
            raise self.error()
        self.expect(">")
        return out

    def struct_fields(self) -> tuple[DataField, ...]:
        fields: list[DataField] = []
        while not fields or self.peek() == ",":
            if fields:
                self.take()
            name = self.take()
            self.expect(":")
            fields.append(DataField(len(fields), name, self.parse()))
        return tuple(fields)


# ---- format tables (HiveCatalog.createFormatTable / HiveTableUtils.tryToFormatSchema) ----------------------------
FILE_FORMAT_OPTION = "file.format"
TYPE_OPTION = "type"
FORMAT_TABLE_TYPE = "format-table"
FIELD_DELIM = "field.delim"  # serdeConstants.FIELD_DELIM
CSV_FIELD_DELIMITER = "csv.field-delimiter"  # Paimon's CsvOptions.FIELD_DELIMITER
CSV_FIELD_DELIMITER_DEFAULT = ","
HIVE_FIELD_DELIM_DEFAULT = "\u0001"  # HiveCatalog.HIVE_FIELD_DELIM_DEFAULT: a text table's serde without field.delim
TEXT_INPUT_FORMAT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
FORMAT_STORAGE: Mapping[str, tuple[str, str, str]] = {
    # file.format -> (serde, input format, output format): HiveCatalog.getSerdeClassName/getInputFormatName/...
    "csv": ("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", TEXT_INPUT_FORMAT, TEXT_OUTPUT_FORMAT),
    "json": ("org.apache.hive.hcatalog.data.JsonSerDe", TEXT_INPUT_FORMAT, TEXT_OUTPUT_FORMAT),
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"),
}


def format_table(db: str, name: str, location: str, schema: TableSchema, *, owner: str, now: int,
                 external: bool = False) -> Any:
    """A format table's registration (``HiveCatalog.createHiveFormatTable``): every option as a table parameter,
    ``table_type`` the format's upper-case name, ``file.format`` and ``type`` = ``format-table``; the format's serde
    and input/output formats (csv: ``field.delim`` from ``csv.field-delimiter``, default ``,``); partition keys
    always registered as the Hive table's; the location."""
    h = hms()
    fmt = schema.options.get(FILE_FORMAT_OPTION, "parquet").lower()
    if fmt not in FORMAT_STORAGE:
        raise CatalogError(f"format table {db}.{name}: 'file.format' = {fmt!r} has no Hive storage here (csv, json, "
                           "parquet, orc)")
    serde, input_format, output_format = FORMAT_STORAGE[fmt]
    params = dict(schema.options)
    params.update({TABLE_TYPE_PROP: fmt.upper(), FILE_FORMAT_OPTION: fmt, TYPE_OPTION: FORMAT_TABLE_TYPE})
    if schema.comment is not None:
        params[COMMENT_PROP] = schema.comment
    if external:
        params[EXTERNAL_PROP] = "TRUE"
    serde_params = {FIELD_DELIM: schema.options.get(CSV_FIELD_DELIMITER, CSV_FIELD_DELIMITER_DEFAULT)} \
        if fmt == "csv" else {}
    keys = set(schema.partition_keys)
    sd = h.StorageDescriptor(
        cols=[column(f) for f in schema.fields if f.name not in keys], location=hive_location(location),
        inputFormat=input_format, outputFormat=output_format, compressed=False, numBuckets=0,
        serdeInfo=h.SerDeInfo(name=None, serializationLib=serde, parameters=serde_params), bucketCols=[],
        sortCols=[], parameters={}, skewedInfo=None, storedAsSubDirectories=None)
    return h.Table(tableName=name, dbName=db, owner=owner, createTime=now, lastAccessTime=now, retention=RETENTION,
                   sd=sd, partitionKeys=[partition_column(schema.field(k)) for k in schema.partition_keys],
                   parameters=params, viewOriginalText=None, viewExpandedText=None,
                   tableType=EXTERNAL_TABLE if external else MANAGED_TABLE, temporary=None)


def is_format_table(t: Any) -> bool:
    """Whether a Hive table is a format table (``HiveCatalog.isFormatTable``); one with a column type this engine
    cannot read is not (listing a database never fails on a table it would not open)."""
    try:
        return format_table_schema(t) is not None
    except CatalogError:
        return False


def format_table_schema(t: Any) -> TableSchema | None:
    """The format-table definition of a Hive table (``HiveTableUtils.tryToFormatSchema``), or None when it is not
    one: a view, a Paimon table, a table without storage descriptor or serde, a ``TEXT`` table or any format but
    parquet, orc, csv (text input, other serde) and json (text input, a json serde). Its options are the table's
    parameters with ``type`` = ``format-table``, ``file.format``, ``path`` = its location and, for csv,
    ``csv.field-delimiter`` = the serde's ``field.delim`` (Hive's default, U+0001, when unset)."""
    if t.tableType == VIRTUAL_VIEW or is_paimon_table(t) or t.sd is None or t.sd.serdeInfo is None:
        return None
    options = dict(t.parameters or {})
    comment = options.pop(COMMENT_PROP, None)
    lib = (t.sd.serdeInfo.serializationLib or "").lower()
    text_input = "Text" in (t.sd.inputFormat or "")
    if "parquet" in lib:
        fmt = "parquet"
    elif "orc" in lib:
        fmt = "orc"
    elif text_input and "json" in lib:
        fmt = "json"
    elif text_input and options.get(TABLE_TYPE_PROP) != "TEXT":
        fmt = "csv"
        options[CSV_FIELD_DELIMITER] = (t.sd.serdeInfo.parameters or {}).get(FIELD_DELIM, HIVE_FIELD_DELIM_DEFAULT)
    else:
        return None
    options.update({"path": t.sd.location, TYPE_OPTION: FORMAT_TABLE_TYPE, FILE_FORMAT_OPTION: fmt})
    cols = list(t.sd.cols or []) + list(t.partitionKeys or [])
    fields = [DataField(i, c.name, paimon_type(c.type), c.comment) for i, c in enumerate(cols)]
    return TableSchema(id=0, fields=tuple(fields), highest_field_id=len(fields) - 1,
                       partition_keys=tuple(k.name for k in t.partitionKeys or []), options=options, comment=comment)
