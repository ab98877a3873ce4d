"""Paimon schemas, databases, partitions and views as the Hive Metastore holds them (mapping.py), as pure functions:
no server. The values are Paimon Java 1.0's HiveCatalog (reference catalogs-paimon-java.md §2, HiveTypeUtils)."""

from __future__ import annotations

import pathlib

import pytest

from table_engine.catalog.hive import mapping
from table_engine.catalog.hive.client import parse_addresses, resolve_uri
from table_engine.catalog.metastore import ViewDef
from table_engine.catalog.options import CatalogOptions
from table_engine.errors import CatalogError
from table_engine.format.schema_file import TableSchema, new_schema
from table_engine.types import DataField, parse_type

HIVE_TYPES = [
    ("STRING", "string"), ("VARCHAR(10)", "varchar(10)"), ("VARCHAR(65535)", "varchar(65535)"),
    ("VARCHAR(65536)", "string"), ("CHAR(5)", "char(5)"), ("CHAR(255)", "char(255)"), ("CHAR(256)", "string"),
    ("BIGINT", "bigint"), ("INT", "int"), ("SMALLINT", "smallint"), ("TINYINT", "tinyint"), ("BOOLEAN", "boolean"),
    ("DOUBLE", "double"), ("FLOAT", "float"), ("DECIMAL(12, 2)", "decimal(12,2)"), ("DECIMAL(38, 0)", "decimal(38,0)"),
    ("DATE", "date"), ("TIMESTAMP(6)", "timestamp"), ("TIMESTAMP(3)", "timestamp"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "timestamp"), ("TIME(0)", "string"), ("BYTES", "binary"),
    ("BINARY(4)", "binary"), ("VARBINARY(8)", "binary"), ("ARRAY<INT>", "array<int>"),
    ("MAP<STRING, BIGINT>", "map<string,bigint>"),
    ("ROW<a INT, b ARRAY<DECIMAL(5, 1)>>", "struct<a:int,b:array<decimal(5,1)>>"),
    ("MAP<STRING, ROW<x MAP<INT, STRING>>>", "map<string,struct<x:map<int,string>>>"),
    ("INT NOT NULL", "int"),
]


@pytest.mark.parametrize(("paimon", "hive"), HIVE_TYPES)
def test_hive_type_is_hive_type_utils(paimon: str, hive: str) -> None:
    assert mapping.hive_type(parse_type(paimon)) == hive


@pytest.mark.parametrize("hive", ["string", "binary", "int", "decimal(12,2)", "char(5)", "varchar(10)", "date",
                                  "timestamp", "array<map<string,struct<a:int,b:varchar(3)>>>", "tinyint"])
def test_paimon_type_reads_hive_type_strings_back(hive: str) -> None:
    assert mapping.hive_type(mapping.paimon_type(hive)) == hive


def test_paimon_type_of_string_and_binary_is_unbounded() -> None:
    assert mapping.paimon_type("string").sql() == "STRING"
    assert mapping.paimon_type("binary").sql() == "BYTES"
    assert mapping.paimon_type("timestamp").sql() == "TIMESTAMP(6)"
    with pytest.raises(CatalogError, match="cannot read Hive type 'array<int'"):
        mapping.paimon_type("array<int")


def schema(options: dict[str, str], comment: str | None = "orders") -> TableSchema:
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "amount", parse_type("DECIMAL(12, 2)")),
              DataField(2, "note", parse_type("STRING"), "free\ntext"), DataField(3, "dt", parse_type("STRING"), "day")]
    return new_schema(0, fields, ["dt"], ["id", "dt"], {"bucket": "2", "hive.sample-prop": "x", **options},
                      comment=comment)


def test_table_is_registered_as_java_registers_it() -> None:
    t = mapping.table("db", "t", "/w/db.db/t", schema({}), owner="alice", now=1700000000)
    assert (t.tableName, t.dbName, t.owner, t.createTime, t.lastAccessTime, t.retention) == \
        ("t", "db", "alice", 1700000000, 1700000000, 2147483647)
    assert t.tableType == "MANAGED_TABLE"
    assert t.parameters == {"table_type": "PAIMON", "storage_handler": "org.apache.paimon.hive.PaimonStorageHandler",
                            "comment": "orders", "sample-prop": "x"}
    assert t.partitionKeys == []  # metastore.partitioned-table is off
    assert [(c.name, c.type, c.comment) for c in t.sd.cols] == [
        ("id", "bigint", None), ("amount", "decimal(12,2)", None), ("note", "string", "free text"),
        ("dt", "string", "day")]
    sd = t.sd
    assert sd.location == "file:/w/db.db/t"
    assert (sd.inputFormat, sd.outputFormat) == ("org.apache.paimon.hive.mapred.PaimonInputFormat",
                                                 "org.apache.paimon.hive.mapred.PaimonOutputFormat")
    assert (sd.serdeInfo.name, sd.serdeInfo.serializationLib, sd.serdeInfo.parameters) == \
        (None, "org.apache.paimon.hive.PaimonSerDe", {})
    assert (sd.compressed, sd.numBuckets, sd.bucketCols, sd.sortCols, sd.parameters) == (False, 0, [], [], {})
    assert (t.viewOriginalText, t.viewExpandedText) == (None, None)


