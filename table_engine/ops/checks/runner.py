"""Run checks (:mod:`table_engine.ops.checks.definitions`) on one snapshot of a table.

Every check is first bound to the table's schema (columns exist, values cast to the column's type, filters parsed):
a bad definition is a one-line :class:`~table_engine.errors.CheckError` naming the check and the column before any
data is read. Then the checks read the snapshot through the table's public read API, once per distinct ``where``
filter, projecting only the columns they need, and evaluate each batch with Arrow compute (no per-row Python);
``rows_added`` reads the incremental changes since its snapshot. With ``since_snapshot`` every check but
``rows_added`` sees only the rows added after that snapshot up to the checked one (Paimon's ``incremental-between``:
the delta files, or the changelog where the table produces one): the batch an audit branch adds on top of the
snapshot it was made from (docs/wap.md). An OVERWRITE among those snapshots replaced rows rather than adding them
(an incremental read skips it, as Paimon's does): the checks then see every row of the checked snapshot. The table
is opened by the caller (``Catalog.get_table``), so a branch (``db.t$branch_b``) is checked the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import CheckError, SnapshotNotExistError, TableEngineError
from table_engine.format.snapshot import CommitKind
from table_engine.ops.checks.definitions import (
    DATA_COMMIT_KINDS,
    Check,
    CheckResult,
    Filter,
    Freshness,
    NoDuplicateKeys,
    NullFraction,
    RowCount,
    RowPredicate,
    RowsAdded,
    ValuesInRange,
    ValuesInSet,
    Volume,
    outside_range,
)
from table_engine.predicate import Predicate, check_value_types, conjunction, parse_filters
from table_engine.table import Table

__all__ = ["CheckRun", "run_checks"]

SAMPLES = 5
"""Offending values (or keys) a failed check's message shows at most."""


