"""``merge-engine = partial-update``: each column takes the latest non-null value of its key.

Without options a ``-U``/``-D`` record is an error (DataError naming the table and the options to set):

* ``ignore-delete``: retractions are dropped (by the writer; the merge skips any found in files);
* ``partial-update.remove-record-on-delete``: a ``-D`` removes the row: the row becomes that record and is marked
  deleted, later adds update it again (Java's semantics); ``-U`` records are ignored;
* ``fields.<s1[,s2]>.sequence-group = 'a,b'``: columns a, b are updated only by records whose sequence
  ``(s1, s2)`` (compared in order, null smallest) is not smaller than the row's, and then *including nulls*; a
  record whose s1, s2 are all null leaves the group alone. A retraction with such a sequence sets the group's
  columns to null (aggregated columns retract). ``partial-update.remove-record-on-sequence-group = 's1'``: a
  ``-D`` that passes the group of ``s1`` removes the whole row.
* ``fields.<c>.aggregate-function`` (and ``fields.default-aggregate-function``): columns of a sequence group are
  aggregated by every record with a non-null group sequence; records older than the group's sequence are applied
  "before" the accumulator (Java's ``aggReversed``), so order-sensitive functions see the records ordered as
  Java builds them. ``last_non_null_value`` needs no group.

Vectorization: a group's decision per record ("is its sequence >= the running max of the group's sequence before
it") is a segmented exclusive cumulative max over dense ranks of the sequence tuples; a column's value is then the
one of the last record that passed (or its aggregated fold). Removals (``remove-record-on-sequence-group``) depend
on earlier removals, so they are found in rounds, one per removal of the same key (typically none or one).

Results keep enough state to be merged again: a key with an add is stored as ``+I`` with the group sequences at
their running max (so later records are judged against them) and aggregated columns as accumulators; a removed key
is stored as ``-D`` holding the row it was reset to; a key with only retractions is stored as one ``-U`` carrying
each group's max sequence and the combined retraction of aggregated columns. This makes the merge associative:
folding records in any split (write-buffer flushes, commits, compaction) gives what folding them all at once gives.
Where Java differs it is in corner cases that are not associative in Java itself: Java initializes the row from a
leading retraction ("initRow") and lets a ``-U`` after a removing ``-D`` revive the row; neither is done here.

Known limits, shared with Paimon: (1) a removing ``-D`` followed by adds of the same key in one fold unit (write
buffer, compaction of level-0 files) is stored as ``+I``, so a later merge with older records fills the row's
remaining nulls from them; (2) with ``sequence.field`` a merged row mixes values of several sequences, so records
arriving out of sequence order may merge differently depending on how they were grouped; (3) order-sensitive
functions of a sequence group (first_value, collect, listagg, ...) with records older than the group are exact in
one merge but may differ when merged in several steps; (4) with ``remove-record-on-sequence-group`` a ``-D`` that
removes the row within its fold unit is stored as ``-D`` holding the row it was reset to (minus the retractions
after it); a later merge after older records with a larger sequence of the removal group re-judges it as a plain
retraction of those folded values (Java's ``retractWithSequenceGroup``/``initRow``/``getResult`` do the same). No
single record can stand for both outcomes (e.g. ``-D {g1: 0}``, ``-U {c: 1}`` of a summed c must read c = -1 as a
removal and retract 1 otherwise), so only one merge of such records is exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from table_engine.lsm.merge_engines.base import (
    DELETE,
    FoldingMerge,
    assemble,
    fold_field,
    kinds_of,
    last_rows,
    retract_mask,
    retraction_error,
    stored_kinds,
)
from table_engine.lsm.merge_engines.config import MergeConfig, SequenceGroup
from table_engine.lsm.merge_engines.segments import Segments, dense_ranks, take_or_null, valid_mask

if TYPE_CHECKING:
    from table_engine.lsm.sort import MergeOrder

_I64 = np.int64


class _GroupState:
    """Per-record view of one sequence group: validity (non-null sequence) and dense rank of the sequence."""

    def __init__(self, group: SequenceGroup, kv: pa.Table) -> None:
        self.group = group
        cols = [kv.column(s) for s in group.sequence_fields]
        valid = np.zeros(kv.num_rows, bool)
        for c in cols:
            valid |= valid_mask(c)
        self.valid = valid
        self.rank = dense_ranks(cols)

    def passed(self, seg: Segments, active: np.ndarray, base: np.ndarray) -> np.ndarray:
        """Records (among ``active``) whose group sequence is not smaller than the row's at their arrival."""
        proc = active & self.valid
        seed = np.where(base >= 0, self.rank[np.maximum(base, 0)], -1)
        before = seg.exclusive_cummax(np.where(proc, self.rank, -1), seed)
        return proc & (self.rank >= before)


