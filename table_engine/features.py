"""The capability gate's registry: every Paimon feature the engine detects in a table, and what it can do with it.

One :class:`Feature` per Paimon feature: its Paimon name (option key, type name, metadata field or file kind), the
Paimon version that introduced it, where it is detected, and its support per operation class (:class:`Op`): READ
(batch, incremental and streaming reads), WRITE (writes and commits) and MAINTAIN (compaction, expiry, orphan
cleanup, tags, rollback, partitions, file-index rewrite, changelog consumption). The gate fails closed: a feature
that is detected but not supported for the operation raises :class:`~table_engine.errors.UnsupportedTableFeatureError`
before any file is changed, and so does anything the engine does not recognise (a type, a table option outside
:data:`table_engine.core_options.REGISTRY`, a snapshot field, a data-file kind, an index kind).

Detection lives where the information is read: :func:`schema_features` (types and options, when a command starts),
:mod:`table_engine.format.feature_detection` (snapshot fields, data-file fields and kinds, index-manifest entries, as
the operation reads them). ``python -m table_engine.features > docs/compatibility.md`` regenerates the compatibility
page (checked by ``tests/table_engine/test_features.py``), whose catalogs section comes from :data:`CATALOGS` (what
Paimon Java 1.0's catalogs and the engine do on one metastore; documentation only, the gate does not use it).
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from table_engine.core_enums import DATA_TABLE_TYPES, FILE_FORMATS, TableType
from table_engine.errors import UnsupportedTableFeatureError

__all__ = [
    "CATALOGS",
    "FEATURES",
    "CatalogSupport",
    "TYPE_FEATURE_ROOTS",
    "Feature",
    "Op",
    "feature",
    "option_features",
    "render_markdown",
    "require",
    "type_features",
]


class Op(enum.Enum):
    """The operation classes the gate decides on."""

    READ = "read"
    WRITE = "write"
    MAINTAIN = "maintain"


class Detected(enum.Enum):
    """Where a feature is seen."""

    TYPE = "column type"
    OPTION = "table option"
    SNAPSHOT = "snapshot field"
    DATA_FILE = "data file"
    INDEX = "index manifest"


@dataclass(frozen=True)
class Feature:
    """One Paimon feature: ``name`` is its Paimon spelling (what the error and the docs show)."""

    name: str
    since: str
    detected: Detected
    how: str
    """how it is detected (for the docs)"""
    ops: frozenset[Op]
    """the operations the engine supports on a table that uses it"""
    note: str
    option_key: re.Pattern[str] | None = None
    """for option features: the keys that mean this feature (full match)"""
    option_active: Callable[[str], bool] | None = None
    """for option features: whether a value turns the feature on (None: any value). Several features may claim
    one key with values that do not overlap (``type``): the first active one is the feature found."""
    refusal: str = ""
    """Paimon's own message for the refused operations, added to the error (e.g. "Object table does not support
    Write.")"""
    option_when: Callable[[Mapping[str, str]], bool] | None = None
    """for option features that a combination of options turns on (no ``option_key``): whether ``options`` do"""

    def supports(self, op: Op) -> bool:
        """Whether the engine supports ``op`` on a table that uses this feature."""
        return op in self.ops



ALL = frozenset(Op)
READ_ONLY = frozenset({Op.READ})
NONE: frozenset[Op] = frozenset()


def _true(value: str) -> bool:
    return value.strip().lower() == "true"


def _set(value: str) -> bool:
    return value.strip() != ""


def _keys(*names: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(n) for n in names))


def _prefixes(*prefixes: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(p) + ".+" for p in prefixes))


#: ``type`` values the gate decides on as tables of the engine (data tables and object tables); any other is refused.
_GATED_TYPES = frozenset(t.value for t in (*DATA_TABLE_TYPES, TableType.OBJECT_TABLE))

ICEBERG_CATALOG_STORAGE = "metadata.iceberg.storage = hive-catalog / rest-catalog"
ICEBERG_WITH_DV = "Iceberg metadata with deletion vectors or data evolution"


