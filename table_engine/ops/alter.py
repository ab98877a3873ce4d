"""The ``alter-table`` command's changes: the plain dicts a DAG or the command line gives
(``{"action": "add-column", "name": "c", "type": "BIGINT", "after": "b"}``) as :mod:`table_engine.schema_change`
objects, parsed here and nowhere else.

What needs no table (the action, its keys and their values, the type's Paimon SQL name) is checked here; what needs
the table's schema (the columns, keys, options) is checked by :func:`~table_engine.schema_change.apply_changes` when
the one new schema is made from all the changes. Every error is one line naming the change and what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from table_engine.errors import CommandError, SchemaError, TableEngineError
from table_engine.format.schema_file import TableSchema, read_schema
from table_engine.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    MoveType,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
    apply_changes,
)
from table_engine.types import parse_type

if TYPE_CHECKING:
    from table_engine.table import Table

__all__ = ["ACTIONS", "POSITION_KEYS", "applied_already", "describe", "parse_change", "parse_changes"]

POSITION_KEYS: Mapping[str, MoveType] = {"first": "FIRST", "after": "AFTER", "before": "BEFORE", "last": "LAST"}
"""The keys placing a column (``add-column``, ``move-column``): ``"first": true``, ``"last": true``,
``"after": "<column>"`` or ``"before": "<column>"`` (Paimon's ``Move``)."""


def _text(change: Mapping[str, Any], key: str) -> str:
    value = change.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CommandError(f"{key!r} must be a non-empty string, got {value!r}")
    return value


def _comment(change: Mapping[str, Any], key: str = "comment") -> str | None:
    value = change.get(key)
    if value is not None and not isinstance(value, str):
        raise CommandError(f"{key!r} must be a string or null, got {value!r}")
    return value


def _move(change: Mapping[str, Any], required: bool) -> Move | None:
    given = [k for k in POSITION_KEYS if k in change]
    if len(given) > 1:
        raise CommandError(f"give one of {', '.join(POSITION_KEYS)}, not {' and '.join(given)}")
    if not given:
        if required:
            raise CommandError(f"needs a position: one of {', '.join(POSITION_KEYS)}")
        return None
    key = given[0]
    kind = POSITION_KEYS[key]
    if kind in ("FIRST", "LAST"):
        if change[key] is not True:
            raise CommandError(f"{key!r} must be true, got {change[key]!r}")
        return Move(kind)
    return Move(kind, _text(change, key))


def _position(change: Mapping[str, Any]) -> Move:
    move = _move(change, required=True)
    assert move is not None
    return move


def _type(change: Mapping[str, Any]) -> Any:
    return parse_type(_text(change, "type"))


def _nullable(change: Mapping[str, Any]) -> bool:
    value = change.get("nullable")
    if not isinstance(value, bool):
        raise CommandError(f"'nullable' must be true or false, got {value!r}")
    return value


def _option_value(change: Mapping[str, Any]) -> str:
    value = change.get("value")
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str | int | float):
        raise CommandError(f"'value' must be a string, got {value!r}")
    return str(value)


_Builder = Callable[[Mapping[str, Any]], SchemaChange]

_POSITION = tuple(POSITION_KEYS)

ACTIONS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...], _Builder]] = {
    "add-column": (("name", "type"), ("comment", *_POSITION),
                   lambda c: AddColumn(_text(c, "name"), _type(c), _comment(c), _move(c, required=False))),
    "rename-column": (("name", "new_name"), (), lambda c: RenameColumn(_text(c, "name"), _text(c, "new_name"))),
    "drop-column": (("name",), (), lambda c: DropColumn(_text(c, "name"))),
    "update-column-type": (("name", "type"), (), lambda c: UpdateColumnType(_text(c, "name"), _type(c))),
    "move-column": (("name",), _POSITION, lambda c: UpdateColumnPosition(_text(c, "name"), _position(c))),
    "update-column-comment": (("name", "comment"), (),
                              lambda c: UpdateColumnComment(_text(c, "name"), _comment(c))),
    "update-column-nullability": (("name", "nullable"), (),
                                  lambda c: UpdateColumnNullability(_text(c, "name"), _nullable(c))),
    "update-comment": (("comment",), (), lambda c: UpdateComment(_comment(c))),
    "set-option": (("key", "value"), (), lambda c: SetOption(_text(c, "key"), _option_value(c))),
    "remove-option": (("key",), (), lambda c: RemoveOption(_text(c, "key"))),
}
"""Each action: its required keys, its optional keys, and how its change is built (Paimon's ``SchemaChange``
kinds: ``addColumn``, ``renameColumn``, ``dropColumn``, ``updateColumnType``, ``updateColumnPosition``,
``updateColumnComment``, ``updateColumnNullability``, ``updateComment``, ``setOption``, ``removeOption``)."""


def describe(change: Mapping[str, Any]) -> str:
    """How a change is named in an error: its action and column or option."""
    action = change.get("action")
    target = change.get("name", change.get("key"))
    return f"{action} {target!r}" if target is not None else str(action)


def parse_change(change: Any) -> SchemaChange:
    """One change dict as its schema change (a :class:`CommandError` or :class:`SchemaError` naming the problem)."""
    if not isinstance(change, Mapping):
        raise CommandError(f"a change must be an object with an 'action', got {change!r}")
    action = change.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        raise CommandError(f"unknown action {action!r}; actions are {', '.join(ACTIONS)}")
    required, optional, build = ACTIONS[action]
    missing = [k for k in required if k not in change]
    unknown = sorted(set(change) - {"action", *required, *optional})
    try:
        if missing:
            raise CommandError(f"misses {', '.join(repr(k) for k in missing)}")
        if unknown:
            raise CommandError(f"has unknown key {', '.join(repr(k) for k in unknown)}; its keys are "
                               f"{', '.join([*required, *optional])}")
        return build(change)
    except (CommandError, SchemaError) as e:
        raise type(e)(f"change {describe(change)}: {e}") from None


def parse_changes(changes: Sequence[Any]) -> list[SchemaChange]:
    """Every change of an ``alter-table`` command, in order (at least one)."""
    if isinstance(changes, str | bytes | Mapping) or not isinstance(changes, Sequence):
        raise CommandError(f"the changes must be a list of change objects, got {changes!r}")
    if not changes:
        raise CommandError("no changes given")
    return [parse_change(c) for c in changes]


def applied_already(table: Table, changes: Sequence[SchemaChange]) -> TableSchema | None:
    """The table's latest schema when it is exactly ``changes`` applied to the schema before it (an earlier try of
    the same command committed them: a retry converges instead of failing on, say, a column it added), else None."""
    latest = table.schema
    if latest.id == 0:
        return None
    try:
        previous = read_schema(table.file_io, table.path, latest.id - 1)
        redone = apply_changes(previous, changes, has_snapshots=table.latest_snapshot_id() is not None)
    except TableEngineError:
        return None
    same = replace(redone, id=latest.id, time_millis=latest.time_millis) == latest
    return latest if same else None
