"""``lock.enabled``: each snapshot commit (and ``create_table``'s schema commit) runs inside the metastore's lock on
the table, as Paimon Java's ``RenamingSnapshotCommit`` runs inside its ``CatalogLock``; without it nothing changes."""

from __future__ import annotations

import pathlib
import threading

import pyarrow as pa

from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.io.file_io import LocalFileIO
from tests.table_engine.catalog.fake_metastore import FakeMetastore

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
THREADS, COMMITS = 2, 4


class RecordingFileIO(LocalFileIO):
    """Records, in the fake's events, each snapshot and schema created, and whether this thread held the lock."""

    def __init__(self, fake: FakeMetastore) -> None:
        super().__init__()
        self.fake = fake

    def write_if_absent(self, path: str, data: bytes) -> bool:
        name = path.rsplit("/", 2)
        if name[-2] in ("snapshot", "schema") and name[-1].startswith(("snapshot-", "schema-")):
            self.fake.events.append(("create", name[-1], str(self.fake.held_by_me("db", "t"))))
        return super().write_if_absent(path, data)


def _catalog(tmp_path: pathlib.Path, fake: FakeMetastore, lock: str | None) -> MetastoreCatalog:
    options = {"metastore": "hive"} | ({"lock.enabled": lock} if lock is not None else {})
    return MetastoreCatalog(str(tmp_path), options, fake, RecordingFileIO(fake))


def test_every_snapshot_commit_runs_inside_the_lock(tmp_path: pathlib.Path) -> None:
    fake = FakeMetastore()
    catalog = _catalog(tmp_path, fake, "true")
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    assert fake.events == [("acquire", "db", "t"), ("create", "schema-0", "True"), ("release", "db", "t")]
    fake.events.clear()
    failures: list[BaseException] = []

    def commit(worker: int) -> None:
        try:
            table = catalog.get_table("db.t")
            for i in range(COMMITS):
                table.write(pa.table({"id": [worker * 100 + i], "v": [f"{worker}-{i}"]}))
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(e)

    threads = [threading.Thread(target=commit, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures

    table = catalog.get_table("db.t")
    assert [s.id for s in table.snapshots()] == list(range(1, THREADS * COMMITS + 1))  # every commit landed
    assert sorted(table.read().column("id").to_pylist()) == sorted(w * 100 + i for w in range(THREADS)
                                                                  for i in range(COMMITS))
    creates = [e for e in fake.events if e[0] == "create"]
    assert creates and all(held == "True" for _, _, held in creates)  # each create inside the lock, by its thread
    depth = 0
    for event in fake.events:  # acquire and release alternate: one holder at a time
        depth += {"acquire": 1, "release": -1}.get(event[0], 0)
        assert depth in (0, 1)
    assert depth == 0
    published = {name for _, name, _ in creates}
    assert published == {f"snapshot-{i}" for i in range(1, THREADS * COMMITS + 1)}


def test_branches_and_copies_share_the_lock(tmp_path: pathlib.Path) -> None:
    fake = FakeMetastore()
    table = _catalog(tmp_path, fake, "true").create_table("db.t", SCHEMA)
    table.write(pa.table({"id": [1], "v": ["a"]}))
    table.create_tag("t1")
    fake.events.clear()
    table.create_branch("b1", "t1").write(pa.table({"id": [2], "v": ["b"]}))
    table.copy({"write-only": "true"}).write(pa.table({"id": [3], "v": ["c"]}))
    assert [e[0] for e in fake.events if e[0] != "create"] == ["acquire", "release"] * 2


def test_without_lock_enabled_there_is_no_lock(tmp_path: pathlib.Path) -> None:
    for lock in (None, "false"):
        fake = FakeMetastore()
        table = _catalog(tmp_path / str(lock), fake, lock).create_table("db.t", SCHEMA)
        table.write(pa.table({"id": [1], "v": ["a"]}))
        assert table.store.commit_lock is None and table.hooks.commit_lock is None
        assert [e[0] for e in fake.events] == ["create", "create"]  # schema-0, snapshot-1: no acquire, no release


def test_a_pickled_table_leaves_the_lock_behind_and_refuses_to_commit(tmp_path: pathlib.Path) -> None:
    """A Spark task gets a pickled copy: the catalog's client stays on the driver; the copy reads, writes files,
    and refuses to commit (one error) rather than commit without the lock."""
    import pickle

    import pytest

    from table_engine.catalog.metastore_catalog import MetastoreCatalog as Catalog
    from table_engine.errors import UnsupportedError
    from table_engine.io.file_io import LocalFileIO as FileIO

    fake = FakeMetastore()
    catalog = Catalog(str(tmp_path), {"metastore": "hive", "lock.enabled": "true"}, fake, FileIO())
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    copy = pickle.loads(pickle.dumps(table))
    assert copy.read().to_pylist() == [{"id": 1, "v": "a"}]
    with pytest.raises(UnsupportedError, match="has no catalog"):
        copy.write(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))
    assert table.latest_snapshot_id() == 1 and table.read().num_rows == 1
    table.write(pa.table({"id": [2], "v": ["b"]}, schema=SCHEMA))  # the driver's table still commits
    assert table.latest_snapshot_id() == 2
