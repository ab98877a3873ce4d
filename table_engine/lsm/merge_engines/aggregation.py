"""``merge-engine = aggregation``: every value column is folded by its aggregate function.

A column's function is ``fields.<col>.aggregate-function``, else ``fields.default-aggregate-function``, else
``last_non_null_value``; ``sequence.field`` columns use ``last_value``. Records are folded in merge order
(key, ``sequence.field``, sequence number); ``+I``/``+U`` are aggregated, ``-U``/``-D`` retracted (only functions
that support retraction accept them, others need ``fields.<col>.ignore-retract``).
``aggregation.remove-record-on-delete``: a ``-D`` resets the row to that record and marks it deleted; later adds
aggregate on top of it (Java's semantics).

Results keep enough state to be merged again: a key with an add is stored as ``+I`` holding the aggregated values
(each function's ``agg(null, x) = x``, so the stored row is a valid first input of a later merge); a key left
deleted by ``remove-record-on-delete`` is stored as ``-D``; a key with only retractions is stored as one ``-U``
carrying the combined retraction (sum: the total to subtract, collect: all retracted elements, ...), so merging it
later with older records subtracts exactly what the separate retractions would have. Readers drop ``-U``/``-D``.

Retraction merges exactly in any grouping of records for ``sum``, ``count`` and ``last_value``; for ``product``
(integer division), ``last_non_null_value`` (a null left by a retraction looks like "no value" to a later merge),
``collect``, ``merge_map`` and ``nested_update`` (a retraction cannot reach values merged in another step) it is
best effort, as Paimon documents. A removing ``-D`` followed by adds of the same key in one fold unit is stored as
``+I`` and a later merge aggregates older records into it (Paimon alike).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from table_engine.lsm.merge_engines.aggregators import Aggregator
from table_engine.lsm.merge_engines.base import (
    DELETE,
    FoldingMerge,
    assemble,
    fold_field,
    kinds_of,
    last_rows,
    retract_mask,
    retraction_unsupported,
    stored_kinds,
    value_columns,
)
from table_engine.lsm.merge_engines.config import MergeConfig, field_property
from table_engine.lsm.merge_engines.segments import Segments, combine

if TYPE_CHECKING:
    from table_engine.format.schema_file import TableSchema
    from table_engine.lsm.sort import MergeOrder

_I64 = np.int64


class AggregateMerge(FoldingMerge):
    """The aggregation merge function (see the module doc)."""

    def __init__(self, config: MergeConfig) -> None:
        super().__init__(config)
        self._single_identity = all(a.single_identity for a in self.aggregators.values())
        self._transforms = [a for a in self.aggregators.values() if type(a).prepare_input is not
                            Aggregator.prepare_input]

    def on_write(self, kv: pa.Table) -> pa.Table:
        """Reject retractions of functions that cannot take them; turn written values into partial states."""
        kinds = kinds_of(kv)
        retract = retract_mask(kinds)
        if self.config.remove_record_on_delete:
            retract &= kinds != DELETE
        if retract.any():
            cfg = self.config
            for name, agg in self.aggregators.items():
                if name in kv.column_names and not agg.retractable and not agg.options.ignore_retract:
                    raise retraction_unsupported(agg, cfg)
        for agg in self._transforms:
            name = agg.field.name
            if name in kv.column_names:
                i = kv.column_names.index(name)
                kv = kv.set_column(i, kv.schema.field(i), agg.prepare_input(combine(kv.column(name)), retract))
        return kv

    def read_columns(self, columns: set[str]) -> set[str]:
        return set()

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        n = kv.num_rows
        if n == 0:
            return kv
        cfg = self.config
        seg = Segments.of(kv, order.key_cols)
        kinds = kinds_of(kv)
        retract = retract_mask(kinds)
        active = ~retract if cfg.ignore_delete else np.ones(n, bool)
        base = np.full(seg.count, -1, _I64)
        if cfg.remove_record_on_delete and not cfg.ignore_delete:
            base = seg.last_where(kinds == DELETE)
            active &= seg.after(base)
        if seg.count == n and not retract.any() and not (base >= 0).any() and self._single_identity:
            return kv  # unique keys, only adds: every record is its own result
        out_kinds, retract_only = stored_kinds(seg, active & ~retract, base)
        rows = np.flatnonzero(active)
        values: dict[str, pa.Array] = {}
        for name in value_columns(kv, cfg):
            agg = self.aggregators[name]
            values[name] = fold_field(agg, kv.column(name), seg, rows, retract & active, base, retract_only, cfg)
        return assemble(kv, last_rows(seg), values, out_kinds)


def aggregation_fields(schema: TableSchema) -> pa.Table:
    """The ``$aggregation_fields`` system table: per column its name, type, the values of its ``fields.<col>.*``
    options (``function``) and their keys (``function_options``), both rendered as Java lists, and its comment."""
    options = dict(schema.options)
    rows = []
    for f in schema.fields:
        prefix = f"fields.{f.name}."
        keys = [k for k in options if k.startswith(prefix) and len(k) > len(prefix)]
        rows.append({
            "field_name": f.name,
            "field_type": f.type.sql(),
            "function": "[" + ", ".join(options[k] for k in keys) + "]",
            "function_options": "[" + ", ".join(keys) + "]",
            "comment": f.description,
        })
    out_schema = pa.schema([
        pa.field("field_name", pa.string(), nullable=False),
        pa.field("field_type", pa.string(), nullable=False),
        pa.field("function", pa.string()),
        pa.field("function_options", pa.string()),
        pa.field("comment", pa.string()),
    ])
    return pa.Table.from_pylist(rows, schema=out_schema)


__all__ = ["AggregateMerge", "aggregation_fields", "field_property"]
