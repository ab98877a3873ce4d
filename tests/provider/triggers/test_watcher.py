"""The AssetWatcher trigger polls a real table (local and on the session's S3 server) while the engine commits to it
directly: one event per snapshot, filters, a watermark that survives a restart, expired gaps, requests per poll."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.triggers.watcher import PaimonTableSnapshotTrigger

from table_engine import Catalog
from tests import airflow_env
from tests.fault_proxy import FaultProxy
from tests.s3_server import S3Server

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])


def batch(ids: list[int], dt: str) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA)


class FakeStateStore:
    """The two calls the trigger makes on Airflow's AssetStateStoreAccessors (which needs a triggerer's supervisor
    connection; the live-Airflow test uses the real one)."""

    def __init__(self, assets: int = 1) -> None:
        self.values: dict[str, Any] = {}
        self.assets = assets

    async def aget(self, key: str, default: Any = None) -> Any:
        if self.assets != 1:
            raise ValueError(f"Task has {self.assets} concrete inlets and outlets — use context[...] to specify which")
        return self.values.get(key, default)

    async def aset(self, key: str, value: Any) -> None:
        self.values[key] = value


class Counting(PaimonTableSnapshotTrigger):
    """The trigger, counting its polls (so a test can wait until it has its starting point)."""

    polls = 0

    def _poll(self, w: Any) -> Any:
        try:
            return super()._poll(w)
        finally:
            self.polls += 1


class Watch:
    """A trigger's ``run()`` in its own event loop (a thread), as in the triggerer; its event payloads collected."""

    def __init__(self, trigger: PaimonTableSnapshotTrigger, store: FakeStateStore | None = None) -> None:
        trigger.asset_state_store = store  # type: ignore[assignment] # what the triggerer injects
        self.trigger, self.store = trigger, store
        self.events: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        async def consume() -> None:
            async for event in self.trigger.run():
                self.events.append(dict(event.payload))

        self._task = self._loop.create_task(consume())
        try:
            self._loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        except BaseException as e:  # noqa: BLE001 - the test looks at it
            self.error = e
        finally:
            self._loop.close()

    def wait(self, condition: Callable[[], bool], timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"timed out; events {self.events}"
            time.sleep(0.02)

    def wait_events(self, count: int) -> list[int]:
        self.wait(lambda: len(self.events) >= count)
        return [e["snapshot_id"] for e in self.events]

    def polled(self, count: int = 1) -> None:
        """Wait until the trigger has polled ``count`` times (after one, it has its starting watermark)."""
        assert isinstance(self.trigger, Counting)
        trigger = self.trigger
        self.wait(lambda: trigger.polls >= count)

    def started(self) -> None:
        """Wait until the trigger has its starting watermark (it stores it at once)."""
        assert self.store is not None
        self.wait(lambda: bool(self.store and self.store.values))

    def stop(self) -> None:
        while self._task is None:
            time.sleep(0.01)
        self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(10)


@pytest.fixture
def watch() -> Iterator[Callable[..., Watch]]:
    started: list[Watch] = []

    def start(trigger: PaimonTableSnapshotTrigger, store: FakeStateStore | None = None) -> Watch:
        started.append(Watch(trigger, store))
        return started[-1]

    yield start
    for w in started:
        if w._thread.is_alive():
            w.stop()


def trigger(warehouse: str, poll_interval: float = 0.05, **kwargs: Any) -> PaimonTableSnapshotTrigger:
    return Counting(warehouse=warehouse, table="db.t", poll_interval=poll_interval, **kwargs)


def make_table(catalog: Catalog) -> Any:
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                options={"bucket": "1", "write-only": "true"})


