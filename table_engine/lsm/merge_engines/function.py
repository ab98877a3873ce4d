"""What every merge engine provides: the :class:`MergeFunction` protocol and its :class:`MergeCapabilities`.

The same merge function folds duplicates in the write buffer, merges sorted runs in compaction and merges files
in merge-on-read. A merge function receives key-value records sorted by key and then by ordering (sequence
fields, then ``_SEQUENCE_NUMBER``: :class:`~table_engine.lsm.sort.MergeOrder`) and returns one record per key,
keeping the kind of the winning record (a ``-D`` winner is kept so that it can delete older records; readers drop
it at the end). Columns that are not value columns of the table (keys, ``_SEQUENCE_NUMBER``, a writer's
bookkeeping columns) pass through from the key's last record.

What the store layer may assume about an engine (which files a filter may skip, whether compaction must look keys
up, which changelog kinds it emits, ...) is stated by its :class:`MergeCapabilities`, never by its name.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa

from table_engine.lsm.key_value import RowKind
from table_engine.lsm.sort import MergeOrder, sort_kv

__all__ = ["ALL_CHANGES", "INSERT_ONLY", "MergeCapabilities", "MergeFunction", "MovedKey", "sort_and_merge"]

#: changelog kinds of an engine whose keys are updated and deleted
ALL_CHANGES = frozenset(RowKind)
#: changelog kinds of an engine whose keys, once written, never change
INSERT_ONLY = frozenset({RowKind.INSERT})


class MovedKey(enum.Enum):
    """What a cross-partition upsert (dynamic bucket, primary key without the partition columns) does with a record
    whose key lives in another partition already."""

    DELETE_AND_INSERT = "delete-and-insert"
    """Retract the key from its old partition and insert it into the record's partition (deduplicate)."""
    UPDATE_OLD = "update-in-old-partition"
    """Route the record to the key's partition, where it merges with the key (partial-update, aggregation)."""
    IGNORE = "ignore"
    """Drop the record: the key keeps its first partition (first-row)."""


@dataclass(frozen=True)
class MergeCapabilities:
    """What the store may rely on when it reads, writes and compacts a table with a merge engine."""

    merge_free: bool
    """A key's merged row is always one of its stored records (the engine picks, never combines): a group of
    overlapping files in which no stored record matches a filter has no matching merged row, so file-index skipping
    may drop the whole group."""
    needs_lookup: bool
    """Records are final only after a lookup in the levels above (Paimon's ``needLookup`` for the engine):
    compaction is lookup compaction (level 0 always pushed up) and batch reads leave level 0 out."""
    first_wins: bool
    """A key's first record is its value: lookup compaction drops new records of keys a level above holds."""
    changelog_kinds: frozenset[RowKind]
    """The row kinds of the changelog a lookup compaction produces."""
    newest_wins: bool
    """A key's value is its newest record, older versions never matter (deduplicate without ``sequence.field``):
    compaction may upgrade files and stop looking keys up at the first version found."""
    ignore_delete: bool
    """``ignore-delete``: retractions found in files are skipped, so a newest ``-D`` does not decide a key."""
    moved_key: MovedKey
    """What a cross-partition upsert does with a key that moved partition."""
    deletion_vectors: bool = True
    """The engine may be combined with ``deletion-vectors.enabled`` (an engine that never deletes old data has
    nothing to mark in deletion vectors)."""

    @property
    def newest_file_wins(self) -> bool:
        """Merge-on-read of files with disjoint sequence ranges may take each key's row from the newest file that
        holds it (a ``-D`` there deletes the key) instead of merging."""
        return self.newest_wins and not self.ignore_delete

    @property
    def insert_only_changelog(self) -> bool:
        return self.changelog_kinds == INSERT_ONLY


class MergeFunction(Protocol):
    """Folds records of equal key (input sorted by :meth:`MergeOrder.sort_keys`) into one record per key."""

    @property
    def capabilities(self) -> MergeCapabilities:
        """What the store may rely on for this engine (see :class:`MergeCapabilities`)."""
        ...

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table: ...

    def on_write(self, kv: pa.Table) -> pa.Table:
        """Check and prepare freshly written records (all value columns and ``_VALUE_KIND``) before buffering:
        reject row kinds the engine does not accept, turn values into mergeable partial states."""
        ...

    def read_columns(self, columns: set[str]) -> set[str]:
        """Extra columns a read of ``columns`` must load for the merge (e.g. sequence-group fields)."""
        ...


def sort_and_merge(kv: pa.Table, order: MergeOrder, fn: MergeFunction, in_sequence_order: bool = False) -> pa.Table:
    """Sort ``kv`` by ``order`` (see :func:`~table_engine.lsm.sort.sort_kv`) and merge it with ``fn``."""
    return fn.merge_sorted(sort_kv(kv, order, in_sequence_order), order)