def _iceberg_value(options: Mapping[str, str]) -> str:
    """The Iceberg storage ``options`` turn on (Paimon 0.9's ``metadata.iceberg-compatible`` = table-location)."""
    value = str(options.get("metadata.iceberg.storage", "disabled")).strip().lower()
    if value == "disabled" and _true(str(options.get("metadata.iceberg-compatible", "false"))):
        return "table-location"
    return value


#: Data-file extensions the engine reads and writes: the data file formats (``file.format`` values).
DATA_FILE_EXTENSIONS = frozenset(FILE_FORMATS)

FEATURES: tuple[Feature, ...] = (
    # ---- supported ---------------------------------------------------------------------------------------------
    Feature("file.format = orc / avro", "0.4", Detected.DATA_FILE, "`file.format`; each data file's extension",
            ALL, "ORC and Avro data files, read by extension and written by `file.format`."),
    Feature("deletion-vectors.bitmap64", "1.2", Detected.OPTION, "`deletion-vectors.bitmap64` = true; DV magic",
            ALL, "64-bit (Iceberg-compatible) deletion vectors are read and written.",
            _keys("deletion-vectors.bitmap64")),
    Feature("bucket = -2 (postpone bucket)", "1.1", Detected.OPTION, "`bucket` = -2, `postpone.*`",
            ALL, "Postpone-bucket tables: batch reads skip `bucket-postpone/`, compaction publishes the rows, "
            "`rescale`.", _prefixes("postpone.")),
    Feature("data-file.external-paths", "1.1", Detected.OPTION, "`data-file.external-paths*`; `_EXTERNAL_PATH`",
            ALL, "Data files outside the table directory, written there and followed by expiry and orphan "
            "cleanup.", _keys("data-file.external-paths", "data-file.external-paths.strategy",
                                         "data-file.external-paths.specific-fs", "data-file.external-paths.weights")),
    Feature("metadata.iceberg.storage", "0.9", Detected.OPTION,
            "`metadata.iceberg.storage` other than `disabled`; `metadata.iceberg-compatible` = true", ALL,
            "Iceberg-compatible metadata: with `table-location` or `hadoop-catalog` every snapshot a commit, "
            "compaction, drop partition, rollback or fast-forward publishes also gets Iceberg metadata "
            "(docs/iceberg.md; the rows below refuse the storages and table kinds that are not written).",
            _keys("metadata.iceberg.storage", "metadata.iceberg-compatible"),
            lambda v: v.strip().lower() not in ("", "disabled", "false")),
    Feature("snapshot properties", "1.2", Detected.SNAPSHOT, "snapshot field `properties`", ALL,
            "Read, kept, and writable through the commit API."),
    Feature("snapshot operation / uuid / writerVersion", "2.0", Detected.SNAPSHOT,
            "snapshot fields `operation`, `uuid`, `writerVersion`", ALL,
            "Descriptive fields: kept and ignored; they change no rows."),
    Feature("file.format.per.level / file.compression.per.level", "0.8", Detected.OPTION,
            "`file.format.per.level`, `file.compression.per.level`", ALL,
            "Per-level formats and codecs of the writer.",
            _keys("file.format.per.level", "file.compression.per.level")),
    Feature("VARIANT", "1.1", Detected.TYPE, "a column of type VARIANT", ALL,
            "Read and written as Arrow `struct<value: binary, metadata: binary>` (Paimon's unshredded variant "
            "encoding); no statistics (ADR 0018)."),
    Feature("VECTOR", "1.4", Detected.TYPE, "a column of type VECTOR<t, n>", ALL,
            "Read and written as Arrow `fixed_size_list<t>[n]` in Parquet and Avro files; no statistics "
            "(ADR 0018)."),
    Feature("BLOB", "1.4", Detected.TYPE, "a column of type BLOB; `.blob` files", ALL,
            "BLOB columns are `.blob` column files over row ids of data evolution: read (as `large_binary`), "
            "written as Paimon writes them (`.blob` files rolled at `blob.target-file-size`, also from serialized "
            "descriptors), compacted (the `.blob` files kept as they are), expired and cleaned; updates by row id "
            "and writes of some columns that include a BLOB column are refused, and so are reads of a BLOB column "
            "pypaimon updated by row id (delta `.blob` files) or that covers part of a row range (ADR 0018).",
            None, None),
    Feature("data-evolution.enabled", "1.3", Detected.OPTION, "`data-evolution.enabled` = true", ALL,
            "Batch reads merge the column files of each row range (newest write of a column wins, the range's "
            "deletion vector applied); every shape pypaimon writes is written as it writes it: "
            "`table.data_evolution.update_by_row_id`, `upsert_by_key` and writes of some columns write column files, "
            "`delete_by_row_id` / `delete_by_predicate` deletion vectors; compaction merges the column files into one "
            "file per range, row ids kept. Reads of changes (incremental, streaming, changelog consumers) are refused.",
            _keys("data-evolution.enabled"), _true),
    Feature("_WRITE_COLS", "1.3", Detected.DATA_FILE, "data-file field `_WRITE_COLS` set", ALL,
            "A column file of data evolution: batch reads merge it by row id, compaction merges it away."),
    Feature("row-tracking.enabled", "1.3", Detected.OPTION, "`row-tracking.enabled` = true", ALL,
            "`_ROW_ID` and `_SEQUENCE_NUMBER` are readable system columns (projection, filters, `$row_tracking`); "
            "commits assign `_FIRST_ROW_ID` and `nextRowId`; compaction, deletion vectors, file-index rewrite, "
            "overwrite, drop, expiry keep the ids (ADR 0016).",
            _keys("row-tracking.enabled", "row-tracking.partition-group-on-commit"), _true),
    Feature("nextRowId", "1.3", Detected.SNAPSHOT, "snapshot field `nextRowId` set", ALL,
            "Row tracking seen in a snapshot: read, and carried into every snapshot a commit writes."),
    Feature("_FIRST_ROW_ID", "1.3", Detected.DATA_FILE, "data-file field `_FIRST_ROW_ID` set", ALL,
            "Row tracking seen in a data file: `_ROW_ID` = `_FIRST_ROW_ID` + position (a physical `_ROW_ID` "
            "column wins); kept by every rewrite."),
    Feature("global index", "1.4", Detected.INDEX, "index-manifest entry with `_GLOBAL_INDEX` set; "
            "`global-index.*` options", ALL,
            "Indexes over row ids (BTree, bitmap, vector, full text; built by pypaimon or Paimon): every rewrite "
            "keeps row ids, so commits, compaction, expiry, orphan cleanup, tags, rollback carry the index files "
            "forward unchanged; appended rows are not covered (as in Paimon); overwrite and drop partition delete "
            "the partitions' index files; an update by row id of an indexed column follows "
            "`global-index.column-update-action`; `=` / `in` reads use BTree and bitmap indexes to skip files "
            "(ADR 0019).",
            _prefixes("global-index."), None),
    Feature("type = object-table", "1.0", Detected.OPTION, "`type` = `object-table`", frozenset({Op.READ, Op.MAINTAIN}),
            "Object tables (Paimon 1.0-1.2 design, docs/object-tables.md): the index is read like any table and "
            "maintained (expiry, tags, branches, rollback); writes, commits, row-level and schema changes are "
            "refused as in Paimon; only `refresh_object_table` overwrites the index.",
            _keys("type"), lambda v: v.strip().lower() == TableType.OBJECT_TABLE.value,
            "Object table does not support Write."),
    # ---- readable only -----------------------------------------------------------------------------------------
    Feature("pk-<type>.index.columns", "2.0", Detected.OPTION,
            "`pk-btree/bitmap/vector/full-text/multivalue.index.columns`", READ_ONLY,
            "Primary-key global indexes: reads ignore them; a rewrite would leave them stale.",
            re.compile(r"pk-[a-z-]+\.index\.columns")),
    Feature("metadata.iceberg.format-version", "1.3", Detected.OPTION,
            "`metadata.iceberg.format-version` other than 2", READ_ONLY,
            "Iceberg format version 3 (deletion vectors in Iceberg): commits here write format 2 only; reads are "
            "right.", _keys("metadata.iceberg.format-version"), lambda v: v.strip() != "2"),
    Feature("metadata.iceberg.manifest-compression = snappy", "0.9", Detected.OPTION,
            "`metadata.iceberg.manifest-compression` = `snappy`", READ_ONLY,
            "Iceberg manifests compressed with snappy (Paimon's default): no snappy codec is installed here, so "
            "commits cannot write them; set it to `deflate` or `zstd` to write. Reads are right.",
            _keys("metadata.iceberg.manifest-compression"), lambda v: v.strip().lower() == "snappy"),
    Feature(ICEBERG_CATALOG_STORAGE, "0.9", Detected.OPTION,
            "`metadata.iceberg.storage` = `hive-catalog` / `rest-catalog`", READ_ONLY,
            "Iceberg metadata registered in a Hive metastore or an Iceberg REST catalog: this engine has no client "
            "for them, so its commits would leave the catalog's table stale; reads are right.",
            option_when=lambda o: _iceberg_value(o) in ("hive-catalog", "rest-catalog")),
    Feature(ICEBERG_WITH_DV, "1.0", Detected.OPTION,
            "`metadata.iceberg.storage` on with `deletion-vectors.enabled` or `data-evolution.enabled` = true",
            READ_ONLY, "Paimon writes Iceberg deletion vectors only in format 3 and cannot map data evolution: the "
            "engine does not write either, so Iceberg readers would see deleted or unmerged rows; reads are right.",
            option_when=lambda o: _iceberg_value(o) not in ("disabled", "")
            and any(_true(str(o.get(k, ""))) for k in ("deletion-vectors.enabled", "data-evolution.enabled"))),
    Feature("bucket-function.type", "1.3", Detected.OPTION, "`bucket-function.type` other than `default`",
            READ_ONLY, "Only the default bucket function is implemented: reads are right, writes would pick other "
            "buckets.", _keys("bucket-function.type"), lambda v: v.strip().lower() != "default"),
    Feature("bucketed incremental clustering", "1.4", Detected.OPTION,
            "`clustering.incremental` = true with `bucket` other than -1", READ_ONLY,
            "Paimon 1.4 clusters bucketed append tables inside its writers, level by level per bucket: not built "
            "(incremental clustering of bucket = -1 tables is, docs/layout.md); reads are right.",
            option_when=lambda o: _true(str(o.get("clustering.incremental", "false")))
            and str(o.get("bucket", "-1")).strip() != "-1"),
    # ---- refused -----------------------------------------------------------------------------------------------
    Feature("blob options", "1.4", Detected.OPTION,
            "`blob-*`, `blob.*` options other than `blob-field` and `blob.target-file-size` "
            "(`blob-as-descriptor`, `blob-descriptor-field`, ...)", NONE,
            "BLOB columns stored as descriptors or in other layouts that these options choose are not read "
            "(ADR 0018).", re.compile(r"(?!blob-field$|blob\.target-file-size$)blob[-.].+"), None),
    Feature("VARIANT shredding", "1.4", Detected.OPTION,
            "`variant.*`, `parquet.variant.*` options (`variant.shreddingSchema`, `variant.inferShreddingSchema`; "
            "any value but `false`); a VARIANT column stored shredded (`typed_value`)", NONE,
            "Shredded variants are split into typed Parquet columns; the engine reads only the unshredded "
            "value/metadata pair, so it refuses them rather than misread them (ADR 0018).",
            re.compile(r"(parquet\.)?variant\..+"), lambda v: v.strip().lower() != "false"),
    Feature("vector.file.format / vector-field", "1.4", Detected.OPTION,
            "`vector.*`, `vector-*` options (`vector.file.format`, `vector-field`, `vector.target-file-size`, ...)",
            NONE, "VECTOR columns stored apart in vector-store files (Lance, ...) over row ids, or ARRAY columns "
            "stored as vectors: a layout the engine does not read (ADR 0018).", re.compile(r"vector[-.].+"), None),
    Feature("file.format = lance / vortex / ...", "1.4", Detected.OPTION,
            "`file.format` or `changelog-file.format` other than parquet, orc, avro", NONE,
            "Data files of a format the engine cannot read or write.",
            _keys("file.format", "changelog-file.format"),
            lambda v: v.strip().lower() not in DATA_FILE_EXTENSIONS),
    Feature("chain-table.enabled", "1.4", Detected.OPTION, "`chain-table.*`, `scan.fallback-*-branch`", NONE,
            "Reads merge a snapshot branch and a delta branch.",
            re.compile(r"chain-table\..+|scan\.fallback-(snapshot|delta)-branch"), None),
    Feature("scan.fallback-branch", "0.9", Detected.OPTION, "`scan.fallback-branch`", ALL,
            "Batch reads (time travel and incremental included) take the partitions the branch lacks from the "
            "fallback branch, as Paimon; Spark's incremental reads of such a table are refused (docs/branches.md).",
            _keys("scan.fallback-branch"), _set),
    Feature("scan.primary-branch", "2.0", Detected.OPTION, "`scan.primary-branch`", NONE,
            "Reads prefer another branch's partitions.", _keys("scan.primary-branch"), _set),
    Feature("data-file.thin-mode", "1.2", Detected.OPTION, "`data-file.thin-mode` = true", NONE,
            "Primary-key files without the key columns.", _keys("data-file.thin-mode"), _true),
    Feature("data-file.path-directory", "1.2", Detected.OPTION, "`data-file.path-directory` set", NONE,
            "Data files under another directory of the table.", _keys("data-file.path-directory"), _set),
    Feature("index-file-in-data-file-dir", "1.3", Detected.OPTION, "`index-file-in-data-file-dir` = true", NONE,
            "Index files in the bucket directories instead of `index/`.", _keys("index-file-in-data-file-dir"),
            _true),
    Feature("type = format-table / lance-table / iceberg-table", "0.9", Detected.OPTION,
            "`type` other than `table`, `materialized-table` and `object-table`", NONE,
            "Not a Paimon data table: its files are not snapshots and manifests, so the engine never reads it as "
            "one. A format table is opened as a `FormatTable` through the Hive or REST catalog "
            "(docs/format-tables.md); lance and iceberg tables are not implemented.",
            _keys("type"), lambda v: v.strip().lower() not in _GATED_TYPES),
    Feature("unknown data type", "?", Detected.TYPE, "a type root this engine does not know", NONE,
            "Fail closed: values of a type the engine does not know cannot be read or written."),
    Feature("unknown table option", "?", Detected.OPTION,
            "a key outside the option registry and its list of options of other components", NONE,
            "Fail closed: an option may change the layout or the meaning of the files (must-understand)."),
    Feature("unknown snapshot field", "?", Detected.SNAPSHOT, "a snapshot JSON key this engine does not know", NONE,
            "Fail closed: a newer writer's snapshot may mean more than the engine reads."),
    Feature("unknown data-file kind", "?", Detected.DATA_FILE,
            "a data file whose extension is not parquet, orc or avro (`.blob`, `.lance`, `.vortex`, ...)", NONE,
            "Fail closed: the engine cannot read such a file, and maintenance must not delete what it cannot read."),
    Feature("unknown index kind", "?", Detected.INDEX,
            "an index-manifest entry of a type other than HASH and DELETION_VECTORS and without `_GLOBAL_INDEX`",
            NONE, "Fail closed: an index may change which rows a read returns."),
)