def test_serializes_to_its_kwargs_and_rejects_an_unknown_kind() -> None:
    t = PaimonTableSnapshotTrigger(warehouse="/wh", table="db.t", commit_kinds="append, compact",
                                   partition={"dt": "a"})
    classpath, kwargs = t.serialize()
    assert classpath == "paimon_provider.triggers.watcher.PaimonTableSnapshotTrigger"
    assert kwargs["commit_kinds"] == ["APPEND", "COMPACT"] and kwargs["partition"] == {"dt": "a"}
    assert PaimonTableSnapshotTrigger(**kwargs).serialize() == (classpath, kwargs)
    with pytest.raises(ValueError, match="unknown commit kinds"):
        trigger("/wh", commit_kinds=["MERGE"])
    with pytest.raises(ValueError, match="give a paimon_conn_id"):
        PaimonTableSnapshotTrigger(table="db.t")


def test_one_event_per_snapshot_in_order_with_filters(catalog: Catalog, watch: Callable[..., Watch]) -> None:
    table = make_table(catalog)
    table.write(batch([0], "a"))  # before the trigger starts: no event
    every = watch(trigger(catalog.warehouse), FakeStateStore())
    compacts = watch(trigger(catalog.warehouse, commit_kinds=["COMPACT"]), FakeStateStore())
    of_b = watch(trigger(catalog.warehouse, partition="dt=b"), FakeStateStore())
    for w in (every, compacts, of_b):
        w.started()
    table.write(batch([1], "a"), properties={"source": "outside"})  # 2
    table.write(batch([2], "b"))  # 3
    table.write(batch([3], "a"))  # 4: three commits in one poll period still give three events
    assert table.maintenance.compact(full=True) == 5
    assert every.wait_events(4) == [2, 3, 4, 5]
    first = every.events[0]
    assert first["previous_snapshot_id"] == 1 and first["commit_kind"] == "APPEND" and first["table"] == "db.t"
    assert first["properties"] == {"source": "outside"} and first["delta_record_count"] == 1
    assert first["commit_user"] and first["time_millis"] > 0 and first["total_record_count"] == 2
    assert "properties" not in every.events[1] and every.events[3]["commit_kind"] == "COMPACT"
    assert compacts.wait_events(1) == [5]
    assert of_b.wait_events(2) == [3, 5]  # the full compaction rewrote partition b too
    time.sleep(0.3)
    assert (len(every.events), len(compacts.events), len(of_b.events)) == (4, 1, 2)


def test_waits_for_the_table_then_fires_from_its_first_snapshot(catalog: Catalog,
                                                                watch: Callable[..., Watch]) -> None:
    w = watch(trigger(catalog.warehouse))
    w.polled()  # it has seen no table
    make_table(catalog).write(batch([1], "a"))
    assert w.wait_events(1) == [1]
    assert w.events[0]["previous_snapshot_id"] is None


def test_restart_resumes_from_the_stored_watermark(catalog: Catalog, watch: Callable[..., Watch]) -> None:
    table = make_table(catalog)
    store = FakeStateStore()
    first = watch(trigger(catalog.warehouse), store)
    first.started()
    table.write(batch([1], "a"))
    assert first.wait_events(1) == [1]
    first.stop()
    table.write(batch([2], "a"))  # while no trigger runs
    table.write(batch([3], "a"))
    again = watch(trigger(catalog.warehouse), store)
    assert again.wait_events(2) == [2, 3]  # neither repeated nor skipped
    time.sleep(0.3)
    assert len(again.events) == 2
    assert list(store.values.values()) == [3]
    # without a store (Airflow 3.2, or several assets on one trigger) a trigger starts after the latest snapshot
    for several_assets in (None, FakeStateStore(2)):
        fallback = watch(trigger(catalog.warehouse), several_assets)
        fallback.polled()  # it starts after the latest snapshot
        sid = table.write(batch([9], "a"))
        assert fallback.wait_events(1) == [sid]


