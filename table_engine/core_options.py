"""The registry of Paimon table options: exact Paimon keys, types, defaults and descriptions.

``CoreOptions(raw)`` wraps a table's option map with typed accessors (``opts.bucket() -> int``).
:func:`validate_options` rejects unknown keys (with a suggestion) and bad values, naming them.
``python -m table_engine.core_options --markdown > docs/options.md`` regenerates the option reference.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from table_engine import clock
from table_engine.core_enums import (
    FILE_FORMATS,
    BucketFunctionType,
    ChangelogProducer,
    ConsumerMode,
    ExternalPathStrategy,
    GlobalIndexColumnUpdateAction,
    IcebergStorage,
    IcebergStorageLocation,
    IncrementalBetweenScanMode,
    MergeEngine,
    PartitionExpireStrategy,
    RecordLevelTimeFieldType,
    SortOrder,
    StartupMode,
    TableType,
    TagCreationMode,
    TagCreationPeriod,
    TagPeriodFormatter,
)
from table_engine.errors import OptionError
from table_engine.options import (
    INT_MAX,
    LONG_MAX,
    ConfigOption,
    OptionRegistry,
    OptionSection,
    PatternOption,
    accessor,
    key,
)
from table_engine.options import storage as storage_options

V = TypeVar("V")
MB = 1024 * 1024


_STATS_MODE = re.compile(r"(none|counts|full|truncate\(\d+\))", re.IGNORECASE)


_FORMATS_TEXT = "one of " + ", ".join(FILE_FORMATS)


def _format_ok(v: Any) -> bool:
    return str(v).strip().lower() in FILE_FORMATS


def _per_level_ok(value_ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def ok(m: Any) -> bool:
        return all(str(k).strip().isdigit() and value_ok(v) for k, v in dict(m).items())
    return ok


def _stats_mode_ok(v: Any) -> bool:
    return bool(_STATS_MODE.fullmatch(str(v).strip()))


# ---- keys and distribution ---------------------------------------------------------------------------------------
BUCKET = key("bucket").int_type().default_value(-1).with_validator(
    lambda n: n > 0 or n in (-1, -2), "a positive bucket count, -1 (dynamic or unaware bucket) or -2 (postpone "
    "bucket)").with_description(
    "Bucket number. -1 (default): dynamic bucket mode for primary-key tables, bucket-unaware for append tables; "
    "N > 0: fixed buckets by hash of the bucket key (an append table needs 'bucket-key'); -2 (postpone bucket mode, "
    "primary-key tables): writes land in 'bucket-postpone' and a compaction assigns them to buckets (see "
    "docs/postpone_bucket.md). Other values are rejected at create and alter.")
BUCKET_KEY = key("bucket-key").string_type().no_default_value().with_description(
    "Comma-separated columns whose hash picks the bucket; defaults to the primary key minus partition keys.")
BUCKET_FUNCTION_TYPE = key("bucket-function.type").enum_type(BucketFunctionType).default_value(
    BucketFunctionType.DEFAULT).with_description("Bucket function of fixed-bucket tables (default: Murmur3 of the "
                                                 "bucket-key BinaryRow, Math.abs(hash % N)).")
PRIMARY_KEY = key("primary-key").string_type().no_default_value().with_description(
    "Primary key columns given as an option (comma-separated), instead of the schema's primary keys.")
PARTITION = key("partition").string_type().no_default_value().with_description(
    "Partition columns given as an option (comma-separated), instead of the schema's partition keys.")
PARTITION_DEFAULT_NAME = key("partition.default-name").string_type().default_value(
    "__DEFAULT_PARTITION__").with_description("Directory name of a null or blank partition value.")
PARTITION_LEGACY_NAME = key("partition.legacy-name").bool_type().default_value(True).with_description(
    "Name partition directories with Java's toString of the internal value (DATE as days since epoch).")
POSTPONE_DEFAULT_BUCKET_NUM = key("postpone.default-bucket-num").int_type().no_default_value().with_validator(
    lambda n: n > 0, "a positive bucket count").with_description(
    "Postpone bucket tables: bucket count of a partition that gets real buckets for the first time (exact; wins over "
    "the estimate of 'postpone.target-row-num-per-bucket' / 'postpone.target-size-per-bucket').")
POSTPONE_TARGET_ROW_NUM_PER_BUCKET = key("postpone.target-row-num-per-bucket").long_type().no_default_value() \
    .with_validator(lambda n: n > 0, "a positive row count").with_description(
        "Postpone bucket tables without 'postpone.default-bucket-num': a new partition gets ceil(postponed rows / "
        "this) buckets; wins over 'postpone.target-size-per-bucket'.")
POSTPONE_TARGET_SIZE_PER_BUCKET = key("postpone.target-size-per-bucket").memory_type().default_value(1 << 30) \
    .with_validator(lambda n: n > 0, "a positive size").with_description(
        "Postpone bucket tables without 'postpone.default-bucket-num' nor 'postpone.target-row-num-per-bucket': a new "
        "partition gets ceil(postponed file bytes / this) buckets (at least 1).")
POSTPONE_BATCH_WRITE_FIXED_BUCKET = key("postpone.batch-write-fixed-bucket").bool_type().default_value(True) \
    .with_description("Paimon's Flink/Spark batch writes to a postpone table route rows to real buckets directly. "
                      "Accepted and kept; this engine's writes always go to 'bucket-postpone'.")
DYNAMIC_BUCKET_TARGET_ROW_NUM = key("dynamic-bucket.target-row-num").long_type().default_value(
    2_000_000).with_description("Dynamic bucket mode: rows per bucket before a new bucket is opened.")
DYNAMIC_BUCKET_INITIAL_BUCKETS = key("dynamic-bucket.initial-buckets").int_type().no_default_value() \
    .with_description("Dynamic bucket mode: initial number of buckets of a partition per assigner.")
DYNAMIC_BUCKET_MAX_BUCKETS = key("dynamic-bucket.max-buckets").int_type().default_value(-1).with_description(
    "Dynamic bucket mode: maximum buckets of a partition (-1: unlimited).")
DYNAMIC_BUCKET_ASSIGNER_PARALLELISM = key("dynamic-bucket.assigner-parallelism").int_type().no_default_value() \
    .with_description("Dynamic bucket mode: number of bucket assigners (one assigner here).")
CROSS_PARTITION_UPSERT_INDEX_TTL = key("cross-partition-upsert.index-ttl").duration_type().no_default_value() \
    .with_description("Cross-partition upsert: the index bootstrap skips a partition's bucket whose data files were "
                      "all created longer ago than this (its keys may then be duplicated).")
CROSS_PARTITION_UPSERT_BOOTSTRAP_PARALLELISM = key("cross-partition-upsert.bootstrap-parallelism").int_type() \
    .default_value(10).with_description("Cross-partition upsert: threads reading the table's keys at the index "
                                        "bootstrap.")

# ---- merge and sequence ------------------------------------------------------------------------------------------
MERGE_ENGINE = key("merge-engine").enum_type(MergeEngine).default_value(MergeEngine.DEDUPLICATE).with_description(
    "How records with the same primary key are merged.")
SEQUENCE_FIELD = key("sequence.field").list_type().no_default_value().with_description(
    "Columns (comma-separated, compared in order) that order records of one key; the largest wins.")
SEQUENCE_FIELD_SORT_ORDER = key("sequence.field.sort-order").enum_type(SortOrder).default_value(
    SortOrder.ASCENDING).with_description("Order of sequence.field: ascending (largest wins) or descending.")
SEQUENCE_SNAPSHOT_ORDERING = key("sequence.snapshot-ordering").bool_type().default_value(False).with_description(
    "Order records by the snapshot id that committed them (needs write-only and dedicated compaction).")
ROWKIND_FIELD = key("rowkind.field").string_type().no_default_value().with_description(
    "A string column holding each row's kind: +I, -U, +U or -D.")
IGNORE_DELETE = key("ignore-delete").bool_type().default_value(False).with_description(
    "Drop -D and -U records on write.").with_fallback_keys(
    "first-row.ignore-delete", "deduplicate.ignore-delete", "partial-update.ignore-delete")
IGNORE_UPDATE_BEFORE = key("ignore-update-before").bool_type().default_value(False).with_description(
    "Drop -U records on write.")
PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE = key("partial-update.remove-record-on-delete").bool_type() \
    .default_value(False).with_description("partial-update: a -D record removes the whole row.")
PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP = key("partial-update.remove-record-on-sequence-group") \
    .string_type().no_default_value().with_description(
        "partial-update: sequence groups whose -D removes the whole row.")
AGGREGATION_REMOVE_RECORD_ON_DELETE = key("aggregation.remove-record-on-delete").bool_type().default_value(
    False).with_description("aggregation: a -D record removes the whole row.")
FIELDS_DEFAULT_AGG_FUNC = key("fields.default-aggregate-function").string_type().no_default_value() \
    .with_description("Aggregate function of fields without fields.<field>.aggregate-function.")
CHANGELOG_PRODUCER = key("changelog-producer").enum_type(ChangelogProducer).default_value(
    ChangelogProducer.NONE).with_description(
    "Whether to double write to a changelog file. This changelog file keeps the details of data changes, it can be "
    "read directly during stream reads. This can be applied to tables with primary keys. none: no changelog files; "
    "input: every input record; lookup: produced at compactions that move level 0 up, by looking up the previous "
    "values; full-compaction: the difference between consecutive full compactions.")
CHANGELOG_PRODUCER_ROW_DEDUPLICATE = key("changelog-producer.row-deduplicate").bool_type().default_value(False) \
    .with_description("Whether to generate -U, +U changelog for the same record. This configuration is only valid "
                      "for the changelog-producer is lookup or full-compaction.")
CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS = key("changelog-producer.row-deduplicate-ignore-fields") \
    .list_type().no_default_value().with_description(
        "Fields that are ignored for comparison while generating -U, +U changelog for the same record. This "
        "configuration is only valid for the changelog-producer.row-deduplicate is true.")
PRIMARY_KEY_NULLABLE = key("primary-key.nullable").bool_type().default_value(False).with_description(
    "Allow null primary key values (null-safe key equality).")

# ---- write and files ---------------------------------------------------------------------------------------------
WRITE_ONLY = key("write-only").bool_type().default_value(False).with_description(
    "Writers skip compaction and expiry; a dedicated compaction job does them. Batch reads of first-row and "
    "deletion-vector tables skip level 0, so with write-only their new rows stay invisible to batch reads until "
    "that job compacts them.")
WRITE_BUFFER_SIZE = key("write-buffer-size").memory_type().default_value(256 * MB).with_description(
    "Memory a writer buffers before it spills a sorted run to level-0 files.")
WRITE_BUFFER_SPILLABLE = key("write-buffer-spillable").bool_type().no_default_value().with_description(
    "Whether the write buffer may spill to disk: a full buffer of a primary-key writer is sorted, merged and spilled "
    "to a local temporary file (Arrow IPC) instead of being written as level-0 files; the spilled runs are merged "
    "by streaming into level-0 files at the next flush (prepare_commit): fewer, larger sorted runs. Unset: on "
    "for object-store warehouses (s3://), off on a local disk or HDFS, as Paimon's "
    "CoreOptions.writeBufferSpillable(usingObjectStore); when off, a full buffer becomes level-0 files. Memory "
    "stays bounded by write-buffer-size either way.")
WRITE_BUFFER_SPILL_MAX_DISK_SIZE = key("write-buffer-spill.max-disk-size").memory_type().no_default_value() \
    .with_description("Local disk the spilled runs of a writer may take (unset: unbounded); beyond it the spilled "
                      "runs and the buffer are merged into level-0 files at once.")
LOCAL_SORT_MAX_NUM_FILE_HANDLES = key("local-sort.max-num-file-handles").int_type().default_value(128) \
    .with_description("The most spilled runs a writer keeps: when a spill reaches it, the spilled runs are merged "
                      "into one.")
PAGE_SIZE = key("page-size").memory_type().default_value(64 * 1024).with_description("Memory page size.")
TARGET_FILE_SIZE = key("target-file-size").memory_type().no_default_value().with_description(
    "Target size of a data file; default 128 mb for primary-key tables and 256 mb for append tables. "
    "Files roll when the rows' Arrow size reaches it.")
TARGET_FILE_ROW_NUM = key("target-file-row-num").long_type().default_value(LONG_MAX).with_description(
    "Roll data files at this many rows.")
BLOB_FIELD = key("blob-field").string_type().no_default_value().with_description(
    "Comma-separated columns of type BLOB (Paimon 1.4): at `create_table` the engine makes these binary columns "
    "BLOB; their values go to `.blob` files over row ids (needs `data-evolution.enabled`).")
BLOB_TARGET_FILE_SIZE = key("blob.target-file-size").memory_type().no_default_value().with_description(
    "Target size of a `.blob` file; default `target-file-size` (256 mb). A writer rolls to a new `.blob` file "
    "after the value that reaches it.")
FILE_FORMAT = key("file.format").string_type().default_value("parquet").with_validator(
    _format_ok, _FORMATS_TEXT).with_description(
    "Specify the message format of data files, currently parquet, orc and avro are supported. Files are read by "
    "their extension, so a table whose format changed reads its older files as they are.")
FILE_FORMAT_PER_LEVEL = key("file.format.per.level").map_type().no_default_value().with_validator(
    _per_level_ok(_format_ok), "level:format pairs, e.g. '0:avro,3:parquet'").with_description(
    "Define different file format for different level, you can add the conf like this: '0:avro,3:parquet', if "
    "the file format for level is not provided, the default format which set by `file.format` will be used. "
    "Primary-key tables only.")
FILE_COMPRESSION = key("file.compression").string_type().default_value("zstd").with_description(
    "Default file compression. For faster read and write, it is recommended to use zstd. Parquet: zstd, "
    "snappy, lz4, gzip, brotli, none; ORC: zstd, snappy, lz4, zlib, none; Avro: zstd, snappy, deflate, bzip2, "
    "xz, none (the format-specific `avro.codec` overrides it).")
FILE_COMPRESSION_PER_LEVEL = key("file.compression.per.level").map_type().no_default_value().with_validator(
    _per_level_ok(lambda v: bool(str(v).strip())), "level:compression pairs, e.g. '0:lz4,1:zstd'"
).with_description(
    "Define different compression policies for different level, you can add the conf like this: "
    "'0:lz4,1:zstd'. Levels not listed use `file.compression`. Primary-key tables only.")
FILE_COMPRESSION_ZSTD_LEVEL = key("file.compression.zstd-level").int_type().default_value(1).with_description(
    "zstd level of data files.")
DATA_FILE_PREFIX = key("data-file.prefix").string_type().default_value("data-").with_description(
    "Prefix of data file names.")
CHANGELOG_FILE_PREFIX = key("changelog-file.prefix").string_type().default_value("changelog-").with_description(
    "Specify the file name prefix of changelog files.")
CHANGELOG_FILE_FORMAT = key("changelog-file.format").string_type().no_default_value().with_description(
    "Specify the message format of changelog files, currently parquet, avro and orc are supported. Unset: "
    "file.format.").with_validator(_format_ok, _FORMATS_TEXT)
CHANGELOG_FILE_COMPRESSION = key("changelog-file.compression").string_type().no_default_value().with_description(
    "Changelog file compression. Unset: file.compression.")
CHANGELOG_FILE_STATS_MODE = key("changelog-file.stats-mode").string_type().no_default_value().with_validator(
    _stats_mode_ok, "none, counts, truncate(N) or full").with_description(
    "Changelog file metadata stats collection. none, counts, truncate(16), full is available. Unset: "
    "metadata.stats-mode.")
DATA_FILE_EXTERNAL_PATHS = key("data-file.external-paths").string_type().no_default_value().with_description(
    "The external paths where the data of this table will be written, multiple elements separated by commas. Each "
    "needs a scheme (file:///..., s3://...) on the table's kind of filesystem; files go to <path>/<partition>/"
    "bucket-N/ there. Used only when data-file.external-paths.strategy is not none (Paimon 1.1).")
DATA_FILE_EXTERNAL_PATHS_STRATEGY = key("data-file.external-paths.strategy").enum_type(ExternalPathStrategy) \
    .default_value(ExternalPathStrategy.NONE).with_description(
    "The strategy of selecting an external path when writing data: none (write into the table directory), "
    "round-robin (each new file takes the next path), specific-fs (the paths whose scheme is "
    "data-file.external-paths.specific-fs, in turn), entropy-inject (in turn, below hash directories of the file "
    "name), weight-robin (a random path by data-file.external-paths.weights).")
DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS = key("data-file.external-paths.specific-fs").string_type().no_default_value() \
    .with_description("The scheme of the external paths to use when data-file.external-paths.strategy is "
                      "specific-fs (e.g. s3).")
DATA_FILE_EXTERNAL_PATHS_WEIGHTS = key("data-file.external-paths.weights").string_type().no_default_value() \
    .with_description("Positive integer weights 'w1,w2,...' of the paths of data-file.external-paths, in order, when "
                      "data-file.external-paths.strategy is weight-robin (Paimon 1.4).")
AVRO_CODEC = key("avro.codec").string_type().no_default_value().with_description(
    "The compression codec for avro (null, deflate, snappy, bzip2, xz, zstandard). Unset: file.compression "
    "(zstd is zstandard at file.compression.zstd-level).")
ORC_STRIPE_SIZE = key("orc.stripe.size").long_type().default_value(64 * 1024 * 1024).with_validator(
    lambda v: v > 0, "a positive number of bytes").with_description("ORC stripe size in bytes.")
ORC_COMPRESS_SIZE = key("orc.compress.size").int_type().default_value(256 * 1024).with_validator(
    lambda v: v > 0, "a positive number of bytes").with_description("ORC compression block size in bytes.")
ORC_ROW_INDEX_STRIDE = key("orc.row.index.stride").int_type().default_value(10000).with_validator(
    lambda v: v > 0, "a positive number of rows").with_description("Rows between ORC row index entries.")
ORC_DICTIONARY_KEY_THRESHOLD = key("orc.dictionary.key.threshold").double_type().no_default_value().with_validator(
    lambda v: 0 <= v <= 1, "between 0 and 1").with_description(
    "Dictionary-encode an ORC string column when its distinct values are at most this fraction of its values. "
    "Unset: no dictionary (pyarrow's default; Paimon Java's writer uses 0.8, which cost 25-60% of the write time "
    "here).")
ORC_BLOOM_FILTER_COLUMNS = key("orc.bloom.filter.columns").list_type().no_default_value().with_description(
    "Columns with an ORC bloom filter.")
ORC_BLOOM_FILTER_FPP = key("orc.bloom.filter.fpp").double_type().default_value(0.05).with_validator(
    lambda v: 0 < v < 1, "between 0 and 1").with_description("False positive probability of ORC bloom filters.")
METADATA_STATS_MODE = key("metadata.stats-mode").string_type().default_value("truncate(16)").with_validator(
    _stats_mode_ok, "none, counts, truncate(N) or full").with_description(
    "Value statistics kept per data file: none, counts, truncate(N) (strings cut to N chars) or full.")
METADATA_STATS_KEEP_FIRST_N = key("metadata.stats-keep-first-n-columns").int_type().default_value(-1) \
    .with_description("Keep value stats of the first N columns only (-1: all).")
MANIFEST_TARGET_FILE_SIZE = key("manifest.target-file-size").memory_type().default_value(8 * MB).with_description(
    "Target size of a manifest file.")
MANIFEST_MERGE_MIN_COUNT = key("manifest.merge-min-count").int_type().default_value(30).with_description(
    "Merge small manifests once at least this many are pending.")
MANIFEST_FULL_COMPACTION_SIZE = key("manifest.full-compaction-threshold-size").memory_type().default_value(
    16 * MB).with_description("Size of delete entries that triggers a full manifest compaction.")
MANIFEST_COMPRESSION = key("manifest.compression").string_type().default_value("zstd").with_description(
    "Compression of manifest files.")
WRITE_MERGE_SCHEMA = key("write.merge-schema").bool_type().default_value(False).with_description(
    "A write whose data has columns the table lacks adds them first (nullable, at the end), and widens a column "
    "whose type in the data is wider (INT to BIGINT...), in one schema change (Paimon Spark's option; a table "
    "option or the write's own).")
WRITE_MERGE_SCHEMA_EXPLICIT_CAST = key("write.merge-schema.explicit-cast").bool_type().default_value(False) \
    .with_description("With write.merge-schema: a column whose type in the data is neither the table's nor wider "
                      "is cast to the table's type (an explicit cast; a value that does not fit fails the write) "
                      "instead of failing the write.")
DYNAMIC_PARTITION_OVERWRITE = key("dynamic-partition-overwrite").bool_type().default_value(True).with_description(
    "Overwrite replaces only the partitions present in the written data (else the whole table).")

# ---- commit ------------------------------------------------------------------------------------------------------
COMMIT_MAX_RETRIES = key("commit.max-retries").int_type().default_value(10).with_description(
    "Retries of a commit whose snapshot id was taken by a concurrent committer.")
COMMIT_TIMEOUT = key("commit.timeout").duration_type().no_default_value().with_description(
    "Give up retrying a commit after this long.")
COMMIT_MIN_RETRY_WAIT = key("commit.min-retry-wait").duration_type().default_value(10).with_description(
    "Minimum wait before retrying a commit.")
COMMIT_MAX_RETRY_WAIT = key("commit.max-retry-wait").duration_type().default_value(10_000).with_description(
    "Maximum wait before retrying a commit.")
COMMIT_USER_PREFIX = key("commit.user-prefix").string_type().no_default_value().with_description(
    "Prefix of generated commit users: `<prefix>_<UUID>` (without it, a bare UUID).")
COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT = key("commit.strict-mode.last-safe-snapshot").long_type().no_default_value() \
    .with_description("If set, a commit fails (CommitConflictError) when another commit user published, after this "
                      "snapshot, a COMPACT or OVERWRITE snapshot or an APPEND snapshot with files in real buckets "
                      "(Paimon 1.2; rescale sets it to the snapshot it read).")
COMMIT_FORCE_COMPACT = key("commit.force-compact").bool_type().default_value(False).with_description(
    "Compact before every commit.")

# ---- compaction --------------------------------------------------------------------------------------------------
NUM_SORTED_RUNS_COMPACTION_TRIGGER = key("num-sorted-run.compaction-trigger").int_type().default_value(5) \
    .with_description("Sorted runs (each level-0 file, one per other level) that trigger a compaction.")
NUM_SORTED_RUNS_STOP_TRIGGER = key("num-sorted-run.stop-trigger").int_type().no_default_value().with_description(
    "Sorted runs at which writes wait for compaction (default compaction-trigger + 3).")
NUM_LEVELS = key("num-levels").int_type().no_default_value().with_description(
    "Number of LSM levels (default compaction-trigger + 1).")
COMPACTION_MAX_SIZE_AMPLIFICATION = key("compaction.max-size-amplification-percent").int_type().default_value(200) \
    .with_description("Full compaction when the other runs exceed this percent of the oldest run's size.")
COMPACTION_SIZE_RATIO = key("compaction.size-ratio").int_type().default_value(1).with_description(
    "Percent flexibility when comparing sorted run sizes.")
COMPACTION_SMALL_FILE_RATIO = key("compaction.small-file-ratio").double_type().default_value(0.7) \
    .with_description("Files smaller than this ratio of target-file-size are rewritten, larger ones upgraded.")
COMPACTION_OPTIMIZATION_INTERVAL = key("compaction.optimization-interval").duration_type().no_default_value() \
    .with_description("Run a full compaction at least this often.")
COMPACTION_TOTAL_SIZE_THRESHOLD = key("compaction.total-size-threshold").memory_type().no_default_value() \
    .with_description("Full compaction whenever the bucket's total file size is below this.")
COMPACTION_INCREMENTAL_SIZE_THRESHOLD = key("compaction.incremental-size-threshold").memory_type() \
    .no_default_value().with_description("Full compaction when the size outside the max level exceeds this.")
COMPACTION_OFFPEAK_START_HOUR = key("compaction.offpeak.start.hour").int_type().default_value(-1).with_description(
    "Start hour (0-23, local time) of off-peak hours; -1 disables them.")
COMPACTION_OFFPEAK_END_HOUR = key("compaction.offpeak.end.hour").int_type().default_value(-1).with_description(
    "End hour (exclusive, 0-23) of off-peak hours; -1 disables them.")
COMPACTION_OFFPEAK_RATIO = key("compaction.offpeak-ratio").int_type().default_value(0).with_description(
    "Extra compaction.size-ratio percent during off-peak hours.")
COMPACTION_FORCE_REWRITE_ALL_FILES = key("compaction.force-rewrite-all-files").bool_type().default_value(False) \
    .with_description("Compaction rewrites every picked file instead of upgrading large ones.")
COMPACTION_MIN_FILE_NUM = key("compaction.min.file-num").int_type().default_value(5).with_validator(
    lambda v: v >= 1, "at least 1").with_description(
    "Append tables: the number of consecutive small files (of a bucket, or of a partition with bucket = -1) that "
    "triggers a compaction of them into files near target-file-size.")
CLUSTERING_COLUMNS = key("clustering.columns").string_type().no_default_value().with_description(
    "Append tables: the column(s) rows are clustered by, 'c1,c2' (with clustering.incremental, the columns each "
    "clustering compaction sorts by; docs/layout.md).")
CLUSTERING_STRATEGY = key("clustering.strategy").string_type().default_value("auto").with_description(
    "How clustering orders rows: 'order', 'zorder' or 'hilbert'; 'auto' picks order for one column, zorder for 2 to "
    "4, hilbert for 5 or more.")
CLUSTERING_INCREMENTAL = key("clustering.incremental").bool_type().default_value(False).with_description(
    "Incremental clustering (append tables with bucket = -1, Paimon 1.3): new files stay at level 0, and each "
    "dedicated compaction (Paimon's universal picker over the partition's runs) sorts the picked files by "
    "clustering.columns into files of a higher level, so that only new data is clustered; writers do not compact "
    "(docs/layout.md).")
ZORDER_VAR_LENGTH_CONTRIBUTION = key("zorder.var-length-contribution").int_type().default_value(8).with_validator(
    lambda v: v >= 1, "at least 1").with_description(
    "The bytes of types (CHAR, VARCHAR, BINARY, VARBINARY) devote to the zorder sort: a sort compaction with "
    "order_strategy = zorder keys each such column by its first bytes (docs/layout.md).")
COMPACTION_DELETE_RATIO_THRESHOLD = key("compaction.delete-ratio-threshold").double_type().default_value(0.2) \
    .with_validator(lambda v: 0 <= v <= 1, "between 0 and 1").with_description(
        "Append tables with bucket = -1 and deletion vectors: a file whose deleted-row ratio exceeds this is "
        "compacted whatever its size.")
COMPACTION_SKIP_EXPIRED_PARTITIONS = key("compaction.skip-expired-partitions").bool_type().default_value(False) \
    .with_description("Dedicated compaction skips partitions already expired by partition.expiration-time; only "
                      "with partition.expiration-strategy = values-time (the time comes from the partition values).")
FULL_COMPACTION_DELTA_COMMITS = key("full-compaction.delta-commits").int_type().no_default_value() \
    .with_description("For streaming write, full compaction will be constantly triggered after delta commits. For "
                      "batch write, full compaction will be triggered with each commit as long as this value is "
                      "greater than 0.")
LOOKUP_WAIT = key("lookup-wait").bool_type().default_value(True).with_description(
    "When need to lookup, commit will wait for compaction by lookup.")
DELETION_VECTORS_ENABLED = key("deletion-vectors.enabled").bool_type().default_value(False).with_description(
    "Merge-on-write: compaction always pushes level 0 up and marks the older versions of its keys in higher-level "
    "files in deletion vectors (index files); batch reads skip level 0 and apply the vectors instead of merging, so "
    "value filters and file indexes can skip files. Primary-key tables with changelog-producer none/input/lookup; "
    "not with merge-engine first-row.")
ROW_TRACKING_ENABLED = key("row-tracking.enabled").bool_type().default_value(False).with_description(
    "Row tracking (append tables, Paimon 1.3): every row gets a stable `_ROW_ID` (the data file's `_FIRST_ROW_ID` "
    "plus its position, assigned at commit from the snapshot's `nextRowId`) and a `_SEQUENCE_NUMBER`, both "
    "readable as system columns; rewrites keep them.")
DATA_EVOLUTION_ENABLED = key("data-evolution.enabled").bool_type().default_value(False).with_description(
    "Data evolution (append tables with row tracking, Paimon 1.3): updates of some columns by row id "
    "(`update_by_row_id`, `upsert_by_key` of `table.data_evolution`) and writes of some columns write files of "
    "only those columns (`_WRITE_COLS`) over the rows' ranges; reads merge them (the newest write of a column "
    "wins), compaction merges them into one file per range. Deletes (`delete_by_row_id`, `delete_by_predicate`) "
    "need "
    "`deletion-vectors.enabled`. Needs `row-tracking.enabled`.")
GLOBAL_INDEX_ENABLED = key("global-index.enabled").bool_type().default_value(True).with_description(
    "Batch reads use BTree global indexes: an `=` / `in` filter on an indexed column reads only the files holding "
    "the row ids the index matched and the rows it does not cover. See docs/global_index.md.")
GLOBAL_INDEX_COLUMN_UPDATE_ACTION = key("global-index.column-update-action").enum_type(
    GlobalIndexColumnUpdateAction).default_value(GlobalIndexColumnUpdateAction.THROW_ERROR).with_description(
    "An update by row id of a column a global index covers (`update_by_row_id`, `upsert_by_key` of "
    "`table.data_evolution`): THROW_ERROR refuses it "
    "before anything is written, DROP_PARTITION_INDEX deletes the covering index files of the updated partitions in "
    "the same commit, IGNORE keeps them (stale: lookups may miss the updated rows). See docs/global_index.md.")
ROW_TRACKING_PARTITION_GROUP_ON_COMMIT = key("row-tracking.partition-group-on-commit").bool_type() \
    .default_value(False).with_description(
        "With row tracking: a commit assigns row ids to its new files grouped by partition (Paimon's rule).")
DELETION_VECTORS_MERGE_ON_READ = key("deletion-vectors.merge-on-read").bool_type().default_value(False) \
    .with_description("With deletion vectors, batch reads also see uncompacted level-0 files (merged on read).")
DELETION_VECTORS_BITMAP64 = key("deletion-vectors.bitmap64").bool_type().default_value(False).with_description(
    "Write deletion vectors as 64-bit (Iceberg-compatible) bitmaps; both kinds are always read. pypaimon 2.1 reads "
    "only the 32-bit kind.")
DELETION_VECTOR_INDEX_FILE_TARGET_SIZE = key("deletion-vector.index-file.target-size").memory_type() \
    .default_value(2 * MB).with_description(
        "Target size of a deletion vector index file. Primary-key tables keep one index file per bucket, as Paimon "
        "does; the size matters only for bucket-unaware tables, whose vectors this engine reads but never writes.")
RECORD_LEVEL_EXPIRE_TIME = key("record-level.expire-time").duration_type().no_default_value().with_description(
    "Records older than this (by record-level.time-field) are dropped during compaction.")
RECORD_LEVEL_TIME_FIELD = key("record-level.time-field").string_type().no_default_value().with_description(
    "Column holding the record time for record-level expiry.")
RECORD_LEVEL_TIME_FIELD_TYPE = key("record-level.time-field-type").enum_type(RecordLevelTimeFieldType) \
    .default_value(RecordLevelTimeFieldType.SECONDS_INT).with_description("Type of record-level.time-field.")

# ---- lifecycle ---------------------------------------------------------------------------------------------------
SNAPSHOT_NUM_RETAINED_MIN = key("snapshot.num-retained.min").int_type().default_value(10).with_description(
    "Minimum completed snapshots to retain.")
SNAPSHOT_NUM_RETAINED_MAX = key("snapshot.num-retained.max").int_type().default_value(INT_MAX).with_description(
    "Maximum completed snapshots to retain.")
SNAPSHOT_TIME_RETAINED = key("snapshot.time-retained").duration_type().default_value(3_600_000).with_description(
    "Maximum age of completed snapshots to retain.")
SNAPSHOT_EXPIRE_LIMIT = key("snapshot.expire.limit").int_type().default_value(50).with_description(
    "Maximum snapshots expired at once.")
SNAPSHOT_CLEAN_EMPTY_DIRECTORIES = key("snapshot.clean-empty-directories").bool_type().default_value(False) \
    .with_description("Delete empty partition/bucket directories when expiring.")
CHANGELOG_NUM_RETAINED_MIN = key("changelog.num-retained.min").int_type().no_default_value().with_description(
    "The minimum number of completed changelog to retain. Should be greater than or equal to 1. Unset: "
    "snapshot.num-retained.min.")
CHANGELOG_NUM_RETAINED_MAX = key("changelog.num-retained.max").int_type().no_default_value().with_description(
    "The maximum number of completed changelog to retain. Should be greater than or equal to the minimum number. "
    "Unset: snapshot.num-retained.max.")
CHANGELOG_TIME_RETAINED = key("changelog.time-retained").duration_type().no_default_value().with_description(
    "The maximum time of completed changelog to retain. Unset: snapshot.time-retained.")
PARTITION_EXPIRATION_TIME = key("partition.expiration-time").duration_type().no_default_value().with_description(
    "Partitions older than this are expired.")
PARTITION_EXPIRATION_CHECK_INTERVAL = key("partition.expiration-check-interval").duration_type().default_value(
    3_600_000).with_description("How often writers check for expired partitions.")
PARTITION_EXPIRATION_STRATEGY = key("partition.expiration-strategy").enum_type(PartitionExpireStrategy) \
    .default_value(PartitionExpireStrategy.VALUES_TIME).with_description(
        "values-time: partition age from its values; update-time: from its last update.")
PARTITION_EXPIRATION_MAX_NUM = key("partition.expiration-max-num").int_type().default_value(100).with_description(
    "Maximum partitions expired at once.")
PARTITION_TIMESTAMP_FORMATTER = key("partition.timestamp-formatter").string_type().no_default_value() \
    .with_description("Java-style formatter of partition timestamps (e.g. yyyyMMdd).")
PARTITION_TIMESTAMP_PATTERN = key("partition.timestamp-pattern").string_type().no_default_value() \
    .with_description("Pattern building a timestamp from partition values (e.g. $dt $hour:00:00).")
PARTITION_MARK_DONE_WHEN_END_INPUT = key("partition.end-input-to-done").bool_type().default_value(False) \
    .with_description("Mark partitions done when the input ends.")
METASTORE_PARTITIONED_TABLE = key("metastore.partitioned-table").bool_type().default_value(False).with_description(
    "Register the table's partitions in the metastore as commits add them and expiry drops them (a Hive "
    "catalog, Paimon's HiveCatalog); the filesystem catalog has no metastore and ignores it, as Paimon's does.")
METASTORE_TAG_TO_PARTITION = key("metastore.tag-to-partition").string_type().no_default_value().with_description(
    "Paimon's HiveCatalog registers a non-partitioned table as partitioned by this field and each tag as one of "
    "its partitions. Not implemented: a Hive catalog refuses to create or open a table with it (its tags would not "
    "be registered); the filesystem and JDBC catalogs ignore it, as Paimon's do.")
METASTORE_TAG_TO_PARTITION_PREVIEW = key("metastore.tag-to-partition.preview").string_type().default_value(
    "none").with_description(
    "With `metastore.tag-to-partition`: whether the metastore shows a preview partition of tags not yet created "
    "(Paimon's `none`, `process-time`, `watermark`, `batch`). Refused with it by a Hive catalog.")
PARTITION_MARK_DONE_ACTION = key("partition.mark-done-action").list_type().default_value(["success-file"]) \
    .with_description("How mark-partition-done marks a partition done (comma-separated): success-file (a _SUCCESS "
                      "file in its directory; the engine's only one), done-partition and mark-event (need a "
                      "metastore), http-report, custom (a Java class): refused (docs/partitions.md).")
TAG_AUTOMATIC_CREATION = key("tag.automatic-creation").enum_type(TagCreationMode).default_value(
    TagCreationMode.NONE).with_description("Create tags automatically: none, process-time, watermark or batch.")
TAG_CREATION_PERIOD = key("tag.creation-period").enum_type(TagCreationPeriod).default_value(
    TagCreationPeriod.DAILY).with_description("Period of automatic tags.")
TAG_CREATION_DELAY = key("tag.creation-delay").duration_type().default_value(0).with_description(
    "Delay after the period ends before its tag is created.")
TAG_PERIOD_FORMATTER = key("tag.period-formatter").enum_type(TagPeriodFormatter).default_value(
    TagPeriodFormatter.WITH_DASHES).with_description("Tag name format of automatic tags.")
TAG_NUM_RETAINED_MAX = key("tag.num-retained-max").int_type().no_default_value().with_description(
    "Maximum automatic tags to retain.")
TAG_DEFAULT_TIME_RETAINED = key("tag.default-time-retained").duration_type().no_default_value().with_description(
    "Default retention of tags created without one.")
MAINTENANCE_ORPHANS_ENABLED = key("maintenance.remove-orphan-files.enabled").bool_type().default_value(False) \
    .with_description("The engine's maintenance planner (`maintain`, docs/maintenance-planner.md) lists the table's "
                      "files for orphans and plans remove-orphan-files when it finds some (a listing of the whole "
                      "table and a read of every snapshot's manifests: off by default). Not a Paimon option.")
MAINTENANCE_SORT_FILES_PER_VALUE = key("maintenance.sort.files-per-value").double_type().default_value(4.0) \
    .with_validator(lambda v: v >= 0, "0 (off) or more").with_description(
        "The maintenance planner (`maintain`) plans a sort compaction of a partition of an append table with "
        "bucket = -1 and clustering.columns (without clustering.incremental) when a filter on the first clustering "
        "column reads this many files or more on average (from the files' statistics, docs/layout.md): ordered by "
        "clustering.columns with clustering.strategy. 0 turns it off. Not a Paimon option.")
MAINTENANCE_ORPHANS_OLDER_THAN = key("maintenance.remove-orphan-files.older-than").duration_type() \
    .default_value(86_400_000).with_description(
        "The maintenance planner's orphan files: only those older than this (files of a running write are "
        "younger). Not a Paimon option.")
# ---- Iceberg compatibility (Paimon's IcebergOptions; docs/iceberg.md, ADR 0046) ---------------------------------
METADATA_ICEBERG_STORAGE = key("metadata.iceberg.storage").enum_type(IcebergStorage).default_value(
    IcebergStorage.DISABLED).with_description(
    "When set, produce Iceberg metadata after a snapshot is committed, so that Iceberg readers can read Paimon's "
    "raw data files. Written here: table-location, hadoop-catalog; hive-catalog and rest-catalog tables are read, "
    "their writes refused (the capability gate).")
METADATA_ICEBERG_COMPATIBLE = key("metadata.iceberg-compatible").bool_type().default_value(False).with_description(
    "Paimon 0.9's switch, before metadata.iceberg.storage: true means table-location.")
METADATA_ICEBERG_STORAGE_LOCATION = key("metadata.iceberg.storage-location").enum_type(IcebergStorageLocation) \
    .no_default_value().with_description(
        "To store Iceberg metadata in a separate directory (catalog-location: <warehouse>/iceberg/<db>/<table>, "
        "the default for hadoop-catalog) or under the table location (the default for table-location).")
METADATA_ICEBERG_FORMAT_VERSION = key("metadata.iceberg.format-version").int_type().default_value(2).with_validator(
    lambda n: n in (2, 3), "2 or 3").with_description(
    "The format version of the Iceberg table, 2 or 3 (only 3 supports deletion vectors). Written here: 2; a table "
    "set to 3 is read, its writes refused.")
METADATA_ICEBERG_COMPACT_MIN_FILE_NUM = key("metadata.iceberg.compaction.min.file-num").int_type().default_value(
    10).with_validator(lambda n: n >= 1, "at least 1").with_description(
    "Minimum number of Iceberg manifest metadata files to trigger manifest metadata compaction.")
METADATA_ICEBERG_COMPACT_MAX_FILE_NUM = key("metadata.iceberg.compaction.max.file-num").int_type().default_value(
    50).with_validator(lambda n: n >= 1, "at least 1").with_description(
    "If number of small Iceberg manifest metadata files exceeds this limit, always trigger manifest metadata "
    "compaction regardless of their total size.")
METADATA_ICEBERG_DELETE_AFTER_COMMIT = key("metadata.iceberg.delete-after-commit.enabled").bool_type() \
    .default_value(True).with_description("Whether to delete old metadata files after each table commit.")
METADATA_ICEBERG_PREVIOUS_VERSIONS_MAX = key("metadata.iceberg.previous-versions-max").int_type().default_value(
    0).with_validator(lambda n: n >= 0, "0 or more").with_description(
    "The number of old metadata files (v<N>.metadata.json) to keep after each table commit.")
METADATA_ICEBERG_MANIFEST_COMPRESSION = key("metadata.iceberg.manifest-compression").string_type().default_value(
    "deflate").with_description(
    "Compression for Iceberg manifest files and manifest lists: null, deflate or zstd. Paimon's default, snappy, "
    "is refused here: neither this engine nor pyiceberg installs a snappy codec.")
METADATA_ICEBERG_MANIFEST_LEGACY_VERSION = key("metadata.iceberg.manifest-legacy-version").bool_type() \
    .default_value(False).with_description(
        "Should use the legacy manifest version to generate Iceberg's 1.4 manifest files.")
METADATA_ICEBERG_URI = key("metadata.iceberg.uri").string_type().no_default_value().with_description(
    "Hive metastore uri for Iceberg Hive catalog (hive-catalog storage: not written by this engine).")
METADATA_ICEBERG_HIVE_CONF_DIR = key("metadata.iceberg.hive-conf-dir").string_type().no_default_value() \
    .with_description("hive-conf-dir for Iceberg Hive catalog (hive-catalog storage).")
METADATA_ICEBERG_HADOOP_CONF_DIR = key("metadata.iceberg.hadoop-conf-dir").string_type().no_default_value() \
    .with_description("hadoop-conf-dir for Iceberg Hive catalog (hive-catalog storage).")
METADATA_ICEBERG_HIVE_CLIENT_CLASS = key("metadata.iceberg.hive-client-class").string_type().default_value(
    "org.apache.hadoop.hive.metastore.HiveMetaStoreClient").with_description(
    "Hive client class name for Iceberg Hive Catalog (hive-catalog storage).")
METADATA_ICEBERG_DATABASE = key("metadata.iceberg.database").string_type().no_default_value().with_description(
    "Metastore database name(s) for Iceberg Catalog, ';'-separated (hive-catalog and rest-catalog storage).")
METADATA_ICEBERG_TABLE = key("metadata.iceberg.table").string_type().no_default_value().with_description(
    "Metastore table name for Iceberg Catalog (hive-catalog and rest-catalog storage).")
METADATA_ICEBERG_GLUE_SKIP_ARCHIVE = key("metadata.iceberg.glue.skip-archive").bool_type().default_value(False) \
    .with_description("Skip archive for AWS Glue catalog (hive-catalog storage through Glue).")
METADATA_ICEBERG_HIVE_SKIP_UPDATE_STATS = key("metadata.iceberg.hive-skip-update-stats").bool_type() \
    .default_value(False).with_description("Skip updating Hive stats (hive-catalog storage).")
METADATA_ICEBERG_TABLE_PROPERTIES_PREFIX = "metadata.iceberg.table-properties."
"""Iceberg table properties: ``metadata.iceberg.table-properties.<key>`` puts ``<key>`` in the metadata JSON's
``properties``."""
CONSUMER_EXPIRATION_TIME = key("consumer.expiration-time").duration_type().no_default_value().with_description(
    "Consumers not updated for this long are removed.")
TAG_PERIOD_DURATION = key("tag.creation-period-duration").duration_type().no_default_value().with_description(
    "Period of automatic tags as a duration (overrides tag.creation-period; tag names yyyyMMddHHmm).")
TAG_TIME_EXPIRE_ENABLED = key("tag.time-expire-enabled").bool_type().default_value(True).with_description(
    "Expire tags whose time-retained has passed (at commit time and in expire_tags).")
TAG_AUTOMATIC_COMPLETION = key("tag.automatic-completion").bool_type().default_value(False).with_description(
    "Create the automatic tags of skipped periods, one per commit.")
TAG_BATCH_CUSTOMIZED_NAME = key("tag.batch.customized-name").string_type().no_default_value().with_description(
    "Name of the tag created after a batch write (tag.automatic-creation = batch).")
PARTITION_EXPIRATION_BATCH_SIZE = key("partition.expiration-batch-size").int_type().no_default_value() \
    .with_description("Drop expired partitions in commits of at most this many partitions.")
END_INPUT_CHECK_PARTITION_EXPIRE = key("end-input.check-partition-expire").bool_type().default_value(False) \
    .with_description("Batch commits check partition expiry regardless of partition.expiration-check-interval.")
CONSUMER_CHANGELOG_ONLY = key("consumer.changelog-only").bool_type().default_value(False).with_description(
    "Consumers protect only (decoupled) changelogs, not snapshots, from expiry.")
CONSUMER_IGNORE_PROGRESS = key("consumer.ignore-progress").bool_type().default_value(False).with_description(
    "Ignore a consumer's recorded progress when reading.")

# ---- reading -----------------------------------------------------------------------------------------------------
BRANCH = key("branch").string_type().default_value("main").with_description(
    "Specify branch name: a table copied with it (``table.copy({'branch': 'b1'})``, as ``db.t$branch_b1``) reads, "
    "writes, tags, compacts and expires that branch (``branch/branch-<name>/``).")
SCAN_FALLBACK_BRANCH = key("scan.fallback-branch").string_type().no_default_value().with_description(
    "When a batch job queries from a table, if a partition does not exist in the current branch, the reader will "
    "try to get this partition from this fallback branch (time travel travels the fallback branch too; streaming "
    "reads ignore it; Spark's incremental reads refuse it: docs/branches.md).")
SCAN_MODE = key("scan.mode").enum_type(StartupMode).default_value(StartupMode.DEFAULT).with_description(
    "Specify the scanning behavior of the source: default (from-timestamp if scan.timestamp-millis or "
    "scan.timestamp is set, from-snapshot if scan.snapshot-id or scan.tag-name is set, incremental if "
    "incremental-between or incremental-between-timestamp is set, else latest-full), latest-full (full latest "
    "snapshot, then its changes when streaming), latest (streaming: only new changes; batch: as latest-full), "
    "latest-delta (batch only: what the latest snapshot changed), compacted-full (the snapshot of the latest "
    "(full) compaction, then changes), from-timestamp, from-snapshot, from-snapshot-full, incremental.")
SCAN_SNAPSHOT_ID = key("scan.snapshot-id").long_type().no_default_value().with_description(
    'Optional snapshot id used in case of "from-snapshot" or "from-snapshot-full" scan mode.')
SCAN_TAG_NAME = key("scan.tag-name").string_type().no_default_value().with_description(
    'Optional tag name used in case of "from-snapshot" scan mode (batch reads only).')
SCAN_TIMESTAMP_MILLIS = key("scan.timestamp-millis").long_type().no_default_value().with_description(
    'Optional timestamp used in case of "from-timestamp" scan mode. Batch reads read the snapshot at or before '
    "it (an error if there is none); streaming reads start after the last snapshot earlier than it.")
SCAN_TIMESTAMP = key("scan.timestamp").string_type().no_default_value().with_description(
    'Optional timestamp used in case of "from-timestamp" scan mode (local time zone, "yyyy-MM-dd HH:mm:ss[.SSS]"); '
    "converted to epoch milliseconds.")
SCAN_BOUNDED_WATERMARK = key("scan.bounded.watermark").long_type().no_default_value().with_description(
    'End condition "watermark" for bounded streaming mode: a stream read ends when it meets a snapshot with a '
    "larger watermark.")
INCREMENTAL_BETWEEN = key("incremental-between").string_type().no_default_value().with_description(
    "Read incremental changes between start snapshot (exclusive) and end snapshot (inclusive), e.g. '5,10'; "
    "or between two tags, 'TAG1,TAG3'.")
INCREMENTAL_BETWEEN_TIMESTAMP = key("incremental-between-timestamp").string_type().no_default_value() \
    .with_description("Read incremental changes between start timestamp (exclusive) and end timestamp "
                      "(inclusive), e.g. 't1,t2' (epoch millis, or local 'yyyy-MM-dd HH:mm:ss').")
INCREMENTAL_BETWEEN_SCAN_MODE = key("incremental-between-scan-mode").enum_type(IncrementalBetweenScanMode) \
    .default_value(IncrementalBetweenScanMode.AUTO).with_description(
        "Scan kind of incremental-between reads: auto (changelog files if the table has a changelog producer, "
        "else delta files), delta (the files each APPEND snapshot added), changelog (changelog files), diff (the "
        "difference of the start and end snapshots' contents).")
INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT = key("incremental-between-tag-to-snapshot").bool_type().default_value(False) \
    .with_description("Whether incremental-between two tags reads the changes of the snapshots between the tags' "
                      "snapshots (else the diff of the two tags).")
CONSUMER_ID = key("consumer-id").string_type().no_default_value().with_description(
    "Consumer id for recording the offset of consumption in the storage: a streaming read resumes from the "
    "consumer's next snapshot, and snapshot expiry keeps the snapshots it has not consumed yet.")
CONSUMER_MODE = key("consumer.mode").enum_type(ConsumerMode).default_value(ConsumerMode.EXACTLY_ONCE) \
    .with_description("Specify the consumer consistency mode for table: exactly-once (progress is recorded when "
                      "the reader confirms a checkpoint) or at-least-once.")
READ_BATCH_SIZE = key("read.batch-size").int_type().default_value(1024).with_description("Read batch size.")
SOURCE_SPLIT_TARGET_SIZE = key("source.split.target-size").memory_type().default_value(128 * MB).with_description(
    "Target size of a source split.")
SOURCE_SPLIT_OPEN_FILE_COST = key("source.split.open-file-cost").memory_type().default_value(4 * MB) \
    .with_description("Cost of opening a file when packing splits.")
CONTINUOUS_DISCOVERY_INTERVAL = key("continuous.discovery-interval").duration_type().default_value(10_000) \
    .with_description("How often a streaming read looks for new snapshots.")
FILE_INDEX_READ_ENABLED = key("file-index.read.enabled").bool_type().default_value(True).with_description(
    "Use file indexes to skip files at read time.")
FILE_INDEX_IN_MANIFEST_THRESHOLD = key("file-index.in-manifest-threshold").memory_type().default_value(500) \
    .with_description("File indexes smaller than this are embedded in the manifest.")
STREAMING_READ_OVERWRITE = key("streaming-read-overwrite").bool_type().default_value(False).with_description(
    "Whether to read the changes from overwrite in streaming mode. Cannot be set to true when changelog producer "
    "is full-compaction or lookup because it will read duplicated changes.")
STREAMING_READ_APPEND_OVERWRITE = key("streaming-read-append-overwrite").bool_type().default_value(False) \
    .with_description("Whether to read the delta from append table's overwrite commit in streaming mode.")
STREAMING_READ_SNAPSHOT_DELAY = key("streaming.read.snapshot.delay").duration_type().no_default_value() \
    .with_description("The delay duration of stream read when scan incremental snapshots.")

# ---- table types (issue 39: format and object tables) -----------------------------------------------------------
TYPE = key("type").enum_type(TableType).default_value(TableType.TABLE).with_description(
    "The kind of table (Paimon's `CoreOptions.TYPE`): `table` and `materialized-table` are data tables; "
    "`object-table` is a metadata index of the objects under `object-location`, refreshed (Paimon 1.0-1.2; in a "
    "REST catalog: Paimon 1.3+'s virtual listing of the table's own `path` at every read, docs/object-tables.md); "
    "`format-table` is a directory of "
    "csv/parquet/orc/json files, held by the Hive and REST catalogs "
    "(docs/format-tables.md). `lance-table` and `iceberg-table` are refused by name, on create and on open.")
OBJECT_LOCATION = key("object-location").string_type().no_default_value().with_description(
    "The object location for object table: the directory (local, `s3://bucket/prefix`) whose objects the table "
    "indexes. Required when `type` = `object-table` (Paimon 1.0-1.2's design); refused in a REST catalog, whose "
    "object tables list their own `path`.")
TABLE_TYPE_OPTIONS = (TYPE, OBJECT_LOCATION)

SECTIONS = (
    OptionSection("Keys and distribution", (
        BUCKET, BUCKET_KEY, BUCKET_FUNCTION_TYPE, PRIMARY_KEY, PARTITION, PARTITION_DEFAULT_NAME,
        PARTITION_LEGACY_NAME, POSTPONE_DEFAULT_BUCKET_NUM, POSTPONE_TARGET_ROW_NUM_PER_BUCKET,
        POSTPONE_TARGET_SIZE_PER_BUCKET, POSTPONE_BATCH_WRITE_FIXED_BUCKET, DYNAMIC_BUCKET_TARGET_ROW_NUM,
        DYNAMIC_BUCKET_INITIAL_BUCKETS,
        DYNAMIC_BUCKET_MAX_BUCKETS, DYNAMIC_BUCKET_ASSIGNER_PARALLELISM, CROSS_PARTITION_UPSERT_INDEX_TTL,
        CROSS_PARTITION_UPSERT_BOOTSTRAP_PARALLELISM)),
    OptionSection("Merging, sequence and changelog", (
        MERGE_ENGINE, SEQUENCE_FIELD, SEQUENCE_FIELD_SORT_ORDER, SEQUENCE_SNAPSHOT_ORDERING, ROWKIND_FIELD,
        IGNORE_DELETE, IGNORE_UPDATE_BEFORE, PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
        PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP, AGGREGATION_REMOVE_RECORD_ON_DELETE, FIELDS_DEFAULT_AGG_FUNC,
        CHANGELOG_PRODUCER, CHANGELOG_PRODUCER_ROW_DEDUPLICATE, CHANGELOG_PRODUCER_ROW_DEDUPLICATE_IGNORE_FIELDS,
        PRIMARY_KEY_NULLABLE)),
    OptionSection("Writing and files", (
        WRITE_ONLY, WRITE_BUFFER_SIZE, WRITE_BUFFER_SPILLABLE, WRITE_BUFFER_SPILL_MAX_DISK_SIZE,
        LOCAL_SORT_MAX_NUM_FILE_HANDLES, PAGE_SIZE, TARGET_FILE_SIZE, TARGET_FILE_ROW_NUM,
        BLOB_FIELD, BLOB_TARGET_FILE_SIZE,
        FILE_FORMAT, FILE_FORMAT_PER_LEVEL, FILE_COMPRESSION, FILE_COMPRESSION_PER_LEVEL,
        FILE_COMPRESSION_ZSTD_LEVEL, DATA_FILE_PREFIX, CHANGELOG_FILE_PREFIX,
        CHANGELOG_FILE_FORMAT, CHANGELOG_FILE_COMPRESSION, CHANGELOG_FILE_STATS_MODE,
        DATA_FILE_EXTERNAL_PATHS, DATA_FILE_EXTERNAL_PATHS_STRATEGY, DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS,
        DATA_FILE_EXTERNAL_PATHS_WEIGHTS, METADATA_STATS_MODE, METADATA_STATS_KEEP_FIRST_N, MANIFEST_TARGET_FILE_SIZE,
        MANIFEST_MERGE_MIN_COUNT,
        MANIFEST_FULL_COMPACTION_SIZE, MANIFEST_COMPRESSION, DYNAMIC_PARTITION_OVERWRITE, WRITE_MERGE_SCHEMA,
        WRITE_MERGE_SCHEMA_EXPLICIT_CAST)),
    OptionSection("File formats", (
        AVRO_CODEC, ORC_STRIPE_SIZE, ORC_COMPRESS_SIZE, ORC_ROW_INDEX_STRIDE, ORC_DICTIONARY_KEY_THRESHOLD,
        ORC_BLOOM_FILTER_COLUMNS, ORC_BLOOM_FILTER_FPP)),
    OptionSection("Commit", (
        COMMIT_MAX_RETRIES, COMMIT_TIMEOUT, COMMIT_MIN_RETRY_WAIT, COMMIT_MAX_RETRY_WAIT, COMMIT_USER_PREFIX,
        COMMIT_FORCE_COMPACT, COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT)),
    OptionSection("Compaction and table modes", (
        NUM_SORTED_RUNS_COMPACTION_TRIGGER, NUM_SORTED_RUNS_STOP_TRIGGER, NUM_LEVELS,
        COMPACTION_MAX_SIZE_AMPLIFICATION, COMPACTION_SIZE_RATIO, COMPACTION_SMALL_FILE_RATIO,
        COMPACTION_OPTIMIZATION_INTERVAL, COMPACTION_TOTAL_SIZE_THRESHOLD, COMPACTION_INCREMENTAL_SIZE_THRESHOLD,
        COMPACTION_OFFPEAK_START_HOUR, COMPACTION_OFFPEAK_END_HOUR, COMPACTION_OFFPEAK_RATIO,
        COMPACTION_FORCE_REWRITE_ALL_FILES, COMPACTION_MIN_FILE_NUM, COMPACTION_DELETE_RATIO_THRESHOLD,
        ZORDER_VAR_LENGTH_CONTRIBUTION, CLUSTERING_COLUMNS, CLUSTERING_STRATEGY, CLUSTERING_INCREMENTAL,
        COMPACTION_SKIP_EXPIRED_PARTITIONS, FULL_COMPACTION_DELTA_COMMITS,
        LOOKUP_WAIT, DELETION_VECTORS_ENABLED,
        DELETION_VECTORS_MERGE_ON_READ, DELETION_VECTORS_BITMAP64, DELETION_VECTOR_INDEX_FILE_TARGET_SIZE,
        ROW_TRACKING_ENABLED, ROW_TRACKING_PARTITION_GROUP_ON_COMMIT, DATA_EVOLUTION_ENABLED,
        GLOBAL_INDEX_ENABLED, GLOBAL_INDEX_COLUMN_UPDATE_ACTION,
        RECORD_LEVEL_EXPIRE_TIME, RECORD_LEVEL_TIME_FIELD,
        RECORD_LEVEL_TIME_FIELD_TYPE)),
    OptionSection("Lifecycle: snapshots, changelog, partitions, tags, consumers", (
        SNAPSHOT_NUM_RETAINED_MIN, SNAPSHOT_NUM_RETAINED_MAX, SNAPSHOT_TIME_RETAINED, SNAPSHOT_EXPIRE_LIMIT,
        SNAPSHOT_CLEAN_EMPTY_DIRECTORIES, CHANGELOG_NUM_RETAINED_MIN, CHANGELOG_NUM_RETAINED_MAX,
        CHANGELOG_TIME_RETAINED, PARTITION_EXPIRATION_TIME, PARTITION_EXPIRATION_CHECK_INTERVAL,
        PARTITION_EXPIRATION_STRATEGY, PARTITION_EXPIRATION_MAX_NUM, PARTITION_TIMESTAMP_FORMATTER,
        PARTITION_TIMESTAMP_PATTERN, PARTITION_MARK_DONE_WHEN_END_INPUT, PARTITION_MARK_DONE_ACTION,
        METASTORE_PARTITIONED_TABLE, METASTORE_TAG_TO_PARTITION, METASTORE_TAG_TO_PARTITION_PREVIEW,
        TAG_AUTOMATIC_CREATION,
        TAG_CREATION_PERIOD, TAG_CREATION_DELAY, TAG_PERIOD_FORMATTER, TAG_NUM_RETAINED_MAX,
        TAG_DEFAULT_TIME_RETAINED, CONSUMER_EXPIRATION_TIME, CONSUMER_IGNORE_PROGRESS, TAG_PERIOD_DURATION,
        TAG_TIME_EXPIRE_ENABLED, TAG_AUTOMATIC_COMPLETION, TAG_BATCH_CUSTOMIZED_NAME, PARTITION_EXPIRATION_BATCH_SIZE,
        END_INPUT_CHECK_PARTITION_EXPIRE, CONSUMER_CHANGELOG_ONLY, MAINTENANCE_ORPHANS_ENABLED,
        MAINTENANCE_ORPHANS_OLDER_THAN, MAINTENANCE_SORT_FILES_PER_VALUE)),
    OptionSection("Iceberg compatibility", (
        METADATA_ICEBERG_STORAGE, METADATA_ICEBERG_COMPATIBLE, METADATA_ICEBERG_STORAGE_LOCATION,
        METADATA_ICEBERG_FORMAT_VERSION, METADATA_ICEBERG_COMPACT_MIN_FILE_NUM, METADATA_ICEBERG_COMPACT_MAX_FILE_NUM,
        METADATA_ICEBERG_DELETE_AFTER_COMMIT, METADATA_ICEBERG_PREVIOUS_VERSIONS_MAX,
        METADATA_ICEBERG_MANIFEST_COMPRESSION, METADATA_ICEBERG_MANIFEST_LEGACY_VERSION, METADATA_ICEBERG_URI,
        METADATA_ICEBERG_HIVE_CONF_DIR, METADATA_ICEBERG_HADOOP_CONF_DIR, METADATA_ICEBERG_HIVE_CLIENT_CLASS,
        METADATA_ICEBERG_DATABASE, METADATA_ICEBERG_TABLE, METADATA_ICEBERG_GLUE_SKIP_ARCHIVE,
        METADATA_ICEBERG_HIVE_SKIP_UPDATE_STATS)),
    OptionSection("Reading", (
        BRANCH, SCAN_FALLBACK_BRANCH, SCAN_MODE, SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP,
        SCAN_BOUNDED_WATERMARK,
        INCREMENTAL_BETWEEN, INCREMENTAL_BETWEEN_TIMESTAMP, INCREMENTAL_BETWEEN_SCAN_MODE,
        INCREMENTAL_BETWEEN_TAG_TO_SNAPSHOT, CONSUMER_ID, CONSUMER_MODE, READ_BATCH_SIZE,
        SOURCE_SPLIT_TARGET_SIZE, SOURCE_SPLIT_OPEN_FILE_COST, CONTINUOUS_DISCOVERY_INTERVAL,
        FILE_INDEX_READ_ENABLED, FILE_INDEX_IN_MANIFEST_THRESHOLD, STREAMING_READ_OVERWRITE,
        STREAMING_READ_APPEND_OVERWRITE, STREAMING_READ_SNAPSHOT_DELAY)),
    OptionSection("Table type", TABLE_TYPE_OPTIONS),
)

_FIELD_PROPS = ("aggregate-function", "ignore-retract", "sequence-group", "list-agg-delimiter", "distinct",
                "nested-key", "stats-mode", "default-value", "count-limit", "nested-key-null-strategy",
                "nested-sequence-field", "ts-field")
PATTERNS = (
    PatternOption(key("fields.<field>.<property>").string_type().no_default_value().with_description(
        "Per-field options: " + ", ".join(_FIELD_PROPS) + "."),
        re.compile(r"fields\.[^.].*\.(" + "|".join(re.escape(p) for p in _FIELD_PROPS) + r")")),
    PatternOption(key("file-index.<type>.columns").list_type().no_default_value().with_description(
        "Columns with a file index of <type> (bloom-filter, bitmap, bsi, range-bitmap)."),
        re.compile(r"file-index\.(bloom-filter|bitmap|bsi|range-bitmap)\.columns")),
    PatternOption(key("file-index.<type>.<column>.<property>").string_type().no_default_value().with_description(
        "Per-column file index properties, e.g. file-index.bloom-filter.<column>.fpp / .items."),
        re.compile(r"file-index\.(bloom-filter|bitmap|bsi|range-bitmap)\.[^.]+\.[a-z-]+")),
    PatternOption(key(METADATA_ICEBERG_TABLE_PROPERTIES_PREFIX + "<key>").string_type().no_default_value()
                  .with_description("An Iceberg table property, written into the metadata JSON's properties."),
                  re.compile(re.escape(METADATA_ICEBERG_TABLE_PROPERTIES_PREFIX) + ".+")),
    PatternOption(key("metadata.iceberg.rest.<key>").string_type().no_default_value().with_description(
        "Iceberg REST catalog settings (rest-catalog storage: not written by this engine)."),
        re.compile(r"metadata\.iceberg\.rest\..+")),
)

# Options of other components: accepted without interpretation, and "known-harmless" for the capability gate
# (table_engine.features): they tune a job, a cache or the catalog, never the layout or the meaning of the files.
# A key that is neither registered above nor listed here is must-understand: the gate refuses the table.
RECOGNIZED_PREFIXES = {
    "spark.": "Spark settings", "sink.": "Flink sink settings", "lookup.": "lookup join cache settings",
    "metastore.": "metastore settings", "hive.": "Hive table properties (the Hive catalog registers them without "
    "the prefix)", "format.": "file format settings passed to the format writer",
    "parquet.": "Parquet writer settings", "orc.": "ORC writer settings", "avro.": "Avro writer settings",
    "materialized-table.": "Flink materialized table definitions", "visibility-callback.": "Flink commit callbacks",
    "commit.callback.": "Java commit callback parameters", "tag.callback.": "Java tag callback parameters",
    "partition.mark-done-action.": "partition mark-done action settings", "manifest-sort.": "Java manifest sorting",
    "sort-compaction.": "Flink sort compaction", "clustering.history-partition.": "Java incremental clustering",
    "btree-index.": "global index build settings (ADR 0019)", "bitmap-index.": "global index build settings",
    "sorted-index.": "global index build settings",
}
_JAVA_RUNTIME = (
    "async-file-write", "cache-page-size", "file-operation.thread-num", "file-reader-async-threshold",
    "file.block-size", "local-kv-db.block-size", "local-merge-buffer-size", "lookup-compact",
    "lookup-compact.max-interval", "force-lookup", "compaction.file-num-limit", "compaction.force-up-level-0",
    "sort-engine", "sort-spill-buffer-size", "sort-spill-threshold",
    "spill-compression", "spill-compression.zstd-level",
    "write-max-writers-to-spill", "write.batch-memory", "write.batch-size", "write-buffer-for-append",
    "bucket-append-ordered", "write.sequence-number-init-mode", "file.suffix.include.compression",
    "scan.ignore-corrupt-files", "scan.ignore-lost-files", "scan.manifest.parallelism", "scan.max-splits-per-task",
    "scan.plan-sort-partition", "scan.plan-auto-tag-for-read.time-retained",
    "clustering.incremental.mode", "clustering.incremental.optimize-write",
    "commit.callbacks", "tag.callbacks", "commit.discard-duplicate-files", "commit.force-create-snapshot",
    "manifest.delete-file-drop-stats", "manifest.merge-optimize.enabled", "metadata.stats-dense-store",
    "metadata.stats-mode.per.level", "snapshot.expire.execution-mode", "snapshot.ignore-empty-commit",
    "snapshot.watermark-idle-timeout", "tag.create-success-file", "overwrite-upgrade", "add-column-before-partition",
    "alter-column-null-to-not-null.disabled", "disable-explicit-type-casting", "auto-create",
    "delete.force-produce-changelog", "full-text-index.search-mode", "scalar-index.search-mode",
    "vector-index.search-mode",
    "partition.sink-strategy", "partition.idle-time-to-report-statistic",
)
RECOGNIZED = {"path": "catalog", "owner": "catalog", "comment": "catalog",
              "streaming-read-mode": "Flink", "scan.parallelism": "Flink", "sink.parallelism": "Flink",
              **dict.fromkeys(_JAVA_RUNTIME, "Paimon Java / Flink writer and job settings")}

REGISTRY = OptionRegistry(SECTIONS, PATTERNS, RECOGNIZED, RECOGNIZED_PREFIXES)

#: options that cannot change once a table has data
IMMUTABLE_OPTIONS = frozenset({"bucket", "bucket-key", "merge-engine", "primary-key", "partition",
                               "sequence.field", "rowkind.field", "bucket-function.type", "data-file.prefix",
                               "row-tracking.enabled"})


_UNSUPPORTED_BRANCH_OPTIONS = ("scan.primary-branch",)
"""Options a table may carry (the capability gate refuses such a table: :mod:`table_engine.features`) but the engine
never sets: a clearer error than "unknown option" (docs/branches.md)."""


def validate_options(raw: Mapping[str, str]) -> None:
    """Raise OptionError naming every unknown key (with a suggestion) and every value that does not parse, and
    option combinations Paimon rejects."""
    for unsupported in _UNSUPPORTED_BRANCH_OPTIONS:
        if unsupported in raw:
            raise OptionError(f"'{unsupported}' (Paimon's primary-branch reads) is not supported by this engine: "
                              "read the branch itself (db.t$branch_<name>) instead")
    REGISTRY.validate(raw)
    _validate_deletion_vectors(CoreOptions(raw))
    _validate_data_evolution(CoreOptions(raw))
    _validate_changelog(CoreOptions(raw))
    _validate_retention(CoreOptions(raw))
    CoreOptions(raw).data_file_external_paths()
    CoreOptions(raw).data_file_external_path_weights()


def _validate_retention(opts: CoreOptions) -> None:
    """Paimon's ``SchemaValidation`` rules on snapshot and changelog retention counts."""
    for kind, lo, hi in (("snapshot", opts.snapshot_num_retained_min(), opts.snapshot_num_retained_max()),
                         ("changelog", opts.changelog_num_retained_min(), opts.changelog_num_retained_max())):
        if lo < 1:
            raise OptionError(f"{kind}.num-retained.min = {lo}: it must be at least 1")
        if lo > hi:
            raise OptionError(f"{kind}.num-retained.min = {lo} is larger than {kind}.num-retained.max = {hi}")


