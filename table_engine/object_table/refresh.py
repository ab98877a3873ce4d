"""``refresh_object_table``: Paimon's ``sys.refresh_object_table`` (``RefreshObjectTableProcedure``, Flink and
Spark; ``ObjectRefresh.refresh``) on a table of this engine.

Java 1.0 lists the location, then writes every row in one ``BatchWriteBuilder.withOverwrite()`` commit: the index is
replaced, not diffed, and the snapshot is an OVERWRITE (time travel to an older snapshot shows an older listing).
Java 1.1 and 1.2 commit in batches of 10,000 rows, each an overwrite of the whole table (so a location of more than
10,000 objects keeps only the last batch), and commit nothing for an empty location (the old rows stay); this engine
keeps 1.0's single overwrite, which is right for every size. Java lists a missing local location as empty and
empties the index; this engine refuses it (:func:`~table_engine.object_table.listing.list_objects`), since a typo in
``object-location`` would otherwise erase the index.

The listing comes first and nothing is written until it is complete; the overwrite is one commit. Any failure (the
location missing, the listing or the write failing, a conflicting commit after the writer's retries) leaves the
table as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import pyarrow.compute as pc

from table_engine.errors import OptionError
from table_engine.features import Op
from table_engine.io.file_io import FileIO, file_io_for
from table_engine.object_table.listing import list_objects, qualified_location
from table_engine.object_table.options import ObjectTableOptions, problems
from table_engine.object_table.schema import check_index_fields
from table_engine.table.guards import admitted, check_writable

if TYPE_CHECKING:
    from table_engine.table import Table

__all__ = ["RefreshResult", "refresh_object_table"]

log = logging.getLogger("table_engine.object_table")

_S3_SCHEMES = ("s3", "s3a", "s3n")


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh did, for the job's result line."""

    file_number: int
    """Objects indexed: the ``file_number`` column of Paimon's procedure result."""
    total_bytes: int
    """The sum of their lengths."""
    snapshot_id: int | None
    """The OVERWRITE snapshot the refresh committed; None when the table was empty and the location is too
    (nothing to commit)."""
    location: str
    """The object location as the rows' ``path`` values start."""


def _family(path: str) -> str:
    scheme = urlparse(path).scheme
    if scheme in ("", "file") or len(scheme) == 1:
        return "local"
    return "s3" if scheme in _S3_SCHEMES else scheme


def _object_file_io(table: Table, location: str) -> FileIO:
    """The FileIO of the location: the table's own when both are on local disk or both on S3 (one S3 FileIO serves
    every bucket of its endpoint), else one for the location's scheme without catalog options (Java's
    ``externalFileIO`` loader; pass ``file_io=`` for a location that needs other storage options)."""
    if _family(location) == _family(table.path):
        return table.file_io
    return file_io_for(location)


def _location_of(table: Table, location: str | None) -> str:
    """``location``, else the table's ``object-location``; refuse a table that cannot be an object table."""
    raw = table.schema.options
    opts = ObjectTableOptions(raw)
    if "type" in raw and not opts.is_object_table():
        raise OptionError(f"table {table.identifier} has 'type' = '{opts.type().value}', not 'object-table': "
                          "refresh_object_table refreshes object tables only")
    given = location.strip() if location is not None else opts.object_location()
    found = problems({**raw, "object-location": given or ""}, table.primary_keys, table.partition_keys)
    if found:
        raise OptionError(f"table {table.identifier} cannot be refreshed as an object table: " + "; ".join(found))
    assert given is not None  # problems() names a missing location
    return given


def refresh_object_table(table: Table, *, location: str | None = None, file_io: FileIO | None = None,
                         properties: Mapping[str, str] | None = None) -> RefreshResult:
    """Replace the rows of object table ``table`` by the current listing of its location, in one OVERWRITE commit.

    ``location``: the object location (default: the table's ``object-location`` option); ``file_io``: the FileIO to
    list it with (default: :func:`_object_file_io`); ``properties``: snapshot properties (who refreshed).
    Refuses (before listing) a read-only table (a REST catalog's object table, Paimon 1.3+'s virtual listing, has
    nothing to refresh), a table whose columns, keys or options are not an object table's, and (before writing) a
    location that does not exist. Returns the counts for the job's result.
    """
    check_writable(table, "refresh_object_table")
    check_index_fields(table.schema.fields, table.identifier)
    where = _location_of(table, location)
    fio = file_io if file_io is not None else _object_file_io(table, where)
    rows = list_objects(fio, where)
    total = pc.sum(rows.column("length")).as_py() or 0
    with admitted(table, Op.WRITE):  # the gate refuses writes to an object table, except this overwrite
        snapshot_id = table.write(rows.cast(table.arrow_schema), overwrite=True, properties=properties)
    log.info("refreshed object table %s from %s: %d objects, %d bytes (snapshot %s)", table.identifier, where,
             rows.num_rows, total, snapshot_id)
    return RefreshResult(rows.num_rows, int(total), snapshot_id, qualified_location(where))
