"""An object table's options: Paimon's ``type`` (``CoreOptions.TYPE``) and ``object-location``
(``CoreOptions.OBJECT_LOCATION``), typed, and what this engine requires of and refuses on a table of
``type`` = ``object-table``.

Paimon's ``AbstractCatalog.createObjectTable`` (1.0-1.2) checks two things: the declared columns are none or some of
``ObjectTable.SCHEMA`` (:func:`table_engine.object_table.schema.check_columns`), and ``object-location`` is set. The
index is then an ordinary append table (``bucket`` = -1: unaware) that only ``ObjectRefresh`` writes, by overwriting
it whole. This engine refuses, by name, what would make that table something else: primary keys, partition keys, a
fixed bucket count and the options of primary-key tables, data evolution and row tracking (:func:`problems`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from table_engine.core_enums import TableType
from table_engine.core_options import OBJECT_LOCATION, TABLE_TYPE_OPTIONS, TYPE
from table_engine.errors import OptionError
from table_engine.options import ConfigOption, OptionRegistry, OptionSection

V = TypeVar("V")

__all__ = [
    "OBJECT_LOCATION",
    "REFUSED_OPTIONS",
    "REGISTRY",
    "TYPE",
    "ObjectTableOptions",
    "TableType",
    "problems",
    "validate_object_table",
]


REGISTRY = OptionRegistry(sections=(OptionSection(
    "Object table", TABLE_TYPE_OPTIONS,
    "Paimon's `type` and `object-location` (`CoreOptions.TYPE`, `CoreOptions.OBJECT_LOCATION`), registered in "
    "the core options (table_engine.core_options)."),))

REFUSED_OPTIONS: Mapping[str, str] = {
    "primary-key": "an object table has no primary key",
    "partition": "an object table has no partition keys",
    "bucket-key": "an object table is an append table with bucket = -1",
    "merge-engine": "an option of primary-key tables",
    "sequence.field": "an option of primary-key tables",
    "rowkind.field": "an option of primary-key tables",
    "changelog-producer": "an option of primary-key tables",
    "data-evolution.enabled": "only refresh_object_table writes an object table, whole rows",
    "row-tracking.enabled": "only refresh_object_table writes an object table, whole rows",
}
"""Table options refused on an object table, with the reason named in the error."""


class ObjectTableOptions:
    """The object-table options of a table's raw options, read typed (other keys are not looked at)."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = {str(k): str(v) for k, v in raw.items()}

    def __repr__(self) -> str:
        return f"ObjectTableOptions(type={self.type().value!r}, object_location={self.object_location()!r})"

    def get(self, option: ConfigOption[V]) -> V:
        """``option``'s value (its default when unset)."""
        return option.value_from(self.raw)

    def type(self) -> TableType:
        """``type``: :attr:`TableType.TABLE` when unset."""
        return TYPE.value_from(self.raw)

    def is_object_table(self) -> bool:
        return self.type() is TableType.OBJECT_TABLE

    def object_location(self) -> str | None:
        """``object-location``, stripped; None when unset or blank."""
        value = OBJECT_LOCATION.value_from(self.raw)
        return (value.strip() or None) if value is not None else None


def problems(options: Mapping[str, str], primary_keys: Sequence[str] = (),
             partition_keys: Sequence[str] = ()) -> list[str]:
    """Everything that keeps a table with these ``options`` and keys from being an object table, one message each
    (empty: none). ``type`` is not required here (see :func:`validate_object_table`)."""
    out = []
    if ObjectTableOptions(options).object_location() is None:
        out.append("Object table should have object-location option.")  # Paimon's message
    if primary_keys:
        out.append(f"primary keys {list(primary_keys)}: an object table has no primary key")
    if partition_keys:
        out.append(f"partition keys {list(partition_keys)}: an object table has no partition keys")
    bucket = options.get("bucket", "-1").strip()
    if bucket != "-1":
        out.append(f"'bucket' = '{bucket}': an object table is an append table with bucket = -1")
    out.extend(f"'{name}': {why}" for name, why in REFUSED_OPTIONS.items() if name in options)
    return out


def validate_object_table(options: Mapping[str, str], primary_keys: Sequence[str] = (),
                          partition_keys: Sequence[str] = ()) -> ObjectTableOptions:
    """The options of a table to create or refresh as an object table: ``type`` = ``object-table``,
    ``object-location`` set, none of the refused keys and options (:func:`problems`). Otherwise one
    :class:`OptionError` naming every problem."""
    opts = ObjectTableOptions(options)
    found = problems(options, primary_keys, partition_keys)
    if not opts.is_object_table():
        found.insert(0, f"'type' = '{opts.type().value}': an object table has 'type' = 'object-table'")
    if len(found) == 1:
        raise OptionError(found[0])
    if found:
        raise OptionError(f"{len(found)} problems with an object table's definition:\n  " + "\n  ".join(found))
    return opts