@dataclass(frozen=True)
class CheckRun:
    """The checks' results on one snapshot (None: the table has none yet, every check saw no rows); with
    ``since_snapshot``, on the rows added after it."""

    snapshot_id: int | None
    results: list[CheckResult]
    since_snapshot: int | None = None

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed, in order."""
        return [r for r in self.results if not r.passed]


def run_checks(table: Table, checks: Sequence[Check], snapshot_id: int | None = None,
               since_snapshot: int | None = None) -> CheckRun:
    """Run ``checks`` on ``snapshot_id`` of ``table`` (default: its latest snapshot, resolved once so that every
    check sees the same rows); with ``since_snapshot``, on the rows added after that snapshot only (a CheckError
    when it is newer than the checked one or expired)."""
    snap = table.snapshot(snapshot_id) if snapshot_id is not None else table.latest_snapshot()
    sid = None if snap is None else snap.id
    if since_snapshot is not None and (sid is None or since_snapshot > sid):
        raise CheckError(f"checks of {table.identifier}: since snapshot {since_snapshot} is newer than the checked "
                         f"snapshot ({sid if sid is not None else 'none yet'})")
    if since_snapshot is not None and _overwritten(table, since_snapshot, sid):
        since_snapshot = None
    evaluators = [_bind(table, check, sid) for check in checks]  # every definition checked before any read
    groups: dict[tuple[Any, ...], list[_Scan]] = {}
    for ev in evaluators:
        if isinstance(ev, _Scan):
            groups.setdefault(_filter_key(ev.where), []).append(ev)
    for members in groups.values():
        _scan(table, sid, members, since_snapshot)
    return CheckRun(sid, [ev.finish() for ev in evaluators], since_snapshot)


def _overwritten(table: Table, since: int, snapshot_id: int | None) -> bool:
    """Whether a snapshot after ``since`` up to ``snapshot_id`` is an OVERWRITE (the batch replaced rows)."""
    if snapshot_id is None:
        return False
    try:
        return any(table.snapshot(i).commit_kind is CommitKind.OVERWRITE for i in range(since + 1, snapshot_id + 1))
    except SnapshotNotExistError as e:
        raise CheckError(f"checks of {table.identifier}: since snapshot {since}: {e}") from None


# ---- binding a definition to the table ---------------------------------------------------------------------------
def _where(check: Check) -> str:
    return f"check {check.label!r} ({check.kind})"


def _column_type(table: Table, check: Check, column: str) -> pa.DataType:
    schema = table.arrow_schema
    if column not in schema.names:
        raise CheckError(f"{_where(check)}: unknown column {column!r}; columns are {schema.names}")
    return schema.field(column).type


def _typed(table: Table, check: Check, column: str, value: Any) -> pa.Scalar:
    """``value`` as a scalar of ``column``'s type (text is cast: dates, timestamps, decimals)."""
    dtype = _column_type(table, check, column)
    try:
        return pa.scalar(value, type=dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        pass
    try:
        if isinstance(value, str):
            return pa.scalar(value).cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass
    raise CheckError(f"{_where(check)}: value {value!r} does not fit column {column!r} of type {dtype}")


def _predicates(table: Table, check: Check, filters: Filter, field: str) -> list[Predicate]:
    """Engine predicates of ``filters``, their values typed as their columns."""
    try:
        preds = parse_filters([tuple(f) for f in filters])
    except TableEngineError as e:
        raise CheckError(f"{_where(check)}: {field}: {e}") from None
    typed = []
    for p in preds:
        value = p.value
        if p.op in ("in", "not in"):
            value = [_typed(table, check, p.column, v).as_py() for v in value]
        elif p.op not in ("is null", "is not null"):
            value = _typed(table, check, p.column, value).as_py()
        else:
            _column_type(table, check, p.column)
        typed.append(Predicate(p.column, p.op, value))
    try:
        check_value_types(typed, table.arrow_schema)
    except TableEngineError as e:
        raise CheckError(f"{_where(check)}: {field}: {e}") from None
    return typed


def _filter_key(preds: Sequence[Predicate]) -> tuple[Any, ...]:
    return tuple((p.column, p.op, repr(p.value)) for p in preds)


class _Evaluator:
    """A check bound to the table: :meth:`finish` gives its result."""

    def __init__(self, check: Check) -> None:
        self.check = check

    def result(self, passed: bool, observed: Any, message: str) -> CheckResult:
        return CheckResult(self.check.label, self.check.kind, passed, observed, self.check.expected(), message)

    def finish(self) -> CheckResult:
        raise NotImplementedError


class _Scan(_Evaluator):
    """A check evaluated on the batches of one read of the snapshot (``columns``, rows matching ``where``)."""

    def __init__(self, check: Check, where: list[Predicate], columns: Sequence[str]) -> None:
        super().__init__(check)
        self.where = where
        self.columns = list(columns)
        self.rows = 0

    def update(self, batch: pa.RecordBatch) -> None:
        self.rows += batch.num_rows


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _show(value: Any) -> str:
    """A value in a message: text quoted, anything else as text (dates as ISO)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_show(v)}" for k, v in value.items()) + "}"
    return repr(value) if isinstance(value, str) else str(value)


def _within(value: int, low: int | None, high: int | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


class _RowCount(_Scan):
    check: RowCount

    def finish(self) -> CheckResult:
        c = self.check
        return self.result(_within(self.rows, c.min, c.max), self.rows, _rows(self.rows))


class _NullFraction(_Scan):
    check: NullFraction

    def __init__(self, check: NullFraction, where: list[Predicate]) -> None:
        super().__init__(check, where, [check.column])
        self.nulls = 0

    def update(self, batch: pa.RecordBatch) -> None:
        super().update(batch)
        self.nulls += batch.column(self.check.column).null_count

    def finish(self) -> CheckResult:
        fraction = self.nulls / self.rows if self.rows else 0.0
        return self.result(fraction <= self.check.max, fraction,
                           f"{self.nulls} of {_rows(self.rows)} with a null {self.check.column} ({fraction:.4g})")


class _OffendingValues(_Scan):
    """A check counting the rows whose non-null ``column`` is not allowed (:meth:`bad`), with a few of the values."""

    def __init__(self, check: ValuesInSet | ValuesInRange, where: list[Predicate]) -> None:
        super().__init__(check, where, [check.column])
        self.column = check.column
        self.bad_rows = 0
        self.samples: list[Any] = []
        self.outside = ""

    def bad(self, values: pa.Array) -> pa.Array:
        raise NotImplementedError

    def update(self, batch: pa.RecordBatch) -> None:
        super().update(batch)
        values = batch.column(self.column)
        mask = pc.fill_null(pc.and_(pc.is_valid(values), self.bad(values)), False)
        count = pc.sum(mask).as_py() or 0
        self.bad_rows += count
        if count and len(self.samples) < SAMPLES:
            for v in pc.unique(values.filter(mask)).to_pylist():
                if v not in self.samples and len(self.samples) < SAMPLES:
                    self.samples.append(v)

    def describe(self) -> str:
        if not self.bad_rows:
            return f"all {_rows(self.rows)} allowed"
        shown = ", ".join(map(_show, self.samples)) + (", ..." if len(self.samples) >= SAMPLES else "")
        return f"{self.bad_rows} of {_rows(self.rows)} with {self.column} {self.outside}: {shown}"

    def finish(self) -> CheckResult:
        return self.result(self.bad_rows == 0, self.bad_rows, self.describe())


class _ValuesInSet(_OffendingValues):
    def __init__(self, check: ValuesInSet, where: list[Predicate], allowed: pa.Array) -> None:
        super().__init__(check, where)
        self.allowed = allowed
        self.outside = "not in the set"

    def bad(self, values: pa.Array) -> pa.Array:
        return pc.invert(pc.is_in(values, value_set=self.allowed))


class _ValuesInRange(_OffendingValues):
    def __init__(self, check: ValuesInRange, where: list[Predicate], low: pa.Scalar | None,
                 high: pa.Scalar | None) -> None:
        super().__init__(check, where)
        self.low, self.high = low, high
        self.outside = outside_range(None if low is None else low.as_py(), None if high is None else high.as_py())

    def bad(self, values: pa.Array) -> pa.Array:
        masks = ([pc.less(values, self.low)] if self.low is not None else []) + \
                ([pc.greater(values, self.high)] if self.high is not None else [])
        return masks[0] if len(masks) == 1 else pc.or_(masks[0], masks[1])



class _NoDuplicateKeys(_Scan):
    check: NoDuplicateKeys

    def __init__(self, check: NoDuplicateKeys, where: list[Predicate], keys: Sequence[str]) -> None:
        super().__init__(check, where, keys)
        self.parts: list[pa.Table] = []

    def update(self, batch: pa.RecordBatch) -> None:
        super().update(batch)
        if batch.num_rows:
            self.parts.append(pa.Table.from_batches([batch.select(self.columns)]))

    def finish(self) -> CheckResult:
        if not self.parts:
            return self.result(True, 0, "no rows")
        keys = pa.concat_tables(self.parts)
        counts = keys.group_by(self.columns, use_threads=False).aggregate([([], "count_all")])
        dups = counts.filter(pc.greater(counts["count_all"], 1))
        if not dups.num_rows:
            return self.result(True, 0, f"{_rows(self.rows)}, every key once")
        rows = pc.sum(dups["count_all"]).as_py()
        shown = ", ".join(_show(k) for k in dups.select(self.columns).slice(0, SAMPLES).to_pylist())
        more = ", ..." if dups.num_rows > SAMPLES else ""
        keys_text = f"{dups.num_rows} key" if dups.num_rows == 1 else f"{dups.num_rows} keys"
        return self.result(False, dups.num_rows, f"{keys_text} held by {rows} rows: {shown}{more}")


class _RowPredicate(_Scan):
    def __init__(self, check: RowPredicate, where: list[Predicate], preds: list[Predicate]) -> None:
        super().__init__(check, where, list(dict.fromkeys(p.column for p in preds)))
        self.expression = conjunction(preds)
        self.failing = 0

    def update(self, batch: pa.RecordBatch) -> None:
        super().update(batch)
        if batch.num_rows:
            self.failing += batch.num_rows - pa.Table.from_batches([batch]).filter(self.expression).num_rows

    def finish(self) -> CheckResult:
        return self.result(self.failing == 0, self.failing, f"{self.failing} of {_rows(self.rows)} not matching")


class _RowsAdded(_Evaluator):
    check: RowsAdded

    def __init__(self, check: RowsAdded, table: Table, snapshot_id: int | None, where: list[Predicate]) -> None:
        super().__init__(check)
        since = check.since_snapshot
        if check.since_tag is not None:
            try:
                since = table.tag_snapshot(check.since_tag).id
            except TableEngineError as e:
                raise CheckError(f"{_where(check)}: since_tag: {e}") from None
        assert since is not None
        if snapshot_id is None or since > snapshot_id:
            raise CheckError(f"{_where(check)}: snapshot {since} is newer than the checked snapshot of "
                             f"{table.identifier} ({snapshot_id if snapshot_id is not None else 'none yet'})")
        self.since, self.table, self.snapshot_id, self.where = since, table, snapshot_id, where

    def finish(self) -> CheckResult:
        added = 0
        if self.snapshot_id is not None and self.since < self.snapshot_id:
            changes = self.table.copy({"incremental-between": f"{self.since},{self.snapshot_id}"})
            try:
                for batch in changes.to_batches(columns=[_narrowest(self.table)], filter=self.where or None):
                    added += batch.num_rows
            except SnapshotNotExistError as e:  # expired since: the changes after it cannot be read
                raise CheckError(f"{_where(self.check)}: {e}") from None
        c = self.check
        return self.result(_within(added, c.min, c.max), added,
                           f"{_rows(added)} added after snapshot {self.since} up to snapshot {self.snapshot_id}")


MAX_WALK = 1000
"""Snapshots a freshness or volume check reads at most, newest first, looking for data commits."""


def data_commits(table: Table, snapshot_id: int | None, wanted: int) -> tuple[list[Any], bool]:
    """Up to ``wanted`` data commits (:data:`DATA_COMMIT_KINDS`) at or before ``snapshot_id``, newest first, read
    from snapshot metadata; and whether the walk stopped at :data:`MAX_WALK` snapshots before finding them."""
    found: list[Any] = []
    if snapshot_id is None:
        return found, False
    earliest = table.earliest_snapshot_id() or snapshot_id
    sid = snapshot_id
    while sid >= earliest and len(found) < wanted:
        if snapshot_id - sid >= MAX_WALK:
            return found, True
        try:
            snap = table.snapshot(sid)
        except SnapshotNotExistError:  # expired meanwhile: nothing older is retained either
            break
        if str(snap.commit_kind) in DATA_COMMIT_KINDS:
            found.append(snap)
        sid -= 1
    return found, False


class _Freshness(_Evaluator):
    check: Freshness

    def __init__(self, check: Freshness, table: Table, snapshot_id: int | None) -> None:
        super().__init__(check)
        self.table, self.snapshot_id = table, snapshot_id

    def finish(self) -> CheckResult:
        from table_engine import clock
        from table_engine.options.values import format_duration

        commits, cut = data_commits(self.table, self.snapshot_id, 1)
        if not commits:
            where = f"in the {MAX_WALK} snapshots before" if cut else "retained at or before"
            return self.result(False, None, f"no data commit {where} snapshot {self.snapshot_id}"
                               if self.snapshot_id is not None else "no snapshot yet")
        snap = commits[0]
        age = max(0, clock.now_millis() - snap.time_millis)
        return self.result(age <= self.check.max_age, round(age / 1000, 3),
                           f"last data commit: snapshot {snap.id} ({snap.commit_kind}) {format_duration(age)} ago")


class _Volume(_Evaluator):
    check: Volume

    def __init__(self, check: Volume, table: Table, snapshot_id: int | None) -> None:
        super().__init__(check)
        self.table, self.snapshot_id = table, snapshot_id

    def finish(self) -> CheckResult:
        import statistics

        c = self.check
        commits, _ = data_commits(self.table, self.snapshot_id, c.history + 1)
        if not commits:
            return self.result(True, None, "not judged: no data commit yet")
        latest, earlier = commits[0], commits[1:]
        delta = int(latest.delta_record_count or 0)
        if len(earlier) < c.min_history:
            return self.result(True, delta, f"not judged: {len(earlier)} earlier data commit"
                               f"{'' if len(earlier) == 1 else 's'} retained (needs {c.min_history}); snapshot "
                               f"{latest.id} wrote {_rows(delta)}")
        median = statistics.median(int(s.delta_record_count or 0) for s in earlier)
        low, high = median / c.factor, median * c.factor
        return self.result(low <= delta <= high, delta,
                           f"snapshot {latest.id} wrote {_rows(delta)}; the last {len(earlier)} data commits wrote a "
                           f"median of {median:g} (bounds {low:g} to {high:g})")


def _narrowest(table: Table) -> str:
    """A column to read when only rows are counted: the first primary key, else the first column."""
    keys = table.primary_keys
    return keys[0] if keys else table.arrow_schema.names[0]


def _bind_metadata(table: Table, check: Freshness | Volume, snapshot_id: int | None) -> _Evaluator:
    """The evaluator of a check that reads snapshot metadata, not rows."""
    if check.where:
        raise CheckError(f"{_where(check)}: where does not apply: it reads snapshot metadata, not rows")
    if isinstance(check, Freshness):
        return _Freshness(check, table, snapshot_id)
    return _Volume(check, table, snapshot_id)


def _bind(table: Table, check: Check, snapshot_id: int | None) -> _Evaluator:
    """The evaluator of ``check`` on ``table``; a CheckError for what does not fit the table's schema."""
    if isinstance(check, (Freshness, Volume)):
        return _bind_metadata(table, check, snapshot_id)
    where = _predicates(table, check, check.where, "where")
    if isinstance(check, RowCount):
        return _RowCount(check, where, [])
    if isinstance(check, NullFraction):
        _column_type(table, check, check.column)
        return _NullFraction(check, where)
    if isinstance(check, ValuesInSet):
        dtype = _column_type(table, check, check.column)
        allowed = pa.array([_typed(table, check, check.column, v).as_py() for v in check.values], type=dtype)
        return _ValuesInSet(check, where, allowed)
    if isinstance(check, ValuesInRange):
        return _bind_values_in_range(table, check, where)
    if isinstance(check, NoDuplicateKeys):
        return _bind_no_duplicate_keys(table, check, where)
    if isinstance(check, RowPredicate):
        preds = _predicates(table, check, check.filter, "filter")
        if not preds:
            raise CheckError(f"{_where(check)}: filter is empty")
        return _RowPredicate(check, where, preds)
    if isinstance(check, RowsAdded):
        return _RowsAdded(check, table, snapshot_id, where)
    raise CheckError(f"{_where(check)}: no runner for checks of kind {check.kind!r}")


def _bind_values_in_range(table: Table, check: ValuesInRange, where: list[Predicate]) -> _Evaluator:
    """The evaluator of a ValuesInRange check; a CheckError when min is greater than max."""
    low = None if check.min is None else _typed(table, check, check.column, check.min)
    high = None if check.max is None else _typed(table, check, check.column, check.max)
    if low is not None and high is not None and pc.greater(low, high).as_py():
        raise CheckError(f"{_where(check)}: min {check.min!r} is greater than max {check.max!r} "
                         f"(column {check.column!r} of type {low.type})")
    return _ValuesInRange(check, where, low, high)


def _bind_no_duplicate_keys(table: Table, check: NoDuplicateKeys, where: list[Predicate]) -> _Evaluator:
    """The evaluator of a NoDuplicateKeys check (default: the primary key); a CheckError for no or nested keys."""
    keys = list(check.columns) or table.primary_keys
    if not keys:
        raise CheckError(f"{_where(check)}: table {table.identifier} has no primary key: give the key columns "
                         "(columns)")
    for column in keys:
        dtype = _column_type(table, check, column)
        if pa.types.is_nested(dtype):
            raise CheckError(f"{_where(check)}: column {column!r} of type {dtype} cannot be compared as a key")
    return _NoDuplicateKeys(check, where, keys)


def _scan(table: Table, snapshot_id: int | None, members: Sequence[_Scan], since: int | None = None) -> None:
    """One read of the snapshot (or of the rows added after ``since``) for checks sharing a ``where`` filter: the
    union of their columns."""
    if snapshot_id is None or since == snapshot_id:
        return
    columns = list(dict.fromkeys(c for m in members for c in m.columns)) or [_narrowest(table)]
    where = members[0].where
    if since is None:
        batches = table.to_batches(columns=columns, filter=where or None, snapshot_id=snapshot_id)
    else:
        changes = table.copy({"incremental-between": f"{since},{snapshot_id}"})
        batches = changes.to_batches(columns=columns, filter=where or None)
    try:
        for batch in batches:
            for m in members:
                m.update(batch)
    except SnapshotNotExistError as e:  # the since snapshot expired: the rows after it cannot be told apart
        raise CheckError(f"checks of {table.identifier}: since snapshot {since}: {e}") from None
