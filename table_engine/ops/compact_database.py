"""Compaction of every matching table of a database (Paimon's ``compact_database``).

Paimon matches ``including_tables`` (default ``.*``) and ``excluding_tables`` (none) as Java regular expressions
against the full name ``database.table``, the whole name (``Matcher.matches``); a table is compacted when it
matches the first and not the second. Here the tables are compacted one after the other, each as
``table.maintenance.compact()`` does (its own COMPACT snapshot), in name order; a second run finds nothing left to do in
the tables already compacted (a full compaction converges), so a retry after a failure picks up where it stopped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from table_engine.catalog import Catalog
from table_engine.errors import CommandError

log = logging.getLogger(__name__)


@dataclass
class DatabaseCompaction:
    """What a database compaction did: per compacted table its COMPACT snapshot id (None: nothing to do)."""

    database: str
    snapshots: dict[str, int | None] = field(default_factory=dict)
    """Full table name -> the COMPACT snapshot id, None when the table needed nothing."""

    @property
    def compacted(self) -> list[str]:
        """The tables that got a COMPACT snapshot."""
        return [t for t, sid in self.snapshots.items() if sid is not None]


def table_pattern(text: str | None, name: str, where: str = "compact-database") -> re.Pattern[str] | None:
    """``text`` compiled (None for None or blank); a bad expression is one CommandError line naming ``name``."""
    if text is None or not text.strip():
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise CommandError(f"{where}: {name} {text!r} is not a regular expression ({e})") from None


def matching_tables(catalog: Catalog, database: str, including_tables: str | None = None,
                    excluding_tables: str | None = None) -> list[str]:
    """The full names (``db.t``) of the tables of ``database`` whose full name matches ``including_tables``
    (default: all) and not ``excluding_tables``, sorted. Both patterns are checked before the catalog is read."""
    including = table_pattern(including_tables, "including_tables")
    excluding = table_pattern(excluding_tables, "excluding_tables")
    out = []
    for name in catalog.list_tables(database):
        full = f"{database}.{name}"
        if (including is None or including.fullmatch(full)) and (excluding is None or not excluding.fullmatch(full)):
            out.append(full)
    return out


def compact_database(catalog: Catalog, database: str, *, including_tables: str | None = None,
                     excluding_tables: str | None = None, full: bool = False,
                     idle_partitions_older_than_ms: int | None = None, commit_user: str | None = None,
                     skip: Collection[str] = ()) -> DatabaseCompaction:
    """Compact every matching table of ``database`` (see the module docstring), sequentially; ``skip``: full
    names left out (e.g. done by an earlier attempt). A table whose compaction fails stops the run: the tables
    before it keep their COMPACT snapshots, and the error names the table."""
    result = DatabaseCompaction(database)
    for name in matching_tables(catalog, database, including_tables, excluding_tables):
        if name in skip:
            continue
        table = catalog.get_table(name)
        try:
            result.snapshots[name] = table.maintenance.compact(full=full,
                                                   idle_partitions_older_than_ms=idle_partitions_older_than_ms,
                                                   commit_user=commit_user)
        except Exception as e:
            e.add_note(f"compact-database {database}: compacting {name} failed (compacted before it: "
                       f"{result.compacted or 'none'})")
            raise
        log.info("compact-database %s: %s -> %s", database, name, result.snapshots[name])
    return result
