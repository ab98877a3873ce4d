"""Row-level changes of a data-evolution table (``data-evolution.enabled``), as pypaimon's ``TableUpdate`` makes
them: ``table.data_evolution.update_by_row_id(...)``, ``upsert_by_key``, ``delete_by_row_id``,
``delete_by_predicate``. Each is one commit in strict mode from the latest snapshot (a commit of another user made
meanwhile fails it, retryably), and goes through the table's write guard (:func:`~table_engine.table.guards
.mutating`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from table_engine.core_options import COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT
from table_engine.errors import SchemaError
from table_engine.features import Op
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.reading.row_tracking import ROW_ID
from table_engine.store.writing.data_evolution_delete import delete_by_row_id
from table_engine.store.writing.data_evolution_write import update_by_row_id, upsert_by_key
from table_engine.table.guards import mutating
from table_engine.table.writing import after_commit, as_table, committer

if TYPE_CHECKING:
    from table_engine.table import Table


class DataEvolution:
    """The row-level changes of one data-evolution table (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def _guarded_table(self) -> Table:
        return self.table

    def __repr__(self) -> str:
        return f"DataEvolution({self.table.identifier!r})"

    @mutating(Op.WRITE)
    def update_by_row_id(self, data: pa.Table | pa.RecordBatch, maintain: bool | None = None, *,
                         commit_user: str | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER
                         ) -> int | None:
        """Set the columns of ``data`` of the rows its ``_ROW_ID`` column names, in one commit, as pypaimon's
        ``update_by_arrow_with_row_id``: each row range touched gets a file of only those columns (see
        :mod:`table_engine.store.writing.data_evolution_write`). The new snapshot id (None when ``data`` is empty).
        ``commit_user`` / ``commit_identifier``: the snapshot's (e.g. a Spark job's, see :meth:`Table.commit`)."""
        base, strict = self._base("update by row id")
        sid = update_by_row_id(strict.store, committer(strict, commit_user), as_table(data), base, commit_identifier)
        after_commit(self.table, sid, commit_identifier, maintain)
        return sid

    @mutating(Op.WRITE)
    def upsert_by_key(self, data: pa.Table | pa.RecordBatch, keys: Sequence[str],
                      columns: Sequence[str] | None = None, maintain: bool | None = None, *,
                      commit_user: str | None = None, commit_identifier: int = BATCH_COMMIT_IDENTIFIER
                      ) -> int | None:
        """Pypaimon's ``upsert_by_arrow_with_key`` in one commit. Rows of ``data`` whose ``keys`` (and partition
        columns) match existing rows set ``columns`` (default: every column of ``data`` but the partition columns)
        of all of those rows, as :meth:`update_by_row_id`; the other rows of ``data`` are appended (with the columns
        of ``data``, as a write of some columns). A key repeated in ``data`` keeps its last row; null keys match
        null keys. The new snapshot id (None when ``data`` is empty). ``commit_user`` / ``commit_identifier``: as
        :meth:`update_by_row_id`."""
        t = self.table
        base, strict = self._base("upsert by key")
        match = list(dict.fromkeys([*keys, *t.partition_keys]))
        unknown = [k for k in match if k not in t.schema.field_names()]
        if unknown:  # before reading
            raise SchemaError(f"upsert by key of table {t.identifier}: unknown key column(s) {unknown}; columns "
                              f"are {t.schema.field_names()}")
        existing = t.read(columns=[*match, ROW_ID], snapshot_id=base.id) if base is not None else \
            pa.table({**{k: pa.nulls(0) for k in match}, ROW_ID: pa.array([], pa.int64())})
        sid = upsert_by_key(strict.store, committer(strict, commit_user), as_table(data), list(keys), columns,
                            existing, base, commit_identifier)
        after_commit(t, sid, commit_identifier, maintain)
        return sid

    @mutating(Op.WRITE)
    def delete_by_row_id(self, row_ids: Sequence[int] | pa.Array | pa.ChunkedArray,
                         maintain: bool | None = None) -> int | None:
        """With ``deletion-vectors.enabled``: delete the rows ``row_ids`` names in one commit, as pypaimon's
        ``delete_by_row_id`` (positions set in the deletion vector of each row range; no data file changes, row ids
        never reused; see :mod:`table_engine.store.writing.data_evolution_delete`). The new snapshot id (None when
        nothing changes)."""
        base, strict = self._base("delete by row id")
        sid = delete_by_row_id(strict.store, committer(strict), row_ids, base)
        after_commit(self.table, sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    @mutating(Op.WRITE)
    def delete_by_predicate(self, filter: Any, maintain: bool | None = None) -> int | None:
        """With ``deletion-vectors.enabled``: delete the rows ``filter`` (as :meth:`Table.read`'s, on the merged
        rows) selects, as pypaimon's ``delete_by_predicate``: a :meth:`delete_by_row_id` of their row ids."""
        base, strict = self._base("delete by predicate")
        if base is None:
            return None
        ids = self.table.read(columns=[ROW_ID], filter=filter, snapshot_id=base.id).column(ROW_ID)
        sid = delete_by_row_id(strict.store, committer(strict), ids, base)
        after_commit(self.table, sid, BATCH_COMMIT_IDENTIFIER, maintain)
        return sid

    def _base(self, what: str) -> tuple[Snapshot | None, Table]:
        """The latest snapshot S and this table committing in strict mode from S: a data-evolution write reads S
        (the values of a row range, the rows of a key, the deletion vectors) and must not overwrite a commit of
        another user made after it (e.g. an update of the same rows): that commit fails it instead (retryable)."""
        t = self.table
        if not data_evolution_enabled(t.schema.options):
            raise SchemaError(f"{what} needs data-evolution.enabled = true on table {t.identifier}")
        base = t.store.latest_snapshot()
        return base, t.copy({COMMIT_STRICT_MODE_LAST_SAFE_SNAPSHOT.key: str(base.id if base is not None else 0)})
