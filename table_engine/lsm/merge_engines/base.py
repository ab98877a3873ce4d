"""What the merge engines share: row-kind arrays, retraction errors, assembling one output record per key, and the
common part of the engines that fold records (:class:`FoldingMerge`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError
from table_engine.lsm.key_value import VALUE_KIND
from table_engine.lsm.merge_engines.aggregators import Aggregator
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.function import ALL_CHANGES, MergeCapabilities, MovedKey
from table_engine.lsm.merge_engines.segments import Segments, combine, take_or_null

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3


def kinds_of(kv: pa.Table) -> np.ndarray:
    """The ``_VALUE_KIND`` column as an int8 numpy array."""
    return np.asarray(combine(kv.column(VALUE_KIND)).to_numpy(zero_copy_only=False), np.int8)


def retract_mask(kinds: np.ndarray) -> np.ndarray:
    """True where the row kind is -U or -D."""
    return np.asarray((kinds == UPDATE_BEFORE) | (kinds == DELETE), bool)


def value_columns(kv: pa.Table, config: MergeConfig) -> list[str]:
    """The table's value columns present in ``kv`` (a read may project some away)."""
    present = set(kv.column_names)
    return [f.name for f in config.value_fields if f.name in present]


def assemble(kv: pa.Table, rep: np.ndarray, values: Mapping[str, pa.Array], kinds: np.ndarray | None) -> pa.Table:
    """One row per key: ``values`` for the merged columns, ``kinds`` as ``_VALUE_KIND`` (None: keep the kind of the
    representative row) and every other column (keys, system and pass-through columns) from row ``rep``."""
    idx = pa.array(rep)
    arrays = []
    for name, f in zip(kv.column_names, kv.schema):
        if name in values:
            arr = values[name]
            if arr.type != f.type:
                arr = arr.cast(f.type)
            arrays.append(arr)
        elif name == VALUE_KIND and kinds is not None:
            arrays.append(pa.array(kinds, pa.int8()))
        else:
            arrays.append(combine(kv.column(name)).take(idx))
    return pa.Table.from_arrays(arrays, schema=kv.schema)


def last_rows(seg: Segments) -> np.ndarray:
    """The index of each key's last row."""
    return seg.ends - 1


def retraction_error(config: MergeConfig, solutions: list[str], what: str = "delete records") -> DataError:
    """The DataError of a merge engine given -U/-D records, listing the options that accept them."""
    lines = [f"table {config.table}: the {config.engine} merge engine cannot accept {what} (-U/-D) by default; "
             "choose one of:"]
    lines += [f"  {i}. {s}" for i, s in enumerate(solutions, 1)]
    return DataError("\n".join(lines))


def retraction_unsupported(agg: Aggregator, config: MergeConfig) -> DataError:
    """The DataError of an aggregate function that cannot retract, naming the option to ignore retractions."""
    name = agg.field.name
    hint = (", or 'aggregation.remove-record-on-delete' = 'true' to remove the row on -D"
            if config.engine == "aggregation" else "")
    return DataError(f"table {config.table}: column {name!r} uses aggregate function {agg.name!r}, which does not "
                     f"accept retraction (-U/-D records); set 'fields.{name}.ignore-retract' = 'true' to ignore "
                     f"them{hint}")


def fold_field(agg: Aggregator, col: pa.Array, seg: Segments, rows: np.ndarray, retract: np.ndarray,
               base: np.ndarray, retract_only: np.ndarray, config: MergeConfig,
               prepend: np.ndarray | None = None) -> pa.Array:
    """Fold one column per key with ``agg``.

    ``rows`` (ascending) are the records taking part; ``retract`` marks retractions (global mask); ``base[s]`` is a
    row whose value starts key ``s``'s fold (a removing ``-D``: the row becomes that record) or -1; ``prepend``
    marks rows applied "before" the accumulator (partial-update records older than their sequence group: Java's
    ``aggReversed``; the later such a record arrives, the earlier it lands). Keys in ``retract_only`` (no add, no
    base) get :meth:`Aggregator.combine_retracts` of their retractions instead: they are stored as one ``-U``.
    """
    ignore = agg.options.ignore_retract
    if not agg.retractable or ignore:
        if retract[rows].any():
            if not ignore:
                raise retraction_unsupported(agg, config)
            rows = rows[~retract[rows]]
    has_base = base >= 0
    reorder = has_base.any() or (prepend is not None and prepend[rows].any())
    if not reorder and len(rows) == seg.n:
        out = agg.fold(col, seg, retract if retract.any() else None)
    else:
        if reorder:
            base_rows = base[has_base]
            all_rows = np.concatenate([base_rows, rows])
            is_base = np.concatenate([np.ones(len(base_rows), bool), np.zeros(len(rows), bool)])
            segs = seg.ids[all_rows]
            pre = np.zeros(len(all_rows), bool)
            if prepend is not None:
                pre[len(base_rows):] = prepend[rows]
            bucket = np.where(pre, 0, np.where(is_base, 1, 2))
            pos = np.where(pre, -all_rows, all_rows)
            order = np.lexsort((pos, bucket, segs))
            sel, sel_base = all_rows[order], is_base[order]
        else:
            sel, sel_base = rows, np.zeros(len(rows), bool)
        values = take_or_null(col, sel)
        sub = Segments.from_ids(seg.ids[sel], seg.count)
        ret = retract[sel] & ~sel_base
        out = agg.fold(values, sub, ret if ret.any() else None)
    if retract_only.any() and agg.retractable and not ignore:
        rrows = rows[retract[rows] & retract_only[seg.ids[rows]]]
        combined = agg.combine_retracts(take_or_null(col, rrows), Segments.from_ids(seg.ids[rrows], seg.count))
        out = pc.if_else(pa.array(retract_only), combined, out)
    return out


def stored_kinds(seg: Segments, adds: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row kind each key's merged record is stored with, and which keys have only retractions.

    A key with an add (``adds``: row mask) is ``+I``; else a key reset by a removing ``-D`` (``base[s] >= 0``) is
    ``-D``; else the key has only retractions and is stored as one ``-U`` (its combined retraction)."""
    has_add = seg.any(adds)
    has_base = base >= 0
    retract_only = ~has_add & ~has_base
    kinds = np.where(has_add, INSERT, np.where(has_base, DELETE, UPDATE_BEFORE)).astype(np.int8)
    return kinds, retract_only


class FoldingMerge:
    """The engines that fold a key's records into new values (partial-update, aggregation): their capabilities and
    the aggregator of each column that has an aggregate function."""

    def __init__(self, config: MergeConfig) -> None:
        self.config = config
        # merged values combine several records; a key that moved partition is merged into its old partition
        self.capabilities = MergeCapabilities(
            merge_free=False, needs_lookup=False, first_wins=False, changelog_kinds=ALL_CHANGES, newest_wins=False,
            ignore_delete=config.ignore_delete, moved_key=MovedKey.UPDATE_OLD)
        self.aggregators: dict[str, Aggregator] = {n: ff.create() for n, ff in config.functions.items()}