@dataclass(frozen=True)
class CatalogSupport:
    """One catalog (``metastore`` and what of it) in docs/compatibility.md: how it works with Paimon Java 1.0's
    catalog on the same metastore, and the tests that show it. Documentation only: the gate does not use it."""

    catalog: str
    with_java: str
    """what Paimon Java 1.0 and the engine do on one metastore (or why there is no Java reference)"""
    tests: tuple[str, ...]
    """the test files (or folder) that show it, relative to the repository"""


_JAVA_CATALOG_TESTS = ("tests/interop/test_catalogs_java_interop.py",)
_ENGINE_CATALOG_TESTS = ("tests/table_engine/catalog/test_metastore_catalogs.py",)
_BOTH_WAYS = ("Both ways: Paimon Java creates a database and a partitioned primary-key table and commits; the engine "
              "lists and reads it, writes, compacts and expires snapshots, and Java reads all of it, writes, "
              "compacts and expires; and the reverse")

CATALOGS: tuple[CatalogSupport, ...] = (
    CatalogSupport("`metastore=filesystem` (default)", "The same files: every interop test reads and writes "
                   "through it.", ("tests/interop/",)),
    CatalogSupport("`metastore=jdbc`, SQLite", f"{_BOTH_WAYS}. The rows of `paimon_tables` and "
                   "`paimon_database_properties` for a table Java registered equal those of one the engine "
                   "registered; pypaimon 2.1.0's JDBC catalog lists and reads the engine's tables. Java 1.0 keeps "
                   "a read open on its catalog: on a rollback-journal file no one else writes while a Java catalog "
                   "is open; a file the engine creates is in WAL mode.",
                   (*_JAVA_CATALOG_TESTS, "tests/interop/test_jdbc_catalog_interop.py")),
    CatalogSupport("`metastore=jdbc`, PostgreSQL", f"{_BOTH_WAYS}; the same rows as Java's.", _JAVA_CATALOG_TESTS),
    CatalogSupport("`metastore=jdbc`, MySQL", "The same code and SQL as SQLite and PostgreSQL (Java's MySQL lock "
                   "dialect); no MySQL server in the tests.", ("tests/table_engine/catalog/test_jdbc.py",)),
    CatalogSupport("`metastore=hive` (Hive Metastore 2.3)", f"{_BOTH_WAYS}. A table the engine registers equals "
                   "one Java registers but for times and owner: parameters (`hive.`-prefixed table options "
                   "included), storage descriptor, serde, location, columns, and the partitions of "
                   "`metastore.partitioned-table`.", (*_JAVA_CATALOG_TESTS, *_ENGINE_CATALOG_TESTS)),
    CatalogSupport("`lock.enabled`, JDBC on SQLite", "Java and the engine commit to one table at once: each commit "
                   "holds the `paimon_distributed_locks` row, every commit lands, snapshot ids are contiguous, no "
                   "row is lost.", _JAVA_CATALOG_TESTS),
    CatalogSupport("`lock.enabled`, Hive", "The same with the metastore's EXCLUSIVE table lock.",
                   _JAVA_CATALOG_TESTS),
    CatalogSupport("`lock.enabled`, JDBC on PostgreSQL", "No Java 1.0 reference: Java 1.0 refuses `lock.enabled` "
                   "on PostgreSQL; the engine uses the condition of Paimon's later PostgreSQL dialect, and engine "
                   "writers serialize each other.", _ENGINE_CATALOG_TESTS),
    CatalogSupport("views (JDBC, Hive)", "No Java 1.0 reference: Paimon Java 1.0 has no views. The engine stores "
                   "them as later Paimons do (JDBC `paimon_views`, Hive `VIRTUAL_VIEW` tables) and round-trips them.",
                   _ENGINE_CATALOG_TESTS),
    # ---- table types (issue 39, ADR 0048) ----
    CatalogSupport("format tables (`type` = `format-table`)", "Hive: created, listed, opened, written and dropped as "
                   "Paimon's `HiveCatalog` registers them (the format's serde and input/output formats, `table_type`, "
                   "`field.delim`); any Hive csv/json/parquet/orc table is one; `format-table.enabled`. REST: the "
                   "server keeps the definition and the `path` (Paimon's `RESTCatalog`), vended credentials too; "
                   "pypaimon 2.1.0 and the engine read each other's parquet format tables, csv only unpartitioned "
                   "with `csv.include-header` (pypaimon writes a header and the partition columns). Filesystem and "
                   "JDBC: refused, as Java's. No Java 1.0 run (its jar predates Paimon's Hive format-table creation).",
                   ("tests/table_engine/catalog/test_table_types.py", "tests/spark/test_format_table_spark.py",
                    "tests/table_engine/catalog/rest/test_rest_table_types.py",
                    "tests/interop/test_rest_table_types_interop.py")),
    CatalogSupport("object tables (`type` = `object-table`)", "Filesystem, JDBC, Hive: created with Paimon's exact "
                   "fields; `refresh-object-table` writes the index; Paimon Java reads it, latest and by time travel. "
                   "REST: Paimon 1.3+'s virtual design, as pypaimon 2.1 and Paimon's `RESTCatalog`: the server keeps "
                   "the definition, every read lists the table's `path` (6 columns, relative paths, vended "
                   "credentials, local disk and S3); pypaimon 2.1.0 and the engine list each other's tables row for "
                   "row (pypaimon's local-disk `mtime` is 0); writes, refresh, alter, maintenance, time travel and "
                   "system tables refused by name (ADR 0048).",
                   ("tests/table_engine/catalog/test_table_types.py", "tests/interop/test_object_table_interop.py",
                    "tests/table_engine/object_table/test_virtual.py",
                    "tests/interop/test_rest_table_types_interop.py")),
    CatalogSupport("`metastore=rest` (Paimon's REST API)", "No Java 1.0 reference (Java 1.0 has no REST catalog); "
                   "pypaimon 2.1.0's REST client and the engine share one server both ways: each reads what the "
                   "other wrote, after the engine's compaction and expiry too. The server owns schemas and commits "
                   "each snapshot (with its partition statistics); vended credentials (`data-token.enabled`) reach "
                   "S3 and Spark executors. Schema changes (pypaimon reads the altered schema), rollback and branch "
                   "create/drop/rename/fast-forward go through the server; tags stay the table's files as in "
                   "Paimon Java (ADR 0045).",
                   ("tests/interop/test_rest_catalog_interop.py", "tests/table_engine/catalog/rest/",
                    "tests/spark/test_rest_spark.py")),
    CatalogSupport("any other `metastore`", "Refused with one error before anything connects.",
                   ("tests/table_engine/catalog/test_factory.py",)),
)

