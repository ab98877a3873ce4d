"""Row-level changes of a table: ``table.row_level.delete(filter)``, ``.update(set, filter)``,
``.merge(source, spec)`` — SQL's ``DELETE``, ``UPDATE`` and ``MERGE INTO`` with Paimon's semantics per table kind.

* A primary-key table takes a change as rows with row kinds, in one write (an APPEND snapshot): the current row of
  each deleted key as ``-D``, each updated row as ``+U``, each inserted row as ``+I``; its merge engine merges them
  (``sequence.field``, partial-update and aggregation rules apply). Which engine takes which change is decided by
  :func:`~table_engine.store.row_level.support.check_row_level`.
* An append table takes it in deletion vectors or by rewriting the touched files
  (:mod:`table_engine.store.row_level.append`), in one OVERWRITE snapshot; when a concurrent commit (a compaction)
  removed a file the change touches, the change is planned again on the newer snapshot (up to five times).
* A data-evolution table takes a DELETE as its deletes by row id (:class:`~table_engine.table.DataEvolution`).

What each clause means is :mod:`table_engine.store.row_level.clauses`. Bad input (an unknown column, a value that
does not fit, a refused change) fails before anything is written; a failure after files were written deletes them:
the table is as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from table_engine.core_enums import RowLevelOp
from table_engine.errors import CommitConflictError, CommitOutcomeUnknownError
from table_engine.features import Op
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, snapshot_properties
from table_engine.predicate import Col, parse_filters
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.reading.row_tracking import ROW_ID
from table_engine.store.row_level.append import change_append_table
from table_engine.store.row_level.clauses import Clause, MergeSpec, RowChange
from table_engine.store.row_level.support import check_row_level
from table_engine.store.writing.write import TableWrite
from table_engine.table.guards import mutating
from table_engine.table.writing import after_commit, committer

if TYPE_CHECKING:
    from table_engine.table import Table

__all__ = ["ChangeResult", "RowLevel"]

log = logging.getLogger("table_engine.table")

_ATTEMPTS = 5
"""How often an append table's change is planned again when a concurrent commit removed a file it touches."""


@dataclass(frozen=True)
class ChangeResult:
    """What a row-level change did: the snapshot it committed (None: nothing changed) and its counts."""

    snapshot_id: int | None
    deleted: int = 0
    updated: int = 0
    inserted: int = 0
    files_rewritten: int = 0
    files_marked: int = 0
    """Files whose deletion vectors it changed."""
    attempts: int = 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _moved_on(table: Table, base: Snapshot | None) -> bool:
    """Whether the table has a newer snapshot than ``base`` (the one a failed attempt planned on)."""
    latest = table.store.latest_snapshot()
    return latest is not None and (base is None or latest.id != base.id)


