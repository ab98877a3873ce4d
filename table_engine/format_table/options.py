"""The options of a format table: Paimon's keys, types and defaults (``CoreOptions`` format-table keys, ``CsvOptions``,
``JsonOptions``), validated as one section; an unknown key, or a Paimon key this engine does not implement, is refused
by name with one :class:`~table_engine.errors.OptionError`.

``python -m table_engine.format_table.options --markdown`` prints the reference of docs/format-tables.md.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Mapping
from typing import Any, TypeVar

from table_engine.errors import OptionError
from table_engine.options import LONG_MAX, ConfigOption, OptionRegistry, OptionSection, key

V = TypeVar("V")


class FileFormat(enum.Enum):
    """Values of ``file.format`` a format table supports."""

    CSV = "csv"
    PARQUET = "parquet"
    ORC = "orc"
    JSON = "json"


class FormatTableImplementation(enum.Enum):
    """Values of ``format-table.implementation`` (Paimon's ``CoreOptions.FormatTableImplementation``): whether an
    engine reads the table through Paimon's readers or its own. The directory layout is the same either way."""

    PAIMON = "paimon"
    ENGINE = "engine"


class CsvMode(enum.Enum):
    """Values of ``csv.mode`` (Paimon's ``CsvOptions.Mode``): what a read does with a value that does not parse."""

    PERMISSIVE = "permissive"
    DROPMALFORMED = "dropmalformed"
    FAILFAST = "failfast"


TYPE = key("type").string_type().default_value("format-table").with_validator(
    lambda v: v == "format-table", "'format-table' (this is a format table)").with_description(
    "The table type; a format table's is `format-table`.")
FILE_FORMAT = key("file.format").enum_type(FileFormat).default_value(FileFormat.PARQUET).with_description(
    "The format of every file of the table: `csv`, `parquet`, `orc` or `json`. The file names end in it.")
FILE_COMPRESSION = key("file.compression").string_type().no_default_value().with_description(
    "The compression of new files. Unset: `format-table.file.compression`, else Paimon's per-format default "
    "(`snappy` for parquet, `zstd` for orc, `none` for csv and json). csv and json: `none`, `gzip`, `bzip2` or "
    "`zstd` (the file name ends in `.csv.gz`, `.json.zst`, ...).")
FORMAT_TABLE_FILE_COMPRESSION = key("format-table.file.compression").string_type().no_default_value() \
    .with_description("The compression of new files when `file.compression` is not set.")
IMPLEMENTATION = key("format-table.implementation").enum_type(FormatTableImplementation).default_value(
    FormatTableImplementation.PAIMON).with_description(
    "Whether Paimon's readers and writers (`paimon`) or the compute engine's own (`engine`) serve the table in "
    "Spark and Flink. This engine reads and writes the same files either way.")
PARTITION_PATH_ONLY_VALUE = key("format-table.partition-path-only-value").bool_type().default_value(False) \
    .with_description("Partition directories named by the value alone (`2025/`) instead of `key=value` "
                      "(`year=2025/`).")
PARTITION_DEFAULT_NAME = key("partition.default-name").string_type().default_value("__DEFAULT_PARTITION__") \
    .with_validator(lambda v: bool(v) and "/" not in v, "a non-empty name without '/'").with_description(
    "The directory name of a null, empty or blank partition value; it reads back as null.")
PARTITION_LEGACY_NAME = key("partition.legacy-name").bool_type().default_value(True).with_description(
    "`true`: a partition value's directory name is Paimon's `toString` of its internal value (a DATE is its day "
    "number, `19723`); `false`: its cast to string (`2024-01-01`). Other types are the same either way.")
DATA_FILE_PREFIX = key("data-file.prefix").string_type().default_value("data-").with_validator(
    lambda v: bool(v) and v[0] not in "._" and "/" not in v, "a prefix not starting with '.' or '_', without '/'") \
    .with_description("The file name prefix of new files: `<prefix><uuid>-<n>.<format>`.")
TARGET_FILE_ROW_NUM = key("target-file-row-num").long_type().default_value(LONG_MAX).with_validator(
    lambda v: v > 0, "a number of rows > 0").with_description(
    "A new file rolls over after this many rows (or `target-file-size`, whichever comes first).")
TARGET_FILE_SIZE = key("target-file-size").memory_type().default_value(256 << 20).with_validator(
    lambda v: v > 0, "a size > 0").with_description(
    "A new file rolls over at about this size, estimated from the rows' in-memory size (Paimon's append-table "
    "default, 256 mb).")
DYNAMIC_PARTITION_OVERWRITE = key("dynamic-partition-overwrite").bool_type().default_value(True) \
    .with_description("An overwrite that names no partition replaces only the partitions it writes (`true`) or "
                      "the whole table (`false`). An unpartitioned table is always replaced whole.")

CSV_FIELD_DELIMITER = key("csv.field-delimiter").string_type().default_value(",").with_fallback_keys(
    "field-delimiter", "seq", "delimiter").with_validator(
    lambda v: len(v) == 1 and v not in "\n\r\0", "one character, not a line break or NUL").with_description(
    "The field delimiter of csv files.")
CSV_LINE_DELIMITER = key("csv.line-delimiter").string_type().default_value("\n").with_fallback_keys(
    "lineSep").with_validator(lambda v: v in ("\n", "\r\n", "\r"), "'\\n', '\\r\\n' or '\\r'").with_description(
    "The line delimiter of csv files.")
CSV_QUOTE_CHARACTER = key("csv.quote-character").string_type().default_value('"').with_fallback_keys("quote") \
    .with_validator(lambda v: len(v) == 1, "one character").with_description(
    "The quote character of csv files: a value holding the delimiter, a line break, the quote or the escape "
    "character is quoted.")
CSV_ESCAPE_CHARACTER = key("csv.escape-character").string_type().default_value("\\").with_fallback_keys(
    "escape").with_validator(lambda v: len(v) == 1, "one character").with_description(
    "The escape character of csv files: inside a quoted value it precedes a quote and itself.")
CSV_INCLUDE_HEADER = key("csv.include-header").bool_type().default_value(False).with_fallback_keys("header") \
    .with_description("Whether each csv file starts with a header line of the column names (skipped on read).")
CSV_NULL_LITERAL = key("csv.null-literal").string_type().default_value("").with_fallback_keys("nullvalue") \
    .with_description("The text of a null value in csv files; a value equal to it reads as null (so with the "
                      "default an empty string reads back as null, as in Paimon).")
CSV_MODE = key("csv.mode").enum_type(CsvMode).default_value(CsvMode.PERMISSIVE).with_fallback_keys("mode") \
    .with_description("A csv value that does not parse as its column's type: `permissive` reads null, "
                      "`dropmalformed` drops its row, `failfast` fails the read.")
JSON_IGNORE_PARSE_ERRORS = key("json.ignore-parse-errors").bool_type().default_value(False).with_description(
    "A json value that does not parse as its column's type reads as null instead of failing the read.")
JSON_LINE_DELIMITER = key("json.line-delimiter").string_type().default_value("\n").with_validator(
    lambda v: v in ("\n", "\r\n"), "'\\n' or '\\r\\n'").with_description("The line delimiter of json files.")

SECTIONS = (
    OptionSection("Format table", (TYPE, FILE_FORMAT, FILE_COMPRESSION, FORMAT_TABLE_FILE_COMPRESSION,
                                   IMPLEMENTATION, PARTITION_PATH_ONLY_VALUE, PARTITION_DEFAULT_NAME,
                                   PARTITION_LEGACY_NAME, DATA_FILE_PREFIX, TARGET_FILE_ROW_NUM, TARGET_FILE_SIZE,
                                   DYNAMIC_PARTITION_OVERWRITE),
                  "Paimon's `CoreOptions` a format table reads, with their keys and defaults."),
    OptionSection("CSV", (CSV_FIELD_DELIMITER, CSV_LINE_DELIMITER, CSV_QUOTE_CHARACTER, CSV_ESCAPE_CHARACTER,
                          CSV_INCLUDE_HEADER, CSV_NULL_LITERAL, CSV_MODE),
                  "`file.format` = `csv` (Paimon's `CsvOptions`; the fallback keys are Spark's and Hive's names)."),
    OptionSection("JSON", (JSON_IGNORE_PARSE_ERRORS, JSON_LINE_DELIMITER),
                  "`file.format` = `json` (Paimon's `JsonOptions`)."),
)

NOT_IMPLEMENTED = (
    "format-table.commit-hive-sync-url", "format-table.scan.list-parallelism", "file.suffix.include.compression",
    "json.map-null-key-mode", "json.map-null-key-literal", "data-file.path-directory", "data-file.external-paths",
    "text.line-delimiter", "compression",
)
"""Paimon options a format table may carry that this engine does not implement: refused by name, not ignored."""

REGISTRY = OptionRegistry(sections=SECTIONS, noun="format table", not_implemented=frozenset(NOT_IMPLEMENTED))

TEXT_COMPRESSIONS = {"none": "", "gzip": "gz", "bzip2": "bz2", "zstd": "zst"}
"""Compressions of csv and json files, with the file name extension Paimon appends (Hadoop's codec extensions)."""
_ARROW_TEXT_CODECS = {"gz": "gzip", "bz2": "bz2", "zst": "zstd"}
BINARY_COMPRESSIONS = {
    FileFormat.PARQUET: ("none", "uncompressed", "snappy", "gzip", "zstd", "lz4", "brotli"),
    FileFormat.ORC: ("none", "uncompressed", "snappy", "zlib", "zstd", "lz4"),
}


def arrow_codec_of_extension(extension: str) -> str:
    """The pyarrow codec name of a text file's compression extension (``gz`` -> ``gzip``)."""
    return _ARROW_TEXT_CODECS[extension]


class FormatTableOptions:
    """A format table's options, validated (every unknown key and bad value in one :class:`OptionError`), with
    typed reads."""

    def __init__(self, raw: Mapping[str, str] | None = None) -> None:
        self.raw = {str(k): str(v) for k, v in (raw or {}).items()}
        REGISTRY.validate(self.raw)
        self._check_combinations()

    def __repr__(self) -> str:
        return f"FormatTableOptions({self.raw!r})"

    def get(self, option: ConfigOption[V]) -> V:
        """``option``'s value (its default when unset)."""
        return option.value_from(self.raw)

    def file_format(self) -> FileFormat:
        return self.get(FILE_FORMAT)

    def compression(self) -> str:
        """The compression of new files, Java's ``CoreOptions.formatTableFileCompression`` precedence, lower case."""
        chosen = self.get(FILE_COMPRESSION) or self.get(FORMAT_TABLE_FILE_COMPRESSION)
        if chosen is None:
            chosen = {FileFormat.PARQUET: "snappy", FileFormat.ORC: "zstd"}.get(self.file_format(), "none")
        return chosen.lower()

    def text_compression_extension(self) -> str:
        """csv/json: the extension new files get for their compression ('' for none)."""
        return TEXT_COMPRESSIONS[self.compression()]

    def _check_combinations(self) -> None:
        fmt = self.file_format()
        codec = self.compression()
        if fmt in (FileFormat.CSV, FileFormat.JSON):
            if codec not in TEXT_COMPRESSIONS:
                raise OptionError(f"Compression '{codec}' of a {fmt.value} format table: expected one of "
                                  f"{sorted(TEXT_COMPRESSIONS)}.")
        elif codec not in BINARY_COMPRESSIONS[fmt]:
            raise OptionError(f"Compression '{codec}' of a {fmt.value} format table: expected one of "
                              f"{list(BINARY_COMPRESSIONS[fmt])}.")
        if fmt is FileFormat.CSV:
            delimiter, quote, escape = (self.get(CSV_FIELD_DELIMITER), self.get(CSV_QUOTE_CHARACTER),
                                        self.get(CSV_ESCAPE_CHARACTER))
            if len({delimiter, quote, escape}) < 3:
                raise OptionError(f"csv.field-delimiter {delimiter!r}, csv.quote-character {quote!r} and "
                                  f"csv.escape-character {escape!r} must differ (as Paimon's CsvParser requires).")


def render_markdown() -> str:
    """The options reference of docs/format-tables.md: everything after its line "Generated by ..." (sections one
    level below the page's "## Options")."""
    lines = [*REGISTRY.render_sections(), "## Paimon options not implemented", "",
             "Refused, not ignored: " + ", ".join(f"`{name}`" for name in NOT_IMPLEMENTED) + ".", ""]
    return "\n".join(f"#{line}" if line.startswith("## ") else line for line in lines)


def _main(argv: list[str]) -> Any:  # pragma: no cover
    if "--markdown" in argv:
        sys.stdout.write(render_markdown())
    else:
        print("usage: python -m table_engine.format_table.options --markdown")


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv)