def test_snapshots_expired_between_polls_are_skipped_with_one_warning(
        catalog: Catalog, watch: Callable[..., Watch], capfd: pytest.CaptureFixture[str]) -> None:
    table = make_table(catalog)
    store = FakeStateStore()
    first = watch(trigger(catalog.warehouse), store)
    first.started()
    first.stop()
    for i in range(5):
        table.write(batch([i], "a"))  # 1..5
    table.expire_snapshots(retain_min=2, retain_max=2)  # 1..3 gone
    capfd.readouterr()
    again = watch(trigger(catalog.warehouse), store)
    assert again.wait_events(2) == [4, 5]
    time.sleep(0.2)
    out = capfd.readouterr()
    warnings = [line for line in (out.out + out.err).splitlines() if "expired before" in line]
    assert len(warnings) == 1 and "warning" in warnings[0], warnings  # Airflow's structured log of the trigger
    assert "snapshots 1..3 of db.t expired before they were seen: no event for them" in warnings[0]


def test_a_rollback_below_the_watermark_is_followed(catalog: Catalog, watch: Callable[..., Watch],
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    table = make_table(catalog)
    for i in range(3):
        table.write(batch([i], "a"))  # 1..3
    store = FakeStateStore()
    w = watch(trigger(catalog.warehouse), store)
    w.started()
    table.rollback_to(1)
    w.wait(lambda: list(store.values.values()) == [1])
    assert table.write(batch([7], "a")) == 2
    assert w.wait_events(1) == [2]
    out = capfd.readouterr()
    assert "snapshot 3 of db.t is gone and its newest is 1 (rolled back, or re-created): watching after 1" in out.out


def test_repeated_poll_errors_fail_the_trigger(tmp_path: Any, watch: Callable[..., Watch]) -> None:
    warehouse = tmp_path / "wh"
    Catalog(str(warehouse)).create_table("db.t", SCHEMA)
    snapshots = warehouse / "db.db" / "t" / "snapshot"
    snapshots.mkdir(parents=True)
    w = watch(trigger(str(warehouse)), FakeStateStore())
    w.started()
    (snapshots / "snapshot-1").write_text("{garbled")
    (snapshots / "LATEST").write_text("1")
    w.wait(lambda: w.error is not None or not w._thread.is_alive())
    assert w.error is not None and "3 polls in a row failed" in str(w.error) and "snapshot-1" in str(w.error)


@pytest.mark.timeout(300)
def test_on_s3_an_idle_poll_costs_one_get_and_one_head(monkeypatch: pytest.MonkeyPatch, s3_server: S3Server,
                                                        s3_warehouse: str, s3_options: dict[str, str],
                                                        watch: Callable[..., Watch]) -> None:
    with FaultProxy(s3_server.endpoint, seed=7) as proxy:
        # the trigger reads through the proxy with the connection's credentials (none in its kwargs)
        monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT",
                           airflow_env.paimon_s3_connection(s3_warehouse, proxy.endpoint))
        airflow_env.without_aws_environment(monkeypatch)
        table = make_table(Catalog(s3_warehouse, s3_options))
        table.write(batch([1], "a"))
        store = FakeStateStore()
        w = watch(trigger(s3_warehouse, poll_interval=0.2, paimon_conn_id="paimon_default"), store)
        w.started()
        table.write(batch([2], "b"))
        assert w.wait_events(1) == [2]
        proxy.reset()  # the poll that read snapshot 2 is over: its event was yielded after it
        time.sleep(2.0)
        seen = [(r.op, r.key.rsplit("/", 2)[-2:]) for r in list(proxy.requests)]  # one copy: polls go on
        polls = seen.count(("GET", ["snapshot", "LATEST"]))
        heads = seen.count(("HEAD", ["snapshot", "snapshot-3"]))
        assert polls >= 3, seen
        # every request of an idle poll: GET LATEST, HEAD of the next snapshot (one poll may straddle the window)
        assert len(seen) == polls + heads and abs(polls - heads) <= 1, seen
        table.write(batch([3], "a"))
        assert w.wait_events(2) == [2, 3]
