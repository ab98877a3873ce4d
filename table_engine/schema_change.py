"""Schema evolution: add, rename, drop and move columns, widen types, comments, nullability, set and remove options.

Every change produces a new :class:`TableSchema` with the next id; field ids never change, so files written
under older schemas are read by field id (renames and drops are free, widened columns are cast on read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import pyarrow as pa

from table_engine.core_options import IMMUTABLE_OPTIONS, validate_options
from table_engine.errors import SchemaError
from table_engine.format.file_index.index_options import validate_file_index_options
from table_engine.format.schema_file import (
    TableSchema,
    validate_blob,
    validate_bucket,
    validate_clustering,
    validate_cross_partition,
)
from table_engine.lsm.key_value import SYSTEM_COLUMNS
from table_engine.lsm.merge_engines import validate_merge_engine
from table_engine.types import DataField, DataType, from_arrow_type, is_widening, max_field_id, to_arrow_type

MoveType = Literal["FIRST", "AFTER", "BEFORE", "LAST"]


@dataclass(frozen=True)
class Move:
    """Where a column goes (Paimon's ``SchemaChange.Move``): ``FIRST``, ``LAST``, or ``AFTER`` / ``BEFORE`` the
    column ``reference``."""

    type: MoveType
    reference: str | None = None

    def __post_init__(self) -> None:
        if self.type not in ("FIRST", "AFTER", "BEFORE", "LAST"):
            raise SchemaError(f"unknown column position {self.type!r}: FIRST, AFTER, BEFORE or LAST")
        if (self.reference is None) != (self.type in ("FIRST", "LAST")):
            raise SchemaError(f"column position {self.type} {'needs' if self.reference is None else 'takes no'} "
                              "reference column")


@dataclass(frozen=True)
class AddColumn:
    """Add a nullable column (a new field id), at the end or where ``move`` says (its ``reference`` column)."""

    name: str
    type: DataType | pa.DataType
    description: str | None = None
    move: Move | None = None


@dataclass(frozen=True)
class RenameColumn:
    """Rename a non-key column (its field id stays)."""

    name: str
    new_name: str


@dataclass(frozen=True)
class DropColumn:
    """Drop a non-key column."""

    name: str


@dataclass(frozen=True)
class UpdateColumnType:
    """Widen a column's type (e.g. INT to BIGINT)."""

    name: str
    new_type: DataType | pa.DataType


@dataclass(frozen=True)
class UpdateColumnPosition:
    """Move a column (Paimon's ``updateColumnPosition``); its field id and values stay."""

    name: str
    move: Move


@dataclass(frozen=True)
class UpdateColumnComment:
    """Set (or with None clear) a column's comment (Paimon's ``updateColumnComment``; the field's ``description``)."""

    name: str
    comment: str | None


@dataclass(frozen=True)
class UpdateColumnNullability:
    """Make a column nullable (Paimon's ``updateColumnNullability``). Making one NOT NULL is refused, as Paimon does
    by default (``alter-column-null-to-not-null.disabled``): existing rows may hold nulls."""

    name: str
    nullable: bool


@dataclass(frozen=True)
class UpdateComment:
    """Set (or with None clear) the table's comment (Paimon's ``updateComment``)."""

    comment: str | None


@dataclass(frozen=True)
class SetOption:
    """Set a table option."""

    key: str
    value: str


@dataclass(frozen=True)
class RemoveOption:
    """Remove a table option (back to its default)."""

    key: str


SchemaChange = (AddColumn | RenameColumn | DropColumn | UpdateColumnType | UpdateColumnPosition | UpdateColumnComment
                | UpdateColumnNullability | UpdateComment | SetOption | RemoveOption)


def _as_type(t: DataType | pa.DataType, next_id: int) -> tuple[DataType, int]:
    if isinstance(t, DataType):
        return t, next_id
    counter = iter(range(next_id, 10**9))
    dt = from_arrow_type(t, True, next_id=counter)
    return dt, next(counter)


def apply_changes(schema: TableSchema, changes: Sequence[SchemaChange], has_snapshots: bool) -> TableSchema:
    """The schema after ``changes`` (validated; raises SchemaError/OptionError naming the problem)."""
    fields = list(schema.fields)
    options = dict(schema.options)
    highest = schema.highest_field_id
    comment = schema.comment
    keys = set(schema.primary_keys) | set(schema.partition_keys)
    for ch in changes:
        if isinstance(ch, AddColumn):
            highest = _add_column(fields, ch, highest)
        elif isinstance(ch, RenameColumn):
            _rename_column(fields, ch, keys)
            _rename_in_options(options, ch.name, ch.new_name)
        elif isinstance(ch, DropColumn):
            _drop_column(fields, ch, keys)
        elif isinstance(ch, UpdateColumnType):
            _update_column_type(fields, ch, keys, highest)
        elif isinstance(ch, UpdateColumnPosition):
            _move_column(fields, ch.name, ch.move)
        elif isinstance(ch, UpdateColumnComment):
            i = _find(fields, ch.name)
            fields[i] = replace(fields[i], description=ch.comment)
        elif isinstance(ch, UpdateColumnNullability):
            _update_nullability(fields, ch, set(schema.primary_keys))
        elif isinstance(ch, UpdateComment):
            comment = ch.comment
        elif isinstance(ch, SetOption | RemoveOption):
            _change_option(options, ch, has_snapshots)
        else:  # pragma: no cover - exhaustive
            raise SchemaError(f"unknown schema change {ch!r}")
    validate_options(options)
    validate_file_index_options(fields, options)
    changed = replace(schema, id=schema.id + 1, fields=tuple(fields), options=options, highest_field_id=highest,
                      comment=comment)
    validate_bucket(changed)
    validate_clustering(changed)
    validate_blob(changed)
    validate_merge_engine(changed)
    validate_cross_partition(changed)
    return changed


def _find(fields: list[DataField], name: str) -> int:
    for i, f in enumerate(fields):
        if f.name == name:
            return i
    raise SchemaError(f"column {name!r} does not exist; columns are {[f.name for f in fields]}")


def _add_column(fields: list[DataField], ch: AddColumn, highest: int) -> int:
    """Append the column to ``fields``; return the new highest field id."""
    if any(f.name == ch.name for f in fields):
        raise SchemaError(f"cannot add column {ch.name!r}: it exists already")
    dt, nxt = _as_type(ch.type, highest + 2)
    if not dt.nullable:
        raise SchemaError(f"cannot add NOT NULL column {ch.name!r}: existing rows have no value for it")
    if ch.move is None or ch.move.type == "LAST":
        fields.append(DataField(highest + 1, ch.name, dt, ch.description))
    elif ch.move.type == "FIRST":
        fields.insert(0, DataField(highest + 1, ch.name, dt, ch.description))
    else:  # as Paimon's AddColumn: next to the reference column
        assert ch.move.reference is not None
        ref = _find(fields, ch.move.reference)
        fields.insert(ref + 1 if ch.move.type == "AFTER" else ref, DataField(highest + 1, ch.name, dt, ch.description))
    return max(highest + 1, nxt - 1, max_field_id(fields))


def _move_column(fields: list[DataField], name: str, move: Move) -> None:
    """Move ``name`` as Paimon's ``SchemaManager.applyMove`` does (moving a column next to itself is an error)."""
    i = _find(fields, name)
    if move.type in ("FIRST", "LAST"):
        target = 0 if move.type == "FIRST" else len(fields) - 1
        if i == target:
            raise SchemaError(f"cannot move column {name!r} {move.type}: it is {move.type.lower()} already")
    else:
        assert move.reference is not None
        ref = _find(fields, move.reference)
        if ref == i:
            raise SchemaError(f"cannot move column {name!r} {move.type} itself")
        target = ref
        if move.type == "AFTER" and i > ref:
            target += 1
        if move.type == "BEFORE" and i < ref:
            target -= 1
    fields.insert(target, fields.pop(i))


def _update_nullability(fields: list[DataField], ch: UpdateColumnNullability, primary_keys: set[str]) -> None:
    i = _find(fields, ch.name)
    old = fields[i].type
    if ch.nullable and ch.name in primary_keys:
        raise SchemaError(f"cannot make primary key column {ch.name!r} nullable")
    if not ch.nullable and old.nullable:
        raise SchemaError(f"cannot make column {ch.name!r} NOT NULL: existing rows may hold nulls (Paimon's "
                          "alter-column-null-to-not-null.disabled)")
    fields[i] = replace(fields[i], type=old.copy(nullable=ch.nullable))


def _rename_column(fields: list[DataField], ch: RenameColumn, keys: set[str]) -> None:
    i = _find(fields, ch.name)
    if ch.name in keys:
        raise SchemaError(f"cannot rename key column {ch.name!r}")
    if any(f.name == ch.new_name for f in fields):
        raise SchemaError(f"cannot rename {ch.name!r} to {ch.new_name!r}: that column exists")
    if fields[i].type.root == "BLOB":  # as Paimon: its .blob files name it in _WRITE_COLS
        raise SchemaError(f"cannot rename BLOB column {ch.name!r}")
    fields[i] = replace(fields[i], name=ch.new_name)


_RENAMED_FIELD_PROPERTIES = ("aggregate-function", "ignore-retract", "distinct", "list-agg-delimiter")
_FIELD_LIST_PROPERTIES = ("sequence-group", "nested-key")


def _rename_in_options(options: dict[str, str], old: str, new: str) -> None:
    """The options naming a renamed column name it by its new name, as Paimon's ``applyRenameColumnsToOptions``:
    ``bucket-key`` and ``sequence.field`` values, ``fields.<column>.<property>`` keys of the aggregation
    properties, and keys and values of ``fields.<columns>.sequence-group`` / ``nested-key``."""
    def renamed(names: str) -> str:
        return ",".join(new if n == old else n for n in names.split(","))

    for key in ("bucket-key", "sequence.field"):
        if options.get(key, "").strip():
            options[key] = renamed(options[key])
    for prop in _RENAMED_FIELD_PROPERTIES:
        if f"fields.{old}.{prop}" in options:
            options[f"fields.{new}.{prop}"] = options.pop(f"fields.{old}.{prop}")
    for key in list(options):
        for prop in _FIELD_LIST_PROPERTIES:
            if key.startswith("fields.") and key.endswith(f".{prop}") and len(key) > len(f"fields..{prop}"):
                columns = key[len("fields."):-len(prop) - 1]
                value = options.pop(key)
                options[f"fields.{renamed(columns)}.{prop}"] = renamed(value)


def _drop_column(fields: list[DataField], ch: DropColumn, keys: set[str]) -> None:
    i = _find(fields, ch.name)
    if ch.name in keys:
        raise SchemaError(f"cannot drop key column {ch.name!r}")
    if len(fields) == 1:
        raise SchemaError("cannot drop the last column")
    fields.pop(i)


def _update_column_type(fields: list[DataField], ch: UpdateColumnType, keys: set[str], highest: int) -> None:
    """Widen the column's type in ``fields`` (key columns keep their type and nullability)."""
    i = _find(fields, ch.name)
    old = fields[i].type
    new, _ = _as_type(ch.new_type, highest + 1)
    new = new.copy(nullable=old.nullable if ch.name in keys else new.nullable)
    if ch.name in keys and new != old:
        raise SchemaError(f"cannot change the type of key column {ch.name!r}")
    if not is_widening(old, new):
        raise SchemaError(f"cannot change column {ch.name!r} from {old} to {new}: only widening is allowed")
    if old.nullable and not new.nullable:
        raise SchemaError(f"cannot make column {ch.name!r} NOT NULL")
    fields[i] = replace(fields[i], type=new)


def _change_option(options: dict[str, str], ch: SetOption | RemoveOption, has_snapshots: bool) -> None:
    if ch.key in IMMUTABLE_OPTIONS and has_snapshots:
        raise SchemaError(f"option {ch.key!r} cannot be changed once the table has data")
    if isinstance(ch, SetOption):
        options[ch.key] = str(ch.value)
    else:
        options.pop(ch.key, None)


# ---- merge-schema on write (Paimon's SchemaMergingUtils) ---------------------------------------------------------
_NOT_DATA_COLUMNS = frozenset({*SYSTEM_COLUMNS, "_ROW_ID"})


def merge_schema_changes(schema: TableSchema, data: pa.Schema, *, explicit_cast: bool) -> list[SchemaChange]:
    """The changes that let ``schema`` take rows of ``data`` (``write.merge-schema``), as Paimon merges a write's
    schema into the table's: a column the table lacks is added, nullable, at the end, in the data's order; a
    column whose type in the data is wider (:func:`~table_engine.types.is_widening`) is widened, keeping its
    nullability; a narrower one is cast to the table's type by the write. Any other difference is a one-line
    :class:`SchemaError` naming the column and both types, unless ``explicit_cast``
    (``write.merge-schema.explicit-cast``): then the write casts the data to the table's type. Key columns keep
    their types (their values are cast); nested types must match. Empty: nothing to change."""
    keys = set(schema.primary_keys) | set(schema.partition_keys)
    fields = {f.name: f for f in schema.fields}
    changes: list[SchemaChange] = []
    for column in data:
        if column.name in _NOT_DATA_COLUMNS:
            continue
        current = fields.get(column.name)
        if current is None:
            changes.append(AddColumn(column.name, column.type))
            continue
        if to_arrow_type(current.type) == column.type:
            continue  # the same values (VARCHAR(n) and STRING are both Arrow strings...)
        given = from_arrow_type(column.type, True)
        old = current.type.copy(True)
        nested = current.type.is_complex or given.is_complex
        if not nested and column.name not in keys and is_widening(old, given) and old != given:
            changes.append(UpdateColumnType(column.name, given.copy(current.type.nullable)))
        elif not nested and is_widening(given, old):
            continue  # narrower data: the write casts it to the table's type
        elif not explicit_cast:
            what = "key column" if column.name in keys else "column"
            raise SchemaError(f"write.merge-schema: {what} {column.name!r} is {old} in the table and {given} in the "
                              "data, not a widening of it: set write.merge-schema.explicit-cast to cast the data "
                              "to the table's type")
    return changes