class RowLevel:
    """The row-level changes of one table (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def _guarded_table(self) -> Table:
        return self.table

    def __repr__(self) -> str:
        return f"RowLevel({self.table.identifier!r})"

    @mutating(Op.WRITE)
    def delete(self, filter: Any, *, properties: Mapping[str, str] | None = None,
               commit_user: str | None = None) -> ChangeResult:
        """``DELETE FROM t WHERE filter``: ``filter`` as :meth:`Table.read`'s (a list of ``(column, op, value)``,
        ANDed; a value may be ``{"column": name}``); an empty filter deletes every row. ``properties``: the snapshot's;
        ``commit_user``: the snapshot's commit user (default: a fresh one)."""
        clause = Clause("delete", tuple(parse_filters(filter, references=True)))
        if not self.table.schema.primary_keys and data_evolution_enabled(self.table.schema.options):
            return self._delete_by_row_id(clause)
        return self._run(RowLevelOp.DELETE, lambda: self._change(MergeSpec(when_matched=(clause,)), what="delete"),
                         properties, commit_user)

    @mutating(Op.WRITE)
    def update(self, set: Mapping[str, Any], filter: Any = None, *, properties: Mapping[str, str] | None = None,
               commit_user: str | None = None) -> ChangeResult:
        """``UPDATE t SET set WHERE filter``: ``set`` maps columns to a literal or ``{"column": name}`` (another
        column of the row)."""
        clause = Clause.parse({"action": "update", "set": dict(set)}, "update")
        clause = Clause("update", tuple(parse_filters(filter, references=True)), clause.assignments)
        return self._run(RowLevelOp.UPDATE, lambda: self._change(MergeSpec(when_matched=(clause,)), what="update"),
                         properties, commit_user)

    @mutating(Op.WRITE)
    def merge(self, source: pa.Table | pa.RecordBatch, spec: MergeSpec | Mapping[str, Any], *,
              properties: Mapping[str, str] | None = None, commit_user: str | None = None) -> ChangeResult:
        """``MERGE INTO t USING source ON ... WHEN ...``: ``spec`` as :meth:`MergeSpec.parse` reads it."""
        parsed = MergeSpec.parse(spec)
        rows = pa.Table.from_batches([source]) if isinstance(source, pa.RecordBatch) else source
        return self._run(RowLevelOp.MERGE, lambda: self._change(parsed, rows), properties, commit_user)

    # ---- internals ---------------------------------------------------------------------------------------------
    def _change(self, spec: MergeSpec, source: pa.Table | None = None, what: str = "merge") -> RowChange:
        t = self.table
        fixed: dict[str, str] = {}
        if t.schema.primary_keys:
            fixed.update(dict.fromkeys(t.schema.partition_keys, "it is a partition column of a primary-key table"))
            fixed.update(dict.fromkeys(t.schema.primary_keys, "it is a primary key column"))
        return RowChange(t.schema.arrow_schema(), spec, source, fixed, what)

    def _run(self, op: RowLevelOp, make: Callable[[], RowChange], properties: Mapping[str, str] | None,
             commit_user: str | None) -> ChangeResult:
        t = self.table
        first = make()  # every check of the spec against the table, before the refusal by table kind
        deletes = any(c.action == "delete" for c in first.spec.clauses)
        check_row_level(t.schema, op, t.identifier, deletes)
        snapshot_properties(properties)  # bad properties fail before anything is written
        change = first
        for attempt in range(1, _ATTEMPTS + 1):
            base = t.store.latest_snapshot()
            try:
                if t.schema.primary_keys:
                    return self._primary_key(change, base, properties, commit_user, attempt)
                return self._append(change, base, properties, commit_user, attempt)
            except CommitOutcomeUnknownError:
                raise
            except (CommitConflictError, FileNotFoundError) as e:
                if attempt == _ATTEMPTS or not _moved_on(t, base):
                    raise
                # a concurrent compaction replaced files this change read or rewrote (and an expiry may have
                # deleted them): plan it again on the newer snapshot
                log.warning("%s of %s planned again (attempt %d): %s", op.value.upper(), t.identifier, attempt + 1,
                            e)
                change = make()
        raise AssertionError("unreachable")

    def _primary_key(self, change: RowChange, base: Snapshot | None, properties: Mapping[str, str] | None,
                     commit_user: str | None, attempt: int) -> ChangeResult:
        t = self.table
        parts: list[pa.Table] = []
        kinds: list[str] = []
        if base is not None:
            prune = [] if change.needs_all_target_rows() else change.prune()
            for batch in t.to_batches(filter=prune, snapshot_id=base.id):
                rows = pa.Table.from_batches([batch])
                c = change.apply(rows)
                if c.deleted.any():
                    parts.append(rows.filter(pa.array(c.deleted)))
                    kinds += ["-D"] * int(c.deleted.sum())
                if c.new_rows.num_rows:
                    parts.append(c.new_rows)
                    kinds += ["+U"] * c.new_rows.num_rows
        inserted = change.inserted()
        if inserted.num_rows:
            parts.append(inserted)
            kinds += ["+I"] * inserted.num_rows
        if not parts:
            return self._result(None, change)
        data = pa.concat_tables([p.cast(t.schema.arrow_schema()) for p in parts])
        writer = TableWrite(t.store)
        commit = committer(t, commit_user)
        try:
            writer.write(data, pa.array(kinds, pa.string()))
            sid = commit.commit(writer.prepare_commit(BATCH_COMMIT_IDENTIFIER), BATCH_COMMIT_IDENTIFIER,
                                properties=properties)
        except CommitOutcomeUnknownError:
            raise  # the snapshot may be published: its data files must stay
        except BaseException:
            writer.abort(keep=commit.published_files)
            raise
        after_commit(t, sid, BATCH_COMMIT_IDENTIFIER, None)
        return self._result(sid, change, attempt=attempt)

    def _append(self, change: RowChange, base: Snapshot | None, properties: Mapping[str, str] | None,
                commit_user: str | None, attempt: int) -> ChangeResult:
        t = self.table
        written: list[str] = []
        commit = committer(t, commit_user)
        messages = []
        try:
            applied = change_append_table(t.store, change, base, written.append)
            messages = list(applied.messages)
            rows = [r for r in (*applied.new_rows, change.inserted()) if r.num_rows]
            if rows:
                writer = TableWrite(t.copy({"write-only": "true"}).store)
                for r in rows:
                    writer.write(r)
                messages += writer.prepare_commit(BATCH_COMMIT_IDENTIFIER)
            if not messages:
                return self._result(None, change)
            sid = commit.commit_row_level(messages, applied.marked, properties=properties)
        except CommitOutcomeUnknownError:
            raise  # the snapshot may be published: its files must stay
        except BaseException:
            commit.abort(messages)
            for path in written:  # what was written before the messages were made
                t.file_io.try_delete(path)
            raise
        after_commit(t, sid, BATCH_COMMIT_IDENTIFIER, None)
        return self._result(sid, change, applied.files_rewritten, len(applied.marked), attempt)

    def _delete_by_row_id(self, clause: Clause) -> ChangeResult:
        t = self.table
        base = t.store.latest_snapshot()
        if base is None:
            return ChangeResult(None)
        prune = [p for p in clause.condition if not isinstance(p.value, Col)]
        rows = t.read(columns=[*t.schema.field_names(), ROW_ID], filter=prune, snapshot_id=base.id)
        change = RowChange(t.schema.arrow_schema(), MergeSpec(when_matched=(clause,)), what="delete")
        mask = change.apply(rows).deleted
        ids = rows.column(ROW_ID)
        if not mask.any():
            return ChangeResult(None)
        sid = t.data_evolution.delete_by_row_id(ids.filter(pa.array(mask)))
        return ChangeResult(sid, deleted=int(mask.sum()), files_marked=0)

    @staticmethod
    def _result(sid: int | None, change: RowChange, rewritten: int = 0, marked: int = 0,
                attempt: int = 1) -> ChangeResult:
        return ChangeResult(sid, change.deleted_rows, change.updated_rows, change.inserted_rows, rewritten, marked,
                            attempt)
