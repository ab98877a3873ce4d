"""Record-level expiry: time units, null times, file statistics, option validation."""

from __future__ import annotations

import dataclasses
import datetime

import pyarrow as pa
import pytest

from table_engine.errors import OptionError
from table_engine.format.data_file import FULL_STATS, compute_stats
from table_engine.format.schema_file import TableSchema, new_schema
from table_engine.lsm.compaction.expire import RecordLevelExpire
from table_engine.types import fields_from_arrow_schema
from tests.table_engine.lsm._files import meta

NOW = 1_700_000_000
DAY = 86_400


def schema_of(t: pa.DataType) -> TableSchema:
    fields, highest = fields_from_arrow_schema(pa.schema([("k", pa.int64()), ("t", t), ("v", pa.string())]))
    return new_schema(0, fields, [], ["k"], {}, None, highest)


def expire_on(t: pa.DataType, unit: str | None = None, days: int = 1) -> RecordLevelExpire:
    schema = schema_of(t)
    out = RecordLevelExpire.create(days * DAY * 1000, "t", unit, schema, lambda i: schema)
    assert out is not None
    return out


def table(times: list[object], t: pa.DataType) -> pa.Table:
    return pa.table({"k": pa.array(range(len(times)), pa.int64()), "t": pa.array(times, t),
                     "v": ["x"] * len(times)})


@pytest.mark.parametrize(("arrow_type", "old", "fresh", "unit"), [
    (pa.int32(), NOW - 2 * DAY, NOW - 10, None),
    (pa.int64(), NOW - 2 * DAY, NOW - 10, None),                          # seconds
    (pa.int64(), (NOW - 2 * DAY) * 1000, (NOW - 10) * 1000, None),        # millis (>= 10^12)
    (pa.int64(), (NOW - 2 * DAY) * 1000, (NOW - 10) * 1000, "millis-long"),
    (pa.int64(), NOW - 2 * DAY, NOW - 10, "seconds-long"),
    (pa.int32(), NOW - 2 * DAY, NOW - 10, "seconds-int"),
    (pa.timestamp("us"), datetime.datetime.fromtimestamp(NOW - 2 * DAY, datetime.UTC).replace(tzinfo=None),
     datetime.datetime.fromtimestamp(NOW - 10, datetime.UTC).replace(tzinfo=None), None),
    (pa.timestamp("ms", tz="UTC"), datetime.datetime.fromtimestamp(NOW - 2 * DAY, datetime.UTC),
     datetime.datetime.fromtimestamp(NOW - 10, datetime.UTC), "timestamp"),
])
def test_filter_drops_expired_records_keeps_fresh_and_null(arrow_type: pa.DataType, old: object, fresh: object,
                                                           unit: str | None) -> None:
    exp = expire_on(arrow_type, unit)
    t = table([old, fresh, None, old], arrow_type)
    assert exp.filter(t, NOW).column("k").to_pylist() == [1, 2]
    stats = compute_stats(t, exp.schema.fields, FULL_STATS)
    assert exp.is_expire_file(dataclasses.replace(meta(0, 3, rows=4), value_stats=stats), NOW)
    fresh_stats = compute_stats(table([fresh], arrow_type), exp.schema.fields, FULL_STATS)
    assert not exp.is_expire_file(dataclasses.replace(meta(0, 0), value_stats=fresh_stats), NOW)


def test_boundary_is_inclusive() -> None:
    exp = expire_on(pa.int32())
    assert exp.filter(table([NOW - DAY, NOW - DAY - 1], pa.int32()), NOW).column("k").to_pylist() == [0]


def test_files_without_stats_are_not_expire_files() -> None:
    exp = expire_on(pa.int32())
    stats = compute_stats(table([1], pa.int32()), exp.schema.fields, FULL_STATS)
    assert exp.is_expire_file(dataclasses.replace(meta(0, 0), value_stats=stats), NOW)
    assert not exp.is_expire_file(dataclasses.replace(meta(0, 0), value_stats=stats, value_stats_cols=["k"]), NOW)
    assert not exp.is_expire_file(meta(0, 0), NOW)  # stats mode none


def test_options_are_validated() -> None:
    schema = schema_of(pa.int32())
    assert RecordLevelExpire.create(None, "t", None, schema, lambda i: schema) is None
    with pytest.raises(OptionError, match="needs record-level.time-field"):
        RecordLevelExpire.create(1000, None, None, schema, lambda i: schema)
    with pytest.raises(OptionError, match="not a column"):
        RecordLevelExpire.create(1000, "nope", None, schema, lambda i: schema)
    with pytest.raises(OptionError, match="must be INT, BIGINT or TIMESTAMP"):
        RecordLevelExpire.create(1000, "v", None, schema, lambda i: schema)
    with pytest.raises(OptionError, match="does not match"):
        RecordLevelExpire.create(1000, "t", "millis-long", schema, lambda i: schema)
