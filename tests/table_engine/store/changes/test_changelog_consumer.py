"""The changelog consumption API: polls with row kinds, commits, restarts, expiry protection, replay equivalence."""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import ConsumerError, SnapshotNotExistError
from table_engine.store.changes.changelog_consumer import ChangelogConsumer, PolledChanges
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def new_table(catalog: Catalog, name: str = "db.t", **options: str) -> Table:
    return catalog.create_table(name, SCHEMA, primary_keys=["id"], options={"bucket": "2", **options})


def put(t: Table, items: dict[int, str | None]) -> int | None:
    """Upsert ``id: v`` pairs; ``None`` deletes the id."""
    ids = list(items)
    kinds = ["-D" if items[i] is None else "+I" for i in ids]
    return t.write(pa.table({"id": ids, "v": [items[i] or "" for i in ids]}, schema=SCHEMA), row_kinds=kinds)


def changes(polled: PolledChanges) -> list[tuple[str, int, str]]:
    return [(r["rowkind"], r["id"], r["v"]) for b in polled.batches() for r in b.to_pylist()]


def apply(state: dict[int, str], rows: list[tuple[str, int, str]]) -> None:
    for kind, k, v in rows:
        if kind in ("+I", "+U"):
            state[k] = v
        else:
            state.pop(k, None)


def current(t: Table) -> dict[int, str]:
    return {r["id"]: r["v"] for r in t.read().to_pylist()}


def test_poll_commit_and_resume_after_restart(catalog: Catalog, warehouse: str) -> None:
    t = new_table(catalog)
    put(t, {1: "a", 2: "b"})
    consumer = t.changelog_consumer("etl")                                 # latest-full: snapshot 1 in full
    first = consumer.poll(max_snapshots=5)
    assert first.snapshot_ids == [1] and first.position == 2
    assert sorted(changes(first)) == [("+I", 1, "a"), ("+I", 2, "b")]
    assert t.consumers() == {}                                             # nothing recorded before commit
    consumer.commit(first.position)
    assert t.consumers() == {"etl": 2}
    put(t, {2: "B", 3: "c"})
    put(t, {1: None})
    # a restart: a new process opens the table again and resumes at the consumer's next snapshot
    again = Catalog(warehouse).get_table("db.t").changelog_consumer("etl")
    polled = again.poll(max_snapshots=1)
    assert polled.snapshot_ids == [2] and sorted(changes(polled)) == [("+I", 2, "B"), ("+I", 3, "c")]
    assert again.poll().snapshot_ids == [3]                                # not committed yet
    # restart without committing: the uncommitted snapshots are delivered again, the committed ones not
    third = Catalog(warehouse).get_table("db.t").changelog_consumer("etl")
    polled = third.poll(max_snapshots=10)
    assert polled.snapshot_ids == [2, 3] and polled.position == 4
    assert changes(polled)[-1] == ("-D", 1, "")                            # the delete record as written
    third.commit(polled.position)
    assert t.consumers() == {"etl": 4}
    assert third.poll().empty and third.poll().position == 4


def test_expiry_stops_at_the_consumer(catalog: Catalog) -> None:
    t = new_table(catalog)
    for i in range(1, 6):
        put(t, {i: f"v{i}"})
    consumer = t.changelog_consumer("slow", options={"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    polled = consumer.poll(max_snapshots=2)
    assert polled.snapshot_ids == [1, 2]
    consumer.commit(polled.position)                                       # next snapshot 3
    result = t.expire_snapshots(retain_min=1, retain_max=1)
    assert result.expired_snapshot_ids == [1, 2] and t.earliest_snapshot_id() == 3
    rest = t.changelog_consumer("slow").poll(max_snapshots=10)
    assert rest.snapshot_ids == [3, 4, 5]
    assert sorted(changes(rest)) == [("+I", 3, "v3"), ("+I", 4, "v4"), ("+I", 5, "v5")]
    # a consumer whose next snapshot expired anyway (e.g. reset below the earliest) starts at the earliest
    t.maintenance.reset_consumer("slow", 1)
    assert t.changelog_consumer("slow").poll(max_snapshots=10).snapshot_ids == [3, 4, 5]


def test_options_limits_and_errors(catalog: Catalog) -> None:
    t = new_table(catalog)
    for i in range(1, 5):
        put(t, {i: "x", i + 10: "y"})
    by_option = t.changelog_consumer(options={"consumer-id": "opt", "scan.mode": "from-snapshot",
                                              "scan.snapshot-id": "1"})
    assert by_option.consumer_id == "opt"
    limited = by_option.poll(max_snapshots=10, max_rows=3)
    assert limited.snapshot_ids == [1, 2]                                  # stops once 3 rows are planned
    with pytest.raises(ConsumerError, match="differs"):
        t.changelog_consumer("other", options={"consumer-id": "opt"})
    with pytest.raises(ConsumerError, match="invalid consumer id"):
        t.changelog_consumer("a/b")
    anonymous = t.changelog_consumer(options={"scan.mode": "latest"})
    assert anonymous.poll().empty and anonymous.position == 5
    with pytest.raises(ConsumerError, match="no consumer id"):
        anonymous.commit(5)
    anonymous.seek(4)
    polled = anonymous.poll()
    assert polled.snapshot_ids == [4] and polled.to_arrow().num_rows == 2
    cols = t.changelog_consumer(options={"scan.mode": "from-snapshot", "scan.snapshot-id": "4"}, columns=["v"])
    assert cols.poll().to_arrow().column_names == ["rowkind", "v"]
    with pytest.raises(ConsumerError, match="max_snapshots"):
        anonymous.poll(max_snapshots=0)
    assert isinstance(anonymous, ChangelogConsumer)


def test_consumer_ignore_progress_keeps_only_protection(catalog: Catalog) -> None:
    t = new_table(catalog)
    put(t, {1: "a"})
    put(t, {2: "b"})
    t.maintenance.reset_consumer("c", 2)
    fresh = t.changelog_consumer("c", options={"consumer.ignore-progress": "true"})
    assert [p.kind for p in fresh.poll().plans] == ["full"]                # scan.mode latest-full, not the consumer
    assert [(p.kind, p.snapshot_id) for p in t.changelog_consumer("c").poll().plans] == [("delta", 2)]


def _input_producer_available(catalog: Catalog) -> bool:
    t = new_table(catalog, "db.probe", **{"changelog-producer": "input"})
    put(t, {1: "a"})
    snap = t.latest_snapshot()
    return snap is not None and bool(snap.changelog_manifest_list)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.dictionaries(st.integers(0, 12), st.one_of(st.none(), st.sampled_from("abc")),
                                                    min_size=1, max_size=6)),
        st.tuples(st.just("compact"), st.booleans()),
        st.tuples(st.just("poll"), st.integers(1, 3)),
        st.tuples(st.just("restart"), st.booleans()),
    ),
    min_size=1, max_size=14)