_BY_NAME = {f.name: f for f in FEATURES}
_OPTION_FEATURES = tuple(f for f in FEATURES if f.option_key is not None)
_COMBINED_OPTION_FEATURES = tuple(f for f in FEATURES if f.option_when is not None)

#: Known type roots that are features the gate decides on (any unknown root is "unknown data type").
_TYPE_FEATURES = {"BLOB": "BLOB"}
TYPE_FEATURE_ROOTS = frozenset(_TYPE_FEATURES)



def feature(name: str) -> Feature:
    """The registered feature called ``name``."""
    return _BY_NAME[name]


def type_features(type_roots: Iterable[str]) -> dict[str, str]:
    """Features of type roots a schema uses (those of :data:`TYPE_FEATURE_ROOTS` and those the engine does not know):
    feature name -> detail."""
    found: dict[str, str] = {}
    for root in type_roots:
        name = _TYPE_FEATURES.get(root, "unknown data type")
        found.setdefault(name, f"type {root}")
    return found


def option_features(options: Mapping[str, str], is_known: Callable[[str], bool]) -> dict[str, str]:
    """Features a table's options turn on: feature name -> detail. A key that no feature claims and that
    ``is_known`` (the option registry: engine options, key patterns, options of other components) does not know is
    the feature "unknown table option": must-understand unless listed."""
    found: dict[str, str] = {}
    for key in sorted(options):
        value = str(options[key])
        claimed = False
        for f in _OPTION_FEATURES:
            assert f.option_key is not None
            if f.option_key.fullmatch(key):
                claimed = True
                if f.option_active is None or f.option_active(value):
                    found.setdefault(f.name, f"option '{key}' = '{value}'")
                    break
        if not claimed and not is_known(key):
            found.setdefault("unknown table option", f"option '{key}'")
    for f in _COMBINED_OPTION_FEATURES:
        assert f.option_when is not None
        if f.option_when(options):
            found.setdefault(f.name, f"options {f.how}")
    return found