def _validate_changelog(opts: CoreOptions) -> None:
    """Paimon's ``SchemaValidation`` rules on changelog producers."""
    producer = opts.changelog_producer()
    if FULL_COMPACTION_DELTA_COMMITS.is_set(opts.raw) and producer == ChangelogProducer.LOOKUP:
        raise OptionError("'full-compaction.delta-commits' is incompatible with 'changelog-producer'='lookup'. Use "
                          "'changelog-producer'='full-compaction' to get periodic full compaction with changelog "
                          "generation, or remove 'full-compaction.delta-commits'.")
    if opts.get(STREAMING_READ_OVERWRITE) and producer in (ChangelogProducer.FULL_COMPACTION,
                                                           ChangelogProducer.LOOKUP):
        raise OptionError(f"Cannot set streaming-read-overwrite to true when changelog producer is "
                          f"{producer.value} because it will read duplicated changes.")


def _validate_data_evolution(opts: CoreOptions) -> None:
    """Paimon's ``SchemaValidation``: data evolution needs row tracking."""
    if opts.data_evolution_enabled() and not opts.row_tracking_enabled():
        raise OptionError("data-evolution.enabled = true needs row-tracking.enabled = true")


def _validate_deletion_vectors(opts: CoreOptions) -> None:
    """Paimon's ``SchemaValidation.validateForDeletionVectors``."""
    if not opts.deletion_vectors_enabled():
        return
    producer = opts.changelog_producer()
    if producer not in (ChangelogProducer.NONE, ChangelogProducer.INPUT, ChangelogProducer.LOOKUP):
        raise OptionError(f"deletion-vectors.enabled = true works only with changelog-producer none, input or "
                          f"lookup, not {producer.value!r}")
    # the merge engines' own rules: table_engine.lsm.merge_engines.check_engine_options


