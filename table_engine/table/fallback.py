"""``scan.fallback-branch`` (Paimon's ``FallbackReadFileStoreTable``): a batch read of the latest snapshot takes the
partitions its branch lacks from the fallback branch.

The partitions the branch's (filtered) plan has are complete; the fallback branch's splits of every other partition
are read with the fallback branch's own reader (its schemas, its snapshot), and the rows appended. Both branches must
have the same columns (nullability aside) and primary keys, as in Paimon. Only batch reads of the latest snapshot
use the fallback; time travel, incremental and streaming reads read the branch alone. Spark's reads plan with
``Table.plan_with_fallback`` (each split with the branch it is read from); ``plan`` alone refuses such a table
rather than return splits of two branches without saying which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from table_engine.core_options import SCAN_FALLBACK_BRANCH
from table_engine.errors import OptionError
from table_engine.io.paths import branch_of

if TYPE_CHECKING:
    from table_engine.table import Table


def fallback_table(table: Table) -> Table | None:
    """The fallback branch of ``table`` for a batch read (None: no ``scan.fallback-branch``, or it names the
    table's own branch); OptionError when the branches differ in columns or primary keys."""
    name = table.options.get(SCAN_FALLBACK_BRANCH)
    if not name or table.source is not None or name == branch_of(table.path):
        return None
    fallback = table.branch_table(name)
    mine = [(f.name, f.type) for f in table.schema.arrow_schema()]
    theirs = [(f.name, f.type) for f in fallback.schema.arrow_schema()]
    if mine != theirs:
        raise OptionError(f"{SCAN_FALLBACK_BRANCH.key} = {name!r}: branch {branch_of(table.path)} and {name} do "
                          f"not have the same row type ({mine} vs {theirs})")
    if table.primary_keys and table.primary_keys != fallback.primary_keys:
        raise OptionError(f"{SCAN_FALLBACK_BRANCH.key} = {name!r}: primary keys {table.primary_keys} of branch "
                          f"{branch_of(table.path)} differ from {fallback.primary_keys} of {name}")
    return fallback
