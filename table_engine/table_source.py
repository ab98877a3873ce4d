"""The read-only protocol of a table whose rows do not come from its data files: a system table.

A system table (``db.t$snapshots``, ``$files``, ``$audit_log``, ``$binlog``, ... see
:mod:`table_engine.system_tables`) is a read-only :class:`~table_engine.table.Table` view of its data table built
with a ``source``: the view's reads (:meth:`Table.read`, :meth:`Table.to_batches`, :attr:`Table.arrow_schema`, its
stream scans and changelog consumers) are served by the source, every mutating method is refused by the view as on
any read-only table. The table facade knows only this protocol, never the system tables themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from table_engine.store.changes.stream_scan import StreamScan
    from table_engine.table import Table


class TableSource(Protocol):
    """Serves the rows of a read-only table view (``table``: the view, with its per-read options)."""

    @property
    def name(self) -> str:
        """The system table's name (``snapshots``, ``audit_log``, ...): the part after ``$``."""
        ...

    @property
    def stream_scan_class(self) -> type[StreamScan]:
        """The stream scan the view's :meth:`Table.new_stream_scan` and :meth:`Table.changelog_consumer` use."""
        ...

    def arrow_schema(self, table: Table) -> pa.Schema:
        """The columns of the rows :meth:`read` returns (all columns)."""
        ...

    def read(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
             tag: str | None, timestamp_millis: int | None) -> pa.Table:
        """The rows, as :meth:`Table.read` documents its arguments."""
        ...

    def to_batches(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
                   tag: str | None, timestamp_millis: int | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        """The rows as record batches, as :meth:`Table.to_batches` documents its arguments."""
        ...
