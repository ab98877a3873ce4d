"""Which columns get which file index: Paimon's ``FileIndexOptions`` parsed from table options.

* ``file-index.<type>.columns = c1,c2`` declares indexes (types: ``bloom-filter``, ``bitmap``, ``bsi``; Paimon's
  ``range-bitmap`` is accepted but not built by this engine, and ignored when reading);
* ``file-index.<type>.<column>.<option>`` sets an option of one declared index (bloom-filter ``items`` / ``fpp``,
  bitmap ``version`` / ``index-block-size``); setting one for an undeclared column is an error, as in Paimon;
* ``file-index.in-manifest-threshold`` (500 bytes): index containers up to this size are embedded in the manifest,
  larger ones are written as ``<data-file>.index`` next to the data file;
* ``file-index.read.enabled`` (true): use the indexes to skip files when reading.

:func:`validate_file_index_options` is Paimon's ``SchemaValidation.validateFileIndex``: every indexed column must
exist and have a type its index supports (an :class:`OptionError` names the column otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from table_engine.errors import OptionError
from table_engine.format.file_index.bitmap import BITMAP, bitmap_options, bitmap_supported
from table_engine.format.file_index.bloom_filter import BLOOM_FILTER, bloom_options, bloom_supported
from table_engine.format.file_index.bsi import BSI, bsi_supported
from table_engine.options import parse_memory_size
from table_engine.types import DataField, DataType

__all__ = [
    "BUILT_INDEX_TYPES",
    "IN_MANIFEST_THRESHOLD_DEFAULT",
    "FileIndexOptions",
    "validate_file_index_options",
]

PREFIX = "file-index."
COLUMNS_SUFFIX = ".columns"
RANGE_BITMAP = "range-bitmap"
IN_MANIFEST_THRESHOLD_KEY = "file-index.in-manifest-threshold"
READ_ENABLED_KEY = "file-index.read.enabled"
IN_MANIFEST_THRESHOLD_DEFAULT = 500

_SUPPORTS: dict[str, Callable[[DataType], str | None]] = {
    BLOOM_FILTER: bloom_supported, BITMAP: bitmap_supported, BSI: bsi_supported}
#: index types this engine writes, in the order it builds them
BUILT_INDEX_TYPES = (BLOOM_FILTER, BITMAP, BSI)
_KNOWN_TYPES = (*BUILT_INDEX_TYPES, RANGE_BITMAP)


@dataclass(frozen=True)
class FileIndexOptions:
    """``columns[column][index type] = {option: value}`` (declaration order), plus the manifest threshold."""

    columns: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    in_manifest_threshold: int = IN_MANIFEST_THRESHOLD_DEFAULT
    read_enabled: bool = True

    @property
    def is_empty(self) -> bool:
        return not self.columns

    def built_columns(self) -> dict[str, dict[str, dict[str, str]]]:
        """The declared indexes this engine builds (range-bitmap dropped)."""
        out: dict[str, dict[str, dict[str, str]]] = {}
        for col, types in self.columns.items():
            kept = {t: p for t, p in types.items() if t in BUILT_INDEX_TYPES}
            if kept:
                out[col] = kept
        return out

    @staticmethod
    def from_options(raw: Mapping[str, str]) -> FileIndexOptions:
        columns: dict[str, dict[str, dict[str, str]]] = {}
        props: list[tuple[str, str]] = []
        for key in sorted(raw):
            if not key.startswith(PREFIX):
                continue
            if key.endswith(COLUMNS_SUFFIX):
                index_type = key[len(PREFIX):-len(COLUMNS_SUFFIX)]
                if index_type not in _KNOWN_TYPES:
                    raise OptionError(f"unknown file index type {index_type!r} in {key!r}; "
                                      f"known types are {list(_KNOWN_TYPES)}")
                for name in str(raw[key]).split(","):
                    if not name.strip():
                        raise OptionError(f"wrong option in {key!r}: it should not have an empty column "
                                          f"(value {raw[key]!r})")
                    columns.setdefault(name.strip(), {}).setdefault(index_type, {})
            else:
                props.append((key, raw[key]))
        for key, value in props:
            parts = key[len(PREFIX):].split(".")
            if len(parts) != 3:
                continue  # file-index.read.enabled, file-index.in-manifest-threshold, ...
            index_type, column, option = parts
            declared = columns.get(column, {}).get(index_type)
            if declared is None:
                raise OptionError(
                    f"wrong file index option {key!r}: column {column!r} is not declared in "
                    f"'{PREFIX}{index_type}{COLUMNS_SUFFIX}'; add it there before setting column options")
            declared[option] = str(value)
        threshold = parse_memory_size(str(raw.get(IN_MANIFEST_THRESHOLD_KEY, IN_MANIFEST_THRESHOLD_DEFAULT)),
                                      key=IN_MANIFEST_THRESHOLD_KEY)
        read_enabled = str(raw.get(READ_ENABLED_KEY, "true")).strip().lower() != "false"
        return FileIndexOptions(columns, threshold, read_enabled)


def validate_file_index_options(fields: Sequence[DataField], raw: Mapping[str, str]) -> None:
    """Raise OptionError unless every ``file-index.*`` declaration names an existing column of a supported type
    and its per-column options parse."""
    opts = FileIndexOptions.from_options(raw)
    if opts.is_empty:
        return
    by_name = {f.name: f for f in fields}
    for column, types in opts.columns.items():
        if "[" in column and column.endswith("]"):
            raise OptionError(f"file index on map entry {column!r}: nested (map key) file indexes are not "
                              "supported by this engine")
        f = by_name.get(column)
        if f is None:
            declared = sorted(f"{PREFIX}{t}{COLUMNS_SUFFIX}" for t in types)
            raise OptionError(f"column {column!r} specified in {', '.join(declared)} does not exist in the table "
                              f"schema; existing columns: {list(by_name)}")
        for index_type, props in types.items():
            check = _SUPPORTS.get(index_type)
            reason = check(f.type) if check is not None else None
            if reason is not None:
                raise OptionError(f"column {column!r} with type {f.type.sql()} is not supported by the "
                                  f"{index_type!r} file index: {reason}")
            if index_type == BLOOM_FILTER:
                bloom_options(props)
            elif index_type == BITMAP:
                bitmap_options(props)