@pytest.mark.parametrize("producer", ["none", "input", "lookup", "full-compaction"])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, data=st.data())
def test_replaying_the_stream_rebuilds_the_table(tmp_path_factory: pytest.TempPathFactory, producer: str,
                                                 ops: list[tuple[str, Any]], data: st.DataObject) -> None:
    warehouse = str(tmp_path_factory.mktemp("wh"))
    catalog = Catalog(warehouse)
    if producer == "input" and not _input_producer_available(catalog):
        pytest.skip("changelog-producer input does not write changelog files yet")
    t = new_table(catalog, **{"changelog-producer": producer})
    mode = data.draw(st.sampled_from(["latest-full", "from-snapshot-full"]))
    options = {"scan.mode": mode, "scan.snapshot-id": "1"} if mode == "from-snapshot-full" else {}
    state: dict[int, str] = {}
    consumer: ChangelogConsumer | None = None
    counter = itertools.count()

    def poll(n: int, commit: bool = True) -> None:
        nonlocal consumer
        if consumer is None:
            consumer = Catalog(warehouse).get_table("db.t").changelog_consumer("c", options=options)
        polled = consumer.poll(max_snapshots=n)
        apply(state, changes(polled))
        if commit:
            consumer.commit(polled.position)

    put(t, {next(counter): "seed"})
    poll(1)  # the start is resolved now (snapshot 1 in full): every later commit reaches the stream as changes
    for op, arg in ops:
        if op == "write":
            put(t, arg)
        elif op == "compact":
            t.maintenance.compact(full=arg)
        elif op == "poll":
            poll(arg)
        elif consumer is not None:  # restart; with arg False after a poll that was never committed
            if not arg:
                committed = dict(state)
                poll(1, commit=False)
                state.clear()
                state.update(committed)  # the uncommitted work is lost with the process
            consumer = None
    if producer == "full-compaction":
        t.maintenance.compact(full=True)  # its changelog is the diff between full compactions: bring it up to date
    polls = 0
    while True:
        poll(10)
        polls += 1
        assert consumer is not None
        if consumer.position == (t.latest_snapshot_id() or 0) + 1:
            break
        assert polls < 100
    assert state == current(t)


def test_an_expired_consumer_no_longer_protects_snapshots(catalog: Catalog) -> None:
    t = new_table(catalog, **{"consumer.expiration-time": "1 h", "snapshot.num-retained.min": "1",
                              "snapshot.num-retained.max": "1"})
    put(t, {1: "a"})
    consumer = t.changelog_consumer("idle", options={"scan.mode": "latest"})
    assert consumer.poll().empty
    consumer.commit(consumer.position)                                    # next snapshot 2
    for i in range(2, 5):
        put(t, {i: "x"})
    t.maintenance.after_commit()
    assert t.earliest_snapshot_id() == 2 and t.consumers() == {"idle": 2}  # held by the consumer
    path = ConsumerManager.of(t.store).path("idle")
    old = time.time() - 7200
    os.utime(path, (old, old))                                           # not updated for two hours
    report = t.maintenance.after_commit()
    assert report.consumers_expired == ["idle"] and t.earliest_snapshot_id() == 4
    stale = t.changelog_consumer(options={"scan.mode": "latest"})
    stale.seek(2)                                                        # a position kept elsewhere, now expired
    with pytest.raises(SnapshotNotExistError, match="expired"):
        stale.poll()
