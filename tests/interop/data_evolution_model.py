"""A dict model of a data-evolution table keyed by row id, fed the same operations as the pypaimon driver's
``data_evolution`` command (see ``cmd_data_evolution`` in ``pypaimon_driver.py``)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

_CMP: dict[str, Callable[[Any, Any], bool]] = {"=": operator.eq, "<": operator.lt, "<=": operator.le,
                                               ">": operator.gt, ">=": operator.ge,
                                               "in": lambda a, b: a in b}


class RowIdModel:
    """Rows by ``_ROW_ID``: appends take the next row ids, updates and upserts change rows in place, deletes remove
    them (their row ids are never reused)."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = list(fields)
        self.rows: dict[int, dict[str, Any]] = {}
        self.next_row_id = 0

    def apply(self, op: dict[str, Any]) -> None:
        """Apply one driver operation."""
        kind = op["op"]
        if kind == "add_column":
            self.fields.append(op["column"])
            for r in self.rows.values():
                r[op["column"]] = None
        elif kind == "write":
            self._append(_as_rows(op["rows"]))
        elif kind == "update":
            for r in _as_rows(op["rows"]):
                rid = r.pop("_ROW_ID")
                if rid in self.rows:  # a deleted row stays deleted
                    self.rows[rid].update({c: r[c] for c in (op.get("cols") or r)})
        elif kind == "upsert":
            keys = op["keys"]
            new = []
            for r in _as_rows(op["rows"]):
                hits = [row for row in self.rows.values() if all(row[k] == r[k] for k in keys)]
                for row in hits:
                    row.update({c: r[c] for c in (op.get("cols") or r)})
                if not hits:
                    new.append(r)
            self._append(new)
        elif kind == "delete_rows":
            for rid in op["row_ids"]:
                self.rows.pop(rid, None)
        elif kind == "delete_where":
            column, cmp, value = op["where"]
            for rid in [rid for rid, r in self.rows.items() if r[column] is not None and _CMP[cmp](r[column], value)]:
                del self.rows[rid]
        else:
            raise ValueError(kind)

    def _append(self, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self.rows[self.next_row_id] = {f: r.get(f) for f in self.fields}
            self.next_row_id += 1

    def with_row_ids(self) -> list[dict[str, Any]]:
        """Rows with ``_ROW_ID``, by row id."""
        return [{"_ROW_ID": rid, **self.rows[rid]} for rid in sorted(self.rows)]

    def by(self, key: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Rows (``columns``, default all) sorted by ``key``."""
        cols = list(columns) if columns is not None else self.fields
        return sorted(({c: r[c] for c in cols} for r in self.rows.values()), key=lambda r: r[key])


def _as_rows(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