def require(table: str, found: Mapping[str, str], op: Op) -> None:
    """Raise :class:`UnsupportedTableFeatureError` if a feature of ``found`` (feature name -> detail) is not
    supported for ``op``. It names the most restrictive such feature (first in registry order among those that
    allow the fewest operations), what every feature found still allows, and the other refusing features."""
    if not found:
        return
    refusing = [f for f in FEATURES if f.name in found and not f.supports(op)]
    if not refusing:
        return
    first = min(refusing, key=lambda f: len(f.ops))
    allowed = frozenset(Op).intersection(*(f.ops for f in FEATURES if f.name in found))
    still = " and ".join(o.value for o in Op if o in allowed)
    detail = f"{found[first.name]}; {first.refusal}" if first.refusal else found[first.name]
    raise UnsupportedTableFeatureError(table, first.name, first.since, op.value, still, detail,
                                       tuple(f.name for f in refusing if f is not first))


# ---- documentation ------------------------------------------------------------------------------------------------

def _version_key(f: Feature) -> tuple[int, ...]:
    return tuple(int(p) for p in f.since.split(".")) if f.since[0].isdigit() else (99,)


def render_markdown() -> str:
    """``docs/compatibility.md``: Paimon version -> feature -> read / write / maintain / refused."""
    lines = [
        "# Compatibility with tables that other Paimon writers made",
        "",
        "<!-- generated by `python -m table_engine.features > docs/compatibility.md`; do not edit -->",
        "",
        "The engine opens any Paimon table, derives the features it uses from its schema (column types, options),",
        "its snapshots (fields), its manifests (data-file fields and kinds, index kinds), and decides per feature",
        "and per operation. It **fails closed**: an operation the engine cannot do right on a table raises",
        "`UnsupportedTableFeatureError` (not retryable: the Airflow task fails at once) naming the table, the",
        "feature, the Paimon version that introduced it and what the engine can still do, before any file changes.",
        "Anything it does not recognise (a type, an option outside [the option reference](options.md), a snapshot",
        "field, a data-file kind, an index kind) is refused like a feature. See ADR",
        "[0012](adr/0012-capability-gate.md).",
        "",
        "Operations: **read** (batch, incremental and streaming reads), **write** (writes and commits), **maintain**",
        "(compaction, expiry of snapshots, tags and partitions, orphan cleanup, tags, rollback, dropping partitions,",
        "file-index rewrite, changelog consumption).",
        "",
        "| Paimon | Feature | Detected by | Read | Write | Maintain | Note |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in sorted(FEATURES, key=_version_key):
        marks = ["yes" if f.supports(op) else "refused" for op in Op]
        lines.append(f"| {f.since} | `{f.name}` | {f.detected.value}: {f.how} | " + " | ".join(marks)
                     + f" | {f.note} |")
    lines += [
        "",
        "Every other Paimon feature of the [format](../README.md) (fixed, dynamic and cross-partition buckets,",
        "merge engines, changelog producers, deletion vectors, file indexes, tags, consumers, branches:",
        "[branches.md](branches.md)) is read, written and maintained. The options of other components listed in",
        "[options.md](options.md) (Flink, Spark and catalog settings) are known-harmless and pass the gate.",
        "",
        "## Catalogs",
        "",
        "The catalogs Paimon's `metastore` option names ([catalogs.md](catalogs.md), ADR",
        "[0044](adr/0044-catalogs.md)), and what Paimon Java 1.0's catalogs and the engine do on one metastore.",
        "",
        "| Catalog | With Paimon Java 1.0 | Tests |",
        "|---|---|---|",
    ]
    lines += [f"| {c.catalog} | {c.with_java} | " + ", ".join(f"`{t}`" for t in c.tests) + " |" for c in CATALOGS]
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``python -m table_engine.features``: print ``docs/compatibility.md``."""
    del argv
    sys.stdout.write(render_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