class CoreOptions:
    """Typed view of a table's options (raw strings as stored in the schema)."""

    def __init__(self, raw: Mapping[str, str] | None = None) -> None:
        self.raw: dict[str, str] = dict(raw or {})

    def get(self, option: ConfigOption[V]) -> V:
        return option.value_from(self.raw)

    bucket = accessor(BUCKET)
    table_type = accessor(TYPE)
    dynamic_bucket_target_row_num = accessor(DYNAMIC_BUCKET_TARGET_ROW_NUM)
    dynamic_bucket_max_buckets = accessor(DYNAMIC_BUCKET_MAX_BUCKETS)
    partition_default_name = accessor(PARTITION_DEFAULT_NAME)
    rowkind_field = accessor(ROWKIND_FIELD)
    ignore_delete = accessor(IGNORE_DELETE)
    ignore_update_before = accessor(IGNORE_UPDATE_BEFORE)
    changelog_producer = accessor(CHANGELOG_PRODUCER)
    write_only = accessor(WRITE_ONLY)
    write_merge_schema = accessor(WRITE_MERGE_SCHEMA)
    write_merge_schema_explicit_cast = accessor(WRITE_MERGE_SCHEMA_EXPLICIT_CAST)
    write_buffer_size = accessor(WRITE_BUFFER_SIZE)
    file_compression = accessor(FILE_COMPRESSION)
    file_compression_zstd_level = accessor(FILE_COMPRESSION_ZSTD_LEVEL)
    data_file_prefix = accessor(DATA_FILE_PREFIX)
    stats_mode = accessor(METADATA_STATS_MODE)
    manifest_target_file_size = accessor(MANIFEST_TARGET_FILE_SIZE)
    manifest_merge_min_count = accessor(MANIFEST_MERGE_MIN_COUNT)
    manifest_full_compaction_threshold_size = accessor(MANIFEST_FULL_COMPACTION_SIZE)
    dynamic_partition_overwrite = accessor(DYNAMIC_PARTITION_OVERWRITE)
    commit_max_retries = accessor(COMMIT_MAX_RETRIES)
    commit_timeout = accessor(COMMIT_TIMEOUT)
    commit_min_retry_wait = accessor(COMMIT_MIN_RETRY_WAIT)
    commit_max_retry_wait = accessor(COMMIT_MAX_RETRY_WAIT)
    commit_user_prefix = accessor(COMMIT_USER_PREFIX)
    snapshot_num_retained_min = accessor(SNAPSHOT_NUM_RETAINED_MIN)
    snapshot_num_retained_max = accessor(SNAPSHOT_NUM_RETAINED_MAX)
    snapshot_time_retained = accessor(SNAPSHOT_TIME_RETAINED)
    snapshot_expire_limit = accessor(SNAPSHOT_EXPIRE_LIMIT)
    deletion_vectors_enabled = accessor(DELETION_VECTORS_ENABLED)
    deletion_vectors_merge_on_read = accessor(DELETION_VECTORS_MERGE_ON_READ)
    deletion_vectors_bitmap64 = accessor(DELETION_VECTORS_BITMAP64)
    row_tracking_enabled = accessor(ROW_TRACKING_ENABLED)
    data_evolution_enabled = accessor(DATA_EVOLUTION_ENABLED)
    clustering_incremental = accessor(CLUSTERING_INCREMENTAL)

    def clustering_columns(self) -> tuple[str, ...]:
        """``clustering.columns``, split on commas (Paimon's ``CoreOptions.clusteringColumns``)."""
        return tuple(c.strip() for c in (self.get(CLUSTERING_COLUMNS) or "").split(",") if c.strip())
    global_index_enabled = accessor(GLOBAL_INDEX_ENABLED)
    global_index_column_update_action = accessor(GLOBAL_INDEX_COLUMN_UPDATE_ACTION)
    row_tracking_partition_group_on_commit = accessor(ROW_TRACKING_PARTITION_GROUP_ON_COMMIT)
    num_sorted_runs_compaction_trigger = accessor(NUM_SORTED_RUNS_COMPACTION_TRIGGER)
    compaction_skip_expired_partitions = accessor(COMPACTION_SKIP_EXPIRED_PARTITIONS)
    file_index_read_enabled = accessor(FILE_INDEX_READ_ENABLED)
    file_index_in_manifest_threshold = accessor(FILE_INDEX_IN_MANIFEST_THRESHOLD)
    # lifecycle (snapshot/changelog expiry, partitions, tags, consumers)
    snapshot_clean_empty_directories = accessor(SNAPSHOT_CLEAN_EMPTY_DIRECTORIES)
    partition_expiration_time = accessor(PARTITION_EXPIRATION_TIME)
    partition_expiration_check_interval = accessor(PARTITION_EXPIRATION_CHECK_INTERVAL)
    partition_expiration_strategy = accessor(PARTITION_EXPIRATION_STRATEGY)
    partition_expiration_max_num = accessor(PARTITION_EXPIRATION_MAX_NUM)
    partition_expiration_batch_size = accessor(PARTITION_EXPIRATION_BATCH_SIZE)
    partition_timestamp_formatter = accessor(PARTITION_TIMESTAMP_FORMATTER)
    partition_timestamp_pattern = accessor(PARTITION_TIMESTAMP_PATTERN)
    partition_mark_done_action = accessor(PARTITION_MARK_DONE_ACTION)
    end_input_check_partition_expire = accessor(END_INPUT_CHECK_PARTITION_EXPIRE)
    tag_automatic_creation = accessor(TAG_AUTOMATIC_CREATION)
    tag_creation_period = accessor(TAG_CREATION_PERIOD)
    tag_period_duration = accessor(TAG_PERIOD_DURATION)
    tag_creation_delay = accessor(TAG_CREATION_DELAY)
    tag_period_formatter = accessor(TAG_PERIOD_FORMATTER)
    tag_num_retained_max = accessor(TAG_NUM_RETAINED_MAX)
    tag_default_time_retained = accessor(TAG_DEFAULT_TIME_RETAINED)
    tag_time_expire_enabled = accessor(TAG_TIME_EXPIRE_ENABLED)
    tag_automatic_completion = accessor(TAG_AUTOMATIC_COMPLETION)
    tag_batch_customized_name = accessor(TAG_BATCH_CUSTOMIZED_NAME)
    consumer_expiration_time = accessor(CONSUMER_EXPIRATION_TIME)
    consumer_changelog_only = accessor(CONSUMER_CHANGELOG_ONLY)

    def data_file_external_paths(self) -> list[str]:
        """The external roots new data files go to (Paimon's ``createExternalPaths``): empty when
        ``data-file.external-paths`` is unset or the strategy is none; with specific-fs only the paths of that
        scheme. OptionError for a path without a scheme or an empty choice."""
        text = self.get(DATA_FILE_EXTERNAL_PATHS)
        strategy = self.get(DATA_FILE_EXTERNAL_PATHS_STRATEGY)
        if not text or strategy == ExternalPathStrategy.NONE:
            return []
        specific = self.get(DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS)
        if strategy == ExternalPathStrategy.SPECIFIC_FS and specific is None:
            raise OptionError("data-file.external-paths.specific-fs must be set when "
                              "data-file.external-paths.strategy is specific-fs")
        paths = []
        for part in text.split(","):
            path = part.strip().rstrip("/")
            scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", path)
            if scheme is None:
                raise OptionError(f"data-file.external-paths: {part.strip()!r} has no scheme (write file:///dir or "
                                  "s3://bucket/prefix)")
            if strategy != ExternalPathStrategy.SPECIFIC_FS or scheme.group(1).lower() == str(specific).lower():
                paths.append(path)
        if not paths:
            raise OptionError(f"data-file.external-paths = {text!r}: no path left for strategy {strategy.value}"
                              + (f" and specific-fs {specific!r}" if specific is not None else ""))
        return paths

    def data_file_external_path_weights(self) -> list[int] | None:
        """``data-file.external-paths.weights`` as positive integers (None when unset)."""
        text = self.get(DATA_FILE_EXTERNAL_PATHS_WEIGHTS)
        if text is None:
            return None
        try:
            weights = [int(w.strip()) for w in text.rstrip(",").split(",")]
        except ValueError:
            weights = []
        if not weights or any(w <= 0 or w > INT_MAX for w in weights):
            raise OptionError(f"data-file.external-paths.weights = {text!r}: give positive integers 'w1,w2,...'")
        paths = self.data_file_external_paths()
        if (self.get(DATA_FILE_EXTERNAL_PATHS_STRATEGY) == ExternalPathStrategy.WEIGHTED and len(paths) > 1
                and len(weights) != len(paths)):
            raise OptionError(f"data-file.external-paths.weights = {text!r}: {len(weights)} weights for "
                              f"{len(paths)} paths in data-file.external-paths")
        return weights

    def changelog_num_retained_min(self) -> int:
        value = self.get(CHANGELOG_NUM_RETAINED_MIN)
        return value if value is not None else self.snapshot_num_retained_min()

    def changelog_num_retained_max(self) -> int:
        value = self.get(CHANGELOG_NUM_RETAINED_MAX)
        return value if value is not None else self.snapshot_num_retained_max()

    def changelog_time_retained(self) -> int:
        value = self.get(CHANGELOG_TIME_RETAINED)
        return value if value is not None else self.snapshot_time_retained()

    def changelog_lifecycle_decoupled(self) -> bool:
        """Changelog outlives snapshots (Paimon's ``changelogLifecycleDecoupled``)."""
        return (self.changelog_num_retained_max() > self.snapshot_num_retained_max()
                or self.changelog_time_retained() > self.snapshot_time_retained()
                or self.changelog_num_retained_min() > self.snapshot_num_retained_min())

    def merge_engine(self) -> str:
        return self.get(MERGE_ENGINE).value

    def sequence_fields(self) -> list[str]:
        return self.get(SEQUENCE_FIELD) or []

    def sequence_descending(self) -> bool:
        return self.get(SEQUENCE_FIELD_SORT_ORDER) is SortOrder.DESCENDING

    def file_format(self, level: int | None = None) -> str:
        """The format of new data files at ``level`` (``file.format.per.level``, else ``file.format``)."""
        per_level = self.get(FILE_FORMAT_PER_LEVEL) or {}
        fmt = per_level.get(str(level)) if level is not None else None
        return (fmt or self.get(FILE_FORMAT)).strip().lower()

    def file_compression_at(self, level: int | None = None) -> str:
        """The compression of new data files at ``level`` (``file.compression.per.level``, else
        ``file.compression``)."""
        per_level = self.get(FILE_COMPRESSION_PER_LEVEL) or {}
        comp = per_level.get(str(level)) if level is not None else None
        return (comp or self.file_compression()).strip().lower()

    def changelog_file_format(self) -> str:
        """The format of new changelog files (``changelog-file.format``, else ``file.format``)."""
        return (self.get(CHANGELOG_FILE_FORMAT) or self.get(FILE_FORMAT)).strip().lower()

    def changelog_file_compression(self) -> str:
        """The compression of new changelog files (``changelog-file.compression``, else ``file.compression``)."""
        return (self.get(CHANGELOG_FILE_COMPRESSION) or self.file_compression()).strip().lower()

    def format_options(self) -> dict[str, str]:
        """The format-specific options (``parquet.*``, ``orc.*``, ``avro.*``) passed to the format writers."""
        prefixes = tuple(f"{f}." for f in FILE_FORMATS)
        return {k: v for k, v in self.raw.items() if k.startswith(prefixes)}

    def target_file_size(self, has_primary_key: bool) -> int:
        """``target-file-size``, else 128 mb for primary-key tables and 256 mb for append tables."""
        value = self.get(TARGET_FILE_SIZE)
        if value is not None:
            return value
        return 128 * MB if has_primary_key else 256 * MB

    def blob_target_file_size(self) -> int:
        """``blob.target-file-size``, else the target size of an append table's data file (Paimon's rule)."""
        value = self.get(BLOB_TARGET_FILE_SIZE)
        return value if value is not None else self.target_file_size(False)

    def blob_fields(self) -> list[str]:
        """The columns ``blob-field`` names (trimmed, in order)."""
        value = self.get(BLOB_FIELD)
        return [c.strip() for c in value.split(",") if c.strip()] if value else []

    def num_sorted_runs_stop_trigger(self) -> int:
        """``num-sorted-run.stop-trigger`` (default trigger + 3), never below the compaction trigger."""
        value = self.get(NUM_SORTED_RUNS_STOP_TRIGGER)
        trigger = self.num_sorted_runs_compaction_trigger()
        return max(trigger, value if value is not None else trigger + 3)

    def compaction_file_size(self, has_primary_key: bool) -> int:
        """Files below this size (target-file-size x compaction.small-file-ratio) are rewritten, not upgraded."""
        return int(self.target_file_size(has_primary_key) * self.get(COMPACTION_SMALL_FILE_RATIO))

    def full_compaction_delta_commits(self) -> int | None:
        return self.get(FULL_COMPACTION_DELTA_COMMITS)

    def num_levels(self) -> int:
        value = self.get(NUM_LEVELS)
        return value if value is not None else self.num_sorted_runs_compaction_trigger() + 1


