"""What a DELETE, UPDATE or MERGE does to rows, evaluated with Arrow, chunk by chunk of the target's rows.

A change is a :class:`MergeSpec`: ``on`` pairs of (target column, source column) that match rows by equality, and
ordered clauses, as SQL's ``MERGE INTO``:

* ``when_matched``: for a target row matched by a source row, the first clause whose condition holds updates or
  deletes it (``update`` / ``delete``);
* ``when_not_matched``: for a source row that matches no target row, the first clause whose condition holds inserts a
  row (``insert``);
* ``when_not_matched_by_source``: for a target row no source row matches, ``update`` or ``delete``.

A ``DELETE ... WHERE f`` is a spec without a source whose one matched clause deletes where ``f`` holds (every target
row is "matched", by itself); an ``UPDATE ... SET ... WHERE f`` likewise updates.

Conditions are the engine's predicates (:mod:`table_engine.predicate`, one parser) over the clause's columns:
``target.c`` and ``source.c``, or ``c`` alone where only one side has it (a matched clause); a value may be another
column (``{"column": "source.c"}``). A row whose condition is null is not acted on (SQL's three-valued logic).
Assignments (``set``) map target columns to a literal or a column; without ``set``, ``update`` sets and ``insert``
fills every target column from the source column of the same name (SQL's ``UPDATE SET *`` / ``INSERT *``). An
``insert`` that does not set a column leaves it null. A target row matched by more than one source row, with a
matched clause to apply, is an error (SQL's cardinality violation): which source row would win is undefined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import CommandError, DataError, SchemaError
from table_engine.predicate import Col, Predicate, PredicateError, conjunction, parse_filters

__all__ = ["ACTIONS", "ChunkChange", "Clause", "MergeSpec", "RowChange"]

ACTIONS = ("update", "delete", "insert")
_ALLOWED = {"when_matched": ("update", "delete"), "when_not_matched": ("insert",),
            "when_not_matched_by_source": ("update", "delete")}
_T, _S = "target.", "source."
_ROW = "__row_level_index"


@dataclass(frozen=True)
class Clause:
    """One ``WHEN`` clause: ``action`` where every predicate of ``condition`` holds; ``assignments`` (target
    column -> literal or :class:`~table_engine.predicate.Col`) for ``update`` / ``insert``, None for all columns by
    name."""

    action: str
    condition: tuple[Predicate, ...] = ()
    assignments: Mapping[str, Any] | None = None

    @staticmethod
    def parse(data: Clause | Mapping[str, Any], where: str) -> Clause:
        """A clause from its JSON form ``{"action": ..., "condition": [[col, op, value], ...], "set": {...}}``."""
        if isinstance(data, Clause):
            return data
        if not isinstance(data, Mapping):
            raise CommandError(f"{where}: a clause is an object with 'action', got {data!r}")
        unknown = sorted(set(data) - {"action", "condition", "set"})
        if unknown:
            raise CommandError(f"{where}: unknown clause key(s) {unknown}; a clause has action, condition, set")
        action = str(data.get("action", "")).strip().lower()
        if action not in ACTIONS:
            raise CommandError(f"{where}: action {data.get('action')!r} is not one of {list(ACTIONS)}")
        condition = tuple(parse_filters([tuple(c) if isinstance(c, list) else c
                                         for c in data.get("condition") or ()], references=True))
        assignments = data.get("set")
        if assignments is not None:
            if not isinstance(assignments, Mapping):
                raise CommandError(f"{where}: 'set' maps columns to values, got {assignments!r}")
            if action == "delete":
                raise CommandError(f"{where}: a delete sets no columns")
            assignments = {str(k): _value(v) for k, v in assignments.items()}
        return Clause(action, condition, assignments)


def _value(v: Any) -> Any:
    if isinstance(v, Mapping):
        if set(v) == {"column"} and isinstance(v["column"], str):
            return Col(v["column"])
        raise CommandError(f"assignment value {v!r}: a literal, or {{\"column\": name}} for a column")
    return v


@dataclass(frozen=True)
class MergeSpec:
    """A row-level change (see the module docstring)."""

    on: tuple[tuple[str, str], ...] = ()
    when_matched: tuple[Clause, ...] = ()
    when_not_matched: tuple[Clause, ...] = ()
    when_not_matched_by_source: tuple[Clause, ...] = ()

    @staticmethod
    def parse(data: MergeSpec | Mapping[str, Any]) -> MergeSpec:
        """A spec from its JSON form: ``on`` a list of column names (the same on both sides) or of
        ``[target_column, source_column]`` pairs, and lists of clauses under ``when_matched``,
        ``when_not_matched``, ``when_not_matched_by_source``."""
        if isinstance(data, MergeSpec):
            return data
        if not isinstance(data, Mapping):
            raise CommandError(f"merge: the spec is an object with 'on' and clauses, got {data!r}")
        unknown = sorted(set(data) - {"on", *_ALLOWED})
        if unknown:
            raise CommandError(f"merge: unknown key(s) {unknown}; the spec has on, {', '.join(_ALLOWED)}")
        raw_on = data.get("on")
        if isinstance(raw_on, str):
            raw_on = [raw_on]
        if not raw_on:
            raise CommandError("merge: 'on' names the columns that match target and source rows")
        on = []
        for item in raw_on:
            if isinstance(item, str):
                on.append((item, item))
            elif isinstance(item, Sequence) and len(item) == 2 and all(isinstance(x, str) for x in item):
                on.append((str(item[0]), str(item[1])))
            else:
                raise CommandError(f"merge: 'on' item {item!r} is a column or a [target_column, source_column] pair")
        clauses = {k: tuple(Clause.parse(c, f"merge {k}[{i}]") for i, c in enumerate(data.get(k) or ()))
                   for k in _ALLOWED}
        spec = MergeSpec(tuple(on), clauses["when_matched"], clauses["when_not_matched"],
                         clauses["when_not_matched_by_source"])
        spec.check_actions()
        return spec

    def check_actions(self) -> None:
        """CommandError for an action a clause kind does not take, or no clause at all."""
        for kind, allowed in _ALLOWED.items():
            for i, c in enumerate(getattr(self, kind)):
                if c.action not in allowed:
                    raise CommandError(f"merge {kind}[{i}]: {c.action!r} is not allowed here (only {list(allowed)})")
        if not (self.when_matched or self.when_not_matched or self.when_not_matched_by_source):
            raise CommandError("merge: no clause (when_matched, when_not_matched, when_not_matched_by_source)")

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return (*self.when_matched, *self.when_not_matched, *self.when_not_matched_by_source)


@dataclass
class ChunkChange:
    """What a change does to one chunk of target rows: ``deleted`` rows go (a bool per row); the rows at
    ``updated`` (positions) are replaced by ``new_rows`` (the target's schema, in that order)."""

    deleted: npt.NDArray[np.bool_]
    updated: npt.NDArray[np.int64]
    new_rows: pa.Table

    @property
    def removed(self) -> npt.NDArray[np.bool_]:
        """The rows that leave their place: deleted or updated."""
        out = self.deleted.copy()
        out[self.updated] = True
        return out

    def is_empty(self) -> bool:
        return not self.deleted.any() and not len(self.updated)


@dataclass
class RowChange:
    """A :class:`MergeSpec` applied to a target of ``schema`` (an Arrow schema), with ``source`` rows (None for a
    DELETE or UPDATE). ``fixed``: target columns no clause may set (e.g. a primary-key table's keys), with why.
    Everything is checked when it is made (columns, types, ambiguity), before any row is read."""

    schema: pa.Schema
    spec: MergeSpec
    source: pa.Table | None = None
    fixed: Mapping[str, str] = field(default_factory=dict)
    what: str = "merge"
    """The change's name in errors (``delete``, ``update``, ``merge``)."""
    deleted_rows: int = 0
    updated_rows: int = 0
    inserted_rows: int = 0

    def __post_init__(self) -> None:
        self.spec.check_actions()
        self.target_names = list(self.schema.names)
        if self.source is None:
            if self.spec.on or self.spec.when_not_matched or self.spec.when_not_matched_by_source:
                raise CommandError("a change without a source has only matched clauses (DELETE / UPDATE)")
            self.source_names: list[str] = []
        else:
            self.source_names = list(self.source.schema.names)
            self._check_on()
        self._matched_source = np.zeros(self.source.num_rows if self.source is not None else 0, dtype=bool)
        for kind in _ALLOWED:
            for i, c in enumerate(getattr(self.spec, kind)):
                self._check_clause(c, kind, f"{kind}[{i}]" if self.source is not None else "")

    # ---- checks ------------------------------------------------------------------------------------------------
    def _check_on(self) -> None:
        assert self.source is not None
        for t, s in self.spec.on:
            if t not in self.target_names:
                raise SchemaError(f"merge on: {t!r} is not a column of the target; columns are {self.target_names}")
            if s not in self.source_names:
                raise SchemaError(f"merge on: {s!r} is not a column of the source; columns are {self.source_names}")
            try:
                self.source.column(s).slice(0, 0).cast(self.schema.field(t).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise SchemaError(f"merge on: source column {s!r} ({self.source.schema.field(s).type}) cannot be "
                                  f"compared with target column {t!r} ({self.schema.field(t).type})") from None

    def names(self, kind: str) -> dict[str, str]:
        """The column names a clause of ``kind`` may use -> the view column each means."""
        sides = {"when_matched": (True, True), "when_not_matched": (False, True),
                 "when_not_matched_by_source": (True, False)}[kind]
        out: dict[str, str] = {}
        targets = self.target_names if sides[0] else []
        sources = self.source_names if sides[1] else []
        for c in targets:
            out[_T + c] = _T + c
        for c in sources:
            out[_S + c] = _S + c
        for c in targets:
            if c not in sources:
                out[c] = _T + c
        for c in sources:
            if c not in targets:
                out[c] = _S + c
        return out

    def _resolve(self, name: str, kind: str, where: str) -> str:
        names = self.names(kind)
        if name in names:
            return names[name]
        if name in self.target_names and name in self.source_names:
            raise SchemaError(f"merge {where}: column {name!r} is in both target and source: write target.{name} "
                              f"or source.{name}")
        known = sorted(names) if self.source is not None else self.target_names
        raise SchemaError(f"{self._what(where)}: unknown column {name!r}; columns are {known}")

    def _what(self, where: str = "") -> str:
        return f"{self.what} {where}".strip()

    def _check_clause(self, c: Clause, kind: str, where: str) -> None:
        for p in c.condition:
            self._resolve(p.column, kind, where)
            if isinstance(p.value, Col):
                self._resolve(p.value.name, kind, where)
        if c.action == "delete":
            return
        if c.assignments is None:
            if self.source is None:
                raise CommandError(f"update {where}: set the columns to update")
            missing = [n for n in self.target_names if n not in self.source_names and n not in self.fixed]
            if missing:
                raise SchemaError(f"merge {where}: {c.action} of every column (no 'set') needs them in the source; "
                                  f"it lacks {missing}")
            return
        for col, v in c.assignments.items():
            if col not in self.target_names:
                raise SchemaError(f"{self._what(where)}: sets unknown column {col!r}; target columns are "
                                  f"{self.target_names}")
            if c.action == "update" and col in self.fixed:
                raise SchemaError(f"{self._what(where)}: cannot update column {col!r}: {self.fixed[col]}")
            if isinstance(v, Col):
                self._resolve(v.name, kind, where)
            else:
                try:
                    pa.array([v]).cast(self.schema.field(col).type) if v is not None else None
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
                    raise SchemaError(f"{self._what(where)}: value {v!r} does not fit column {col!r} of type "
                                      f"{self.schema.field(col).type}") from None

    # ---- pruning -----------------------------------------------------------------------------------------------
    def prune(self) -> list[Predicate]:
        """Predicates on target columns with literal values that every target row this change touches satisfies:
        a DELETE's or UPDATE's filter; for a MERGE with no not-matched-by-source clause, the range of the source's
        keys (``in`` when it has few distinct keys). A reader may skip files by them."""
        if self.source is None:
            if len(self.spec.when_matched) != 1:
                return []
            return [p for p in self.spec.when_matched[0].condition
                    if not isinstance(p.value, Col) and p.column in self.target_names]
        if self.spec.when_not_matched_by_source or not self.spec.on:
            return []
        t, s = self.spec.on[0]
        keys = pc.drop_null(pc.unique(self.source.column(s).cast(self.schema.field(t).type)))
        if len(keys) == 0:
            return [Predicate(t, "is null")]  # matches nothing that can join
        if len(keys) <= 1000:
            return [Predicate(t, "in", keys.to_pylist())]
        lo, hi = pc.min_max(keys).values()
        return [Predicate(t, ">=", lo.as_py()), Predicate(t, "<=", hi.as_py())]

    def needs_all_target_rows(self) -> bool:
        """Whether target rows no source row matches are acted on (they must all be read)."""
        return bool(self.spec.when_not_matched_by_source)

    # ---- evaluation --------------------------------------------------------------------------------------------
    def apply(self, rows: pa.Table) -> ChunkChange:
        """The change to ``rows``, a chunk of the target's rows (its schema's columns, any order of chunks)."""
        rows = rows.select(self.target_names)
        n = rows.num_rows
        deleted = np.zeros(n, dtype=bool)
        updated: list[npt.NDArray[np.int64]] = []
        new_rows: list[pa.Table] = []
        if self.source is None:
            t_idx = np.arange(n, dtype=np.int64)
            view = _qualified(rows, _T, self.target_names)
            self._act(self.spec.when_matched, view, t_idx, rows, None, deleted, updated, new_rows)
        else:
            t_idx, s_idx = self._join(rows)
            if self.spec.when_matched and len(t_idx):
                counts = np.bincount(t_idx, minlength=n)
                if (counts > 1).any():
                    raise DataError(f"merge: a target row is matched by {int(counts.max())} source rows (target "
                                    f"{rows.slice(int(np.argmax(counts > 1)), 1).select(self._on_t()).to_pylist()}"
                                    "); each target row may match one source row only")
            self._matched_source[s_idx] = True
            if self.spec.when_matched and len(t_idx):
                view = self._matched_view(rows, t_idx, s_idx)
                self._act(self.spec.when_matched, view, t_idx, rows, s_idx, deleted, updated, new_rows)
            if self.spec.when_not_matched_by_source:
                alone = np.setdiff1d(np.arange(n, dtype=np.int64), t_idx, assume_unique=False)
                if len(alone):
                    view = _qualified(rows.take(alone), _T, self.target_names)
                    self._act(self.spec.when_not_matched_by_source, view, alone, rows, None, deleted, updated,
                              new_rows)
        positions = np.concatenate(updated) if updated else np.zeros(0, dtype=np.int64)
        table = pa.concat_tables(new_rows) if new_rows else self.schema.empty_table()
        change = ChunkChange(deleted, positions, table)
        self.deleted_rows += int(deleted.sum())
        self.updated_rows += len(positions)
        return change

    def inserted(self) -> pa.Table:
        """The rows the not-matched clauses insert, once every chunk of the target was applied."""
        if self.source is None or not self.spec.when_not_matched:
            return self.schema.empty_table()
        alone = np.flatnonzero(~self._matched_source)
        if not len(alone):
            return self.schema.empty_table()
        src = self.source.take(alone)
        view = _qualified(src, _S, self.source_names)
        remaining = np.ones(len(alone), dtype=bool)
        out: list[pa.Table] = []
        for c in self.spec.when_not_matched:
            hit = self._holds(c.condition, view, "when_not_matched") & remaining
            remaining &= ~hit
            idx = np.flatnonzero(hit)
            if len(idx):
                out.append(self._assemble(c, view.take(idx), None, "when_not_matched"))
        table = pa.concat_tables(out) if out else self.schema.empty_table()
        self.inserted_rows += table.num_rows
        return table

    def _on_t(self) -> list[str]:
        return [t for t, _ in self.spec.on]

    def _join(self, rows: pa.Table) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(target position, source position) of every matching pair (null keys match nothing)."""
        assert self.source is not None
        keys = [f"__k{i}" for i in range(len(self.spec.on))]
        left = pa.table({**{k: rows.column(t) for k, (t, _) in zip(keys, self.spec.on, strict=True)},
                         "__t": pa.array(np.arange(rows.num_rows, dtype=np.int64))})
        right = pa.table({**{k: self.source.column(s).cast(self.schema.field(t).type)
                             for k, (t, s) in zip(keys, self.spec.on, strict=True)},
                          "__s": pa.array(np.arange(self.source.num_rows, dtype=np.int64))})
        left = left.filter(_all_valid(keys))
        right = right.filter(_all_valid(keys))
        if not left.num_rows or not right.num_rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        joined = left.join(right, keys=keys, join_type="inner", use_threads=False)
        return (joined.column("__t").to_numpy().astype(np.int64, copy=False),
                joined.column("__s").to_numpy().astype(np.int64, copy=False))

    def _matched_view(self, rows: pa.Table, t_idx: npt.NDArray[np.int64], s_idx: npt.NDArray[np.int64]) -> pa.Table:
        assert self.source is not None
        t = _qualified(rows.take(t_idx), _T, self.target_names)
        s = _qualified(self.source.take(s_idx), _S, self.source_names)
        return pa.Table.from_arrays([*t.columns, *s.columns], names=[*t.column_names, *s.column_names])

    def _holds(self, condition: Sequence[Predicate], view: pa.Table, kind: str) -> npt.NDArray[np.bool_]:
        n = view.num_rows
        if not condition:
            return np.ones(n, dtype=bool)
        names = self.names(kind)
        preds = [Predicate(names[p.column], p.op,
                           Col(names[p.value.name]) if isinstance(p.value, Col) else p.value) for p in condition]
        expr = conjunction(preds)
        assert expr is not None
        indexed = view.append_column(_ROW, pa.array(np.arange(n, dtype=np.int64)))
        try:
            hits = indexed.filter(expr).column(_ROW).to_numpy()
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise PredicateError(f"{self._what()} condition {[(p.column, p.op, p.value) for p in condition]}: "
                                 f"{str(e).splitlines()[0]}") from None
        mask = np.zeros(n, dtype=bool)
        mask[hits] = True
        return mask

    def _act(self, clauses: Sequence[Clause], view: pa.Table, t_idx: npt.NDArray[np.int64], rows: pa.Table,
             s_idx: npt.NDArray[np.int64] | None, deleted: npt.NDArray[np.bool_],
             updated: list[npt.NDArray[np.int64]], new_rows: list[pa.Table]) -> None:
        kind = "when_matched" if s_idx is not None or self.source is None else "when_not_matched_by_source"
        remaining = np.ones(view.num_rows, dtype=bool)
        for c in clauses:
            hit = self._holds(c.condition, view, kind) & remaining
            remaining &= ~hit
            idx = np.flatnonzero(hit)
            if not len(idx):
                continue
            if c.action == "delete":
                deleted[t_idx[idx]] = True
                continue
            updated.append(t_idx[idx])
            new_rows.append(self._assemble(c, view.take(idx), rows.take(t_idx[idx]), kind))

    def _assemble(self, c: Clause, view: pa.Table, old: pa.Table | None, kind: str) -> pa.Table:
        """The target rows a clause writes: assigned columns from ``view``, the rest from ``old`` (an update) or
        null (an insert), every column cast to the target's type."""
        n = view.num_rows
        arrays = []
        for f in self.schema:
            if c.assignments is None:
                if old is not None and f.name in self.fixed:
                    value: Any = old.column(f.name)
                else:
                    value = view.column(_S + f.name)
            elif f.name in c.assignments:
                v = c.assignments[f.name]
                value = view.column(self.names(kind)[v.name]) if isinstance(v, Col) else \
                    pa.nulls(n, f.type) if v is None else pa.repeat(pa.scalar(v).cast(f.type), n)
            else:
                value = old.column(f.name) if old is not None else pa.nulls(n, f.type)
            try:
                arrays.append(value.cast(f.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise DataError(f"{self._what()}: a value for column {f.name!r} does not fit its type {f.type} "
                                f"({value.type})") from None
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _qualified(rows: pa.Table, prefix: str, names: Sequence[str]) -> pa.Table:
    """``rows``' columns named ``prefix + name``: a view's columns (:meth:`RowChange.names` maps what a clause
    writes to them)."""
    return pa.Table.from_arrays([rows.column(n) for n in names], names=[prefix + n for n in names])


def _all_valid(names: Sequence[str]) -> pc.Expression:
    expr = pc.field(names[0]).is_valid()
    for n in names[1:]:
        expr = expr & pc.field(n).is_valid()
    return expr