def test_partitioned_table_in_the_metastore_has_partition_keys_not_columns() -> None:
    t = mapping.table("db", "t", "/w/db.db/t", schema({"metastore.partitioned-table": "true"}, comment=None),
                      owner="alice", now=1)
    assert [(c.name, c.type, c.comment) for c in t.partitionKeys] == [("dt", "string", "day")]
    assert [c.name for c in t.sd.cols] == ["id", "amount", "note"]
    assert "comment" not in t.parameters


def test_external_table_type() -> None:
    t = mapping.table("db", "t", "s3://b/w/db.db/t", schema({}), owner="a", now=1, external=True)
    assert t.tableType == "EXTERNAL_TABLE" and t.parameters["EXTERNAL"] == "TRUE"
    assert t.sd.location == "s3://b/w/db.db/t"


def test_long_column_comments_are_cut_as_java_cuts_them() -> None:
    f = DataField(0, "c", parse_type("INT"), "x" * 300)
    assert mapping.column(f).comment == "x" * 252 + "..."
    assert mapping.partition_column(f).comment == "x" * 300


def test_database() -> None:
    d = mapping.database("db", "/w/db.db", {"comment": "c", "owner": "o", "k": "v"})
    assert (d.name, d.description, d.locationUri, d.parameters, d.ownerName) == ("db", "c", "file:/w/db.db",
                                                                                  {"k": "v"}, "o")
    assert mapping.database_properties(d) == {"comment": "c", "owner": "o", "k": "v", "location": "file:/w/db.db"}
    assert mapping.database("db", "/w/db.db", {"location": "file:///elsewhere"}).locationUri == "file:/elsewhere"


def test_partitions_follow_the_partition_keys_with_paimon_escaping() -> None:
    s = new_schema(0, [DataField(0, "v", parse_type("INT")), DataField(1, "dt", parse_type("STRING")),
                       DataField(2, "hr", parse_type("INT"))], ["dt", "hr"], [],
                   {"metastore.partitioned-table": "true"})
    t = mapping.table("db", "t", "/w/db.db/t", s, owner="a", now=1)
    [p] = mapping.partitions(t, [{"hr": "7", "dt": "a b/c:d"}], now=5)
    assert p.values == ["a b/c:d", "7"]
    assert p.sd.location == "file:/w/db.db/t/dt=a b%2Fc%3Ad/hr=7"
    assert (p.dbName, p.tableName, p.createTime, p.lastAccessTime) == ("db", "t", 5, 5)
    assert [c.name for c in p.sd.cols] == ["v"] and p.sd.serdeInfo.serializationLib == mapping.SERDE
    assert t.sd.location == "file:/w/db.db/t"  # the table's descriptor is copied, not changed
    with pytest.raises(CatalogError, match="partition keys"):
        mapping.partitions(t, [{"dt": "x"}], now=5)


def test_view_round_trip() -> None:
    v = ViewDef("db", "v", (DataField(0, "id", parse_type("BIGINT")), DataField(1, "s", parse_type("STRING"), "c")),
                "SELECT id, s FROM t", dialects={}, comment="a view", options={"k": "v"})
    t = mapping.view(v, now=9)
    assert (t.tableType, t.viewOriginalText, t.viewExpandedText, t.parameters, t.partitionKeys) == \
        ("VIRTUAL_VIEW", "SELECT id, s FROM t", "SELECT id, s FROM t", {"k": "v", "comment": "a view"}, [])
    assert [(c.name, c.type) for c in t.sd.cols] == [("id", "bigint"), ("s", "string")]
    assert mapping.view_def(t) == v


def test_uri_and_hive_conf_dir(tmp_path: pathlib.Path) -> None:
    assert parse_addresses("thrift://a:9083,thrift://b:9084") == [("a", 9083), ("b", 9084)]
    assert parse_addresses("thrift://a:9083, b:1") == [("a", 9083), ("b", 1)]
    with pytest.raises(CatalogError, match="'thrift://a' is not thrift://host:port"):
        parse_addresses("thrift://a")
    with pytest.raises(CatalogError, match="no 'uri'"):
        resolve_uri(CatalogOptions({}))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text("<configuration><property><name>hive.metastore.uris</name>"
                                        "<value>thrift://h:9083</value></property></configuration>")
    assert resolve_uri(CatalogOptions({"hive-conf-dir": str(conf)})) == "thrift://h:9083"
    assert resolve_uri(CatalogOptions({"hive-conf-dir": str(conf), "uri": "thrift://u:1"})) == "thrift://u:1"
    with pytest.raises(CatalogError, match="cannot read"):
        resolve_uri(CatalogOptions({"hive-conf-dir": str(tmp_path)}))