class PartialUpdateMerge(FoldingMerge):
    """The partial-update merge function (see the module doc)."""

    def __init__(self, config: MergeConfig) -> None:
        super().__init__(config)
        self.accepts_retract = bool(config.ignore_delete or config.remove_record_on_delete or config.groups)
        self.group_of = {p: g for g in config.groups for p in g.protected}
        self.removal_groups = [g for g in config.groups
                               if any(s in config.remove_on_sequence_group for s in g.sequence_fields)]

    def _reject(self) -> Exception:
        return retraction_error(self.config, [
            "set 'ignore-delete' = 'true' (or 'partial-update.ignore-delete') to ignore delete records",
            "set 'partial-update.remove-record-on-delete' = 'true' to remove the whole row on a delete record",
            "configure 'fields.<seq>.sequence-group' to retract partial columns (and "
            "'partial-update.remove-record-on-sequence-group' to remove the row on a group's delete record)",
        ])

    def on_write(self, kv: pa.Table) -> pa.Table:
        if not self.accepts_retract and retract_mask(kinds_of(kv)).any():
            raise self._reject()
        return kv

    def read_columns(self, columns: set[str]) -> set[str]:
        """A projected read also needs the sequence fields of the groups it reads and of the removal groups."""
        extra: set[str] = set()
        for g in self.config.groups:
            if g in self.removal_groups or any(c in columns for c in (*g.protected, *g.sequence_fields)):
                extra.update(g.sequence_fields)
        return extra - columns

    # ---- merging ------------------------------------------------------------------------------------------------
    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        n = kv.num_rows
        if n == 0:
            return kv
        cfg = self.config
        kinds = kinds_of(kv)
        retract = retract_mask(kinds)
        if retract.any() and not self.accepts_retract:
            raise self._reject()
        seg = Segments.of(kv, order.key_cols)
        if seg.count == n and not retract.any() and not cfg.groups:
            return kv  # unique keys, only adds: nothing to merge
        present = set(kv.column_names)
        states = {g.option: _GroupState(g, kv) for g in cfg.groups if all(s in present for s in g.sequence_fields)}
        active = ~retract if cfg.ignore_delete else np.ones(n, bool)
        base = self._base_rows(seg, kinds, active, states)
        active &= seg.after(base)
        adds = active & ~retract
        retracts = active & retract
        out_kinds, retract_only = stored_kinds(seg, adds, base)
        values = self._ungrouped_values(kv, seg, adds, base, present)
        for g in cfg.groups:
            state = states.get(g.option)
            if state is None:
                continue
            passed = state.passed(seg, active, base)
            last = seg.last_where(passed)
            for s in g.sequence_fields:
                values[s] = take_or_null(kv.column(s), np.where(last >= 0, last, base))
            for p in g.protected:
                if p not in present:
                    continue
                col = kv.column(p)
                agg = self.aggregators.get(p)
                if agg is None:
                    # the last passing record sets the column (null for a retraction), else the base row's value
                    pick = np.where(last >= 0, np.where(retract[np.maximum(last, 0)], -2, last), base)
                    values[p] = take_or_null(col, np.where(pick == -2, -1, pick))
                    continue
                rows = np.flatnonzero(active & state.valid)
                values[p] = fold_field(agg, col, seg, rows, retracts, base, retract_only, cfg,
                                       prepend=(~passed) & ~retract)
        return assemble(kv, last_rows(seg), values, out_kinds)

    def _base_rows(self, seg: Segments, kinds: np.ndarray, active: np.ndarray, states: dict[str, _GroupState]
                   ) -> np.ndarray:
        """Per key, the row the merge starts after (-1: none): the last ``-D`` when a delete removes the row, the
        last removing ``-D`` of the removal groups, else none."""
        cfg = self.config
        base = np.full(seg.count, -1, _I64)
        if cfg.ignore_delete:
            return base
        if cfg.remove_record_on_delete:
            return seg.last_where(kinds == DELETE)
        if self.removal_groups:
            return self._removal_bases(seg, kinds, active, [states[g.option] for g in self.removal_groups])
        return base

    def _ungrouped_values(self, kv: pa.Table, seg: Segments, adds: np.ndarray, base: np.ndarray, present: set[str]
                          ) -> dict[str, pa.Array]:
        """The merged value columns outside the sequence groups: per key, the last non-null added value, else the
        base row's."""
        cfg = self.config
        values: dict[str, pa.Array] = {}
        for f in cfg.value_fields:
            name = f.name
            if name not in present or name in self.group_of or cfg.is_group_sequence_field(name):
                continue
            col = kv.column(name)
            pick = seg.last_where(adds & valid_mask(col))
            values[name] = take_or_null(col, np.where(pick >= 0, pick, base))
        return values

    def _removal_bases(self, seg: Segments, kinds: np.ndarray, active: np.ndarray, states: list[_GroupState]
                       ) -> np.ndarray:
        """Per key, the last ``-D`` that removes the row (passes a removal group), found round by round."""
        n = len(kinds)
        idx = np.arange(n, dtype=_I64)
        is_delete = kinds == DELETE
        base = np.full(seg.count, -1, _I64)
        open_keys = np.ones(seg.count, bool)
        while True:
            after = active & (idx > base[seg.ids]) & open_keys[seg.ids]
            cand = np.zeros(n, bool)
            for st in states:
                cand |= st.passed(seg, after, base) & is_delete
            first = seg.first_where(cand)
            found = first >= 0
            if not found.any():
                return base
            base = np.where(found, first, base)
            open_keys = found
