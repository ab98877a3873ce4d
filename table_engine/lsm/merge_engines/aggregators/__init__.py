"""Field aggregators of the ``aggregation`` and ``partial-update`` merge engines, one vectorized class per function.

Every aggregator folds the records of each key *sequentially* (Paimon's ``FieldAggregator.agg``/``retract`` applied
record by record, starting from a null accumulator), but computes the fold for all keys at once:

* ``fold(values, seg, retract)``: ``values`` holds the rows taking part, grouped by key (``seg``, a
  :class:`~table_engine.lsm.merge_engines.segments.Segments`) and in merge order inside a key; ``retract`` marks
  ``-U``/``-D`` rows (None: no retraction). Returns one value per segment (null for an empty segment);
* ``combine_retracts(values, seg)``: the one retraction value equivalent to applying the given retractions one
  after the other (sum: their sum, collect: their concatenation, ...). A merge that sees only retractions for a key
  stores this as a ``-U`` record, so merging it again later applies exactly the same retraction;
* ``prepare_input(values, retract)``: the write path's transformation of freshly written values (only ``count``:
  a written value counts 1 when not null, so stored values are partial counts that merge by summing).

Intermediate results are re-mergeable: a merged value is itself a valid input whose fold with later records equals
the fold of all the original records (``agg(null, x) = x`` for every function, and order-sensitive functions keep
their order: ``first_value`` stores the first value, ``collect`` the concatenation, ...).

Type rules are checked at table creation by :meth:`Aggregator.check_type` (a SchemaError naming the column and the
function). Functions that accept retraction: ``sum``, ``product``, ``count``, ``collect``, ``merge_map``,
``nested_update``, ``last_value``, ``last_non_null_value``.
"""

from __future__ import annotations

from table_engine.errors import SchemaError
from table_engine.lsm.merge_engines.aggregators.base import Aggregator, FieldOptions
from table_engine.lsm.merge_engines.aggregators.nested import Collect, MergeMap, NestedUpdate
from table_engine.lsm.merge_engines.aggregators.objects import (
    HllSketch,
    ListAgg,
    RoaringBitmap32,
    RoaringBitmap64,
    ThetaSketch,
)
from table_engine.lsm.merge_engines.aggregators.scalar import (
    BoolAnd,
    BoolOr,
    Count,
    FirstNonNullValue,
    FirstValue,
    LastNonNullValue,
    LastValue,
    Max,
    Min,
    Product,
    Sum,
)

__all__ = ["AGGREGATORS", "ALIASES", "DEFAULT_FUNCTION", "Aggregator", "FieldOptions", "aggregator_class"]


AGGREGATORS: dict[str, type[Aggregator]] = {
    cls.name: cls
    for cls in (Sum, Product, Count, Max, Min, LastValue, LastNonNullValue, ListAgg, BoolAnd, BoolOr, FirstValue,
                FirstNonNullValue, RoaringBitmap32, RoaringBitmap64, NestedUpdate, Collect, MergeMap, HllSketch,
                ThetaSketch)
}
#: legacy / alternative spellings
ALIASES = {"first_not_null_value": "first_non_null_value"}
DEFAULT_FUNCTION = "last_non_null_value"


def aggregator_class(function: str, where: str) -> type[Aggregator]:
    """The aggregator of a function name; an unknown name is a SchemaError naming ``where`` (the option key)."""
    name = ALIASES.get(function.strip(), function.strip())
    cls = AGGREGATORS.get(name)
    if cls is None:
        raise SchemaError(f"{where}: unsupported aggregate function {function!r}; supported functions are "
                          f"{sorted(AGGREGATORS) + sorted(ALIASES)}")
    return cls