def render_markdown() -> str:
    """The options reference (docs/options.md) as Markdown: table options, then the catalog's storage options."""
    return REGISTRY.render_markdown(
        "Table options",
        "Every option a table accepts, with Paimon's exact key, type and default. Generated from "
        "`table_engine/core_options.py` by `python -m table_engine.core_options --markdown`; do not edit by hand.",
        annotate=lambda o: "Immutable once the table has data." if o.key in IMMUTABLE_OPTIONS else "",
    ) + "\n\n" + "\n".join(storage_options.REGISTRY.render_sections()).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover
    if "--markdown" in sys.argv:
        sys.stdout.write(render_markdown())
    else:
        print("usage: python -m table_engine.core_options --markdown")


GENERATED_USER_SLACK_MS = 10_000
"""How far before a generated commit user's creation its snapshots are looked for: the user and the snapshots'
times are taken on one host, so this only covers a clock stepped back a little."""


@dataclass(frozen=True)
class CommitUser:
    """Who commits (Paimon's ``commitUser``): its name, and when it was generated for this job (epoch millis; None
    when its caller named it). A generated user has committed nothing before it was generated, so the exactly-once
    check of its commits reads no older history (:attr:`since_millis`) and a committer of it needs to look only at
    what it published itself (:attr:`generated`)."""

    name: str
    generated_at: int | None = None

    @property
    def generated(self) -> bool:
        """Made up for this job (a fresh UUID), not named by the caller."""
        return self.generated_at is not None

    @property
    def since_millis(self) -> int | None:
        """The earliest commit time a snapshot of this user can have (None for a named user: any)."""
        return None if self.generated_at is None else self.generated_at - GENERATED_USER_SLACK_MS


def default_commit_user(options: CoreOptions, named: str | CommitUser | None = None) -> CommitUser:
    """The commit user of a commit: the one its caller ``named`` (a job's ``--commit-user``, an Airflow task
    instance's ``airflow:<dag>:<task>:<run id>[:<map index>]``), used as is, so that a re-run of the same job finds
    its earlier commits; else a fresh UUID, after ``<commit.user-prefix>_`` when the prefix is set (Paimon's
    ``CoreOptions.createCommitUser``), generated now. The one rule for every committer (the table facade, the CLI,
    the Spark writes and jobs, partition expiry, the provider's operators)."""
    if isinstance(named, CommitUser):
        return named
    if named:
        return CommitUser(named)
    prefix = options.commit_user_prefix()
    name = f"{prefix}_{uuid.uuid4()}" if prefix is not None else str(uuid.uuid4())
    return CommitUser(name, clock.now_millis())
