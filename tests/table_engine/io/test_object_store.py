"""S3FileIO against the session's real S3 API server (moto on 127.0.0.1)."""

from __future__ import annotations

import pickle
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import StorageError, UnsupportedError
from table_engine.io.file_io import file_io_for, normalize_path
from table_engine.io.object_store import S3FileIO, split_s3_uri
from table_engine.options.storage import S3Settings, secret_keys
from tests.s3_server import SECRET_KEY, S3Server


@pytest.fixture
def fio(s3_options: dict[str, str]) -> S3FileIO:
    f = file_io_for("s3://x/y", s3_options)
    assert isinstance(f, S3FileIO)
    return f


@pytest.fixture
def root(s3_bucket: str) -> str:
    return f"s3://{s3_bucket}/{uuid.uuid4().hex}"


def test_conditional_create_is_exclusive(fio: S3FileIO, root: str) -> None:
    assert fio.write_if_absent(f"{root}/snapshot/snapshot-1", b"first")
    assert not fio.write_if_absent(f"{root}/snapshot/snapshot-1", b"second")
    assert fio.read_bytes(f"{root}/snapshot/snapshot-1") == b"first"
    with pytest.raises(FileExistsError):
        fio.write_bytes(f"{root}/snapshot/snapshot-1", b"third")
    fio.write_bytes(f"{root}/snapshot/snapshot-1", b"fourth", overwrite=True)
    assert fio.read_bytes(f"{root}/snapshot/snapshot-1") == b"fourth"


def test_a_retried_create_that_meets_its_own_bytes_is_ours(fio: S3FileIO, root: str) -> None:
    # what a client retry after a lost response sees: the key exists with exactly the bytes it sent
    fio.write_bytes(f"{root}/s", b"same")
    assert fio.write_if_absent(f"{root}/s", b"same")
    assert not fio.write_if_absent(f"{root}/s", b"other")


def test_directories_listing_and_delete(fio: S3FileIO, root: str) -> None:
    assert not fio.exists(root)
    assert fio.list_status(root) == []
    fio.write_bytes(f"{root}/a/x.parquet", b"12345")
    fio.write_bytes(f"{root}/a/b/y", b"1")
    fio.write_bytes(f"{root}/z", b"")
    assert fio.exists(root) and fio.exists(f"{root}/a") and fio.exists(f"{root}/a/x.parquet")
    listing = {st.path: (st.is_dir, st.size) for st in fio.list_status(root)}
    assert listing == {f"{root}/a": (True, 0), f"{root}/z": (False, 0)}
    assert {st.path for st in fio.walk(root)} == {f"{root}/a/x.parquet", f"{root}/a/b/y", f"{root}/z"}
    assert fio.file_size(f"{root}/a/x.parquet") == 5
    with pytest.raises(UnsupportedError):
        fio.delete(f"{root}/a")
    assert fio.delete(f"{root}/a", recursive=True)
    assert not fio.exists(f"{root}/a")
    assert fio.delete(f"{root}/z") and not fio.delete(f"{root}/z")
    with pytest.raises(FileNotFoundError):
        fio.read_bytes(f"{root}/z")


def test_mkdirs_makes_an_empty_directory_visible(fio: S3FileIO, root: str) -> None:
    fio.mkdirs(f"{root}/db.db")
    assert fio.exists(f"{root}/db.db")
    assert [st.path for st in fio.list_status(root)] == [f"{root}/db.db"]
    assert fio.list_status(f"{root}/db.db") == []


def test_listing_paginates_past_1000_keys(fio: S3FileIO, root: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda i: fio.write_bytes(f"{root}/many/f-{i:05d}", b"x"), range(1100)))
    assert len(fio.list_status(f"{root}/many")) == 1100
    assert len(list(fio.walk(root))) == 1100
    assert fio.delete(f"{root}/many", recursive=True)
    assert list(fio.walk(root)) == []


@pytest.mark.parametrize("rows", [10, 3_000_000])
def test_parquet_round_trip_small_and_in_ranged_parts(fio: S3FileIO, root: str, rows: int) -> None:
    table = pa.table({"id": pa.array(range(rows), pa.int64())})
    with fio.open_output(f"{root}/t.parquet") as out:
        pq.write_table(table, out, compression="none")
    assert pq.read_table(fio.open_input(f"{root}/t.parquet")).equals(table)


def test_pickles_without_connections(fio: S3FileIO, root: str) -> None:
    fio.write_bytes(f"{root}/p", b"1")
    clone = pickle.loads(pickle.dumps(fio))
    assert clone.read_bytes(f"{root}/p") == b"1"


def test_secrets_stay_out_of_reprs_and_errors(s3_server: S3Server, root: str) -> None:
    fio = file_io_for(root, {**s3_server.options(), "s3.attempts.maximum": "0"})
    assert SECRET_KEY not in repr(fio) and SECRET_KEY not in repr(S3Settings.of(s3_server.options()))
    denied = file_io_for(root, {**s3_server.options("http://127.0.0.1:9"), "s3.attempts.maximum": "0",
                                "s3.retry.timeout": "1 s"})
    with pytest.raises(StorageError) as e:
        denied.read_bytes(f"{root}/x")
    assert SECRET_KEY not in str(e.value) and "\n" not in str(e.value)
    assert {"s3.secret-key", "fs.s3.accessKeySecret"} <= secret_keys()


def test_pypaimon_aliases_and_scheme_aliases() -> None:
    s = S3Settings.of({"fs.s3.endpoint": "http://h:1", "fs.s3.accessKeyId": "a", "fs.s3.accessKeySecret": "b",
                       "fs.s3.region": "r", "fs.s3.securityToken": "t"})
    assert (s.endpoint, s.access_key, s.secret_key, s.region, s.session_token) == ("http://h:1", "a", "b", "r", "t")
    assert normalize_path("s3a://b/w/") == "s3://b/w" and split_s3_uri("s3a://b/k/x") == ("b", "k/x")
    with pytest.raises(UnsupportedError, match="gs"):
        file_io_for("gs://b/w")


def test_a_table_on_s3(s3_catalog: Catalog) -> None:
    t = s3_catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"],
                                options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    t.write(pa.table({"id": [2], "v": ["B"]}))
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}]
    assert s3_catalog.list_databases() == ["db"] and s3_catalog.list_tables("db") == ["t"]
    t.maintenance.compact(full=True)
    assert t.latest_snapshot_id() == 3


class _BreaksOnce:
    """Wraps an obstore function: its first ``times`` calls fail as a reused connection the store had closed does
    (the client does not always send those again), later calls go through. A fault the loopback proxy cannot cause:
    the client retries the ones it can (tests/table_engine/store/committing/test_s3_faults.py)."""

    def __init__(self, fn: Any, times: int = 1, after: int = 0) -> None:
        self.fn, self.times, self.after, self.calls = fn, times, after, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            raise RuntimeError("Generic S3 error: Error performing HEAD http://127.0.0.1/b/k in 471µs - HTTP error: "
                               "error sending request")
        return self.fn(*args, **kwargs)


def test_reads_are_sent_again_after_a_broken_connection(fio: S3FileIO, root: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import obstore

    for i in range(5):
        fio.write_bytes(f"{root}/d/f-{i}", b"x" * i)
    fio._written.clear()  # sizes are asked of the store
    for name in ("head", "get", "list_with_delimiter"):
        monkeypatch.setattr(obstore, name, _BreaksOnce(getattr(obstore, name)))
    assert fio.file_size(f"{root}/d/f-3") == 3
    assert fio.read_bytes(f"{root}/d/f-4") == b"xxxx"
    with fio.open_input(f"{root}/d/f-2") as f:
        assert f.read() == b"xx"
    assert len(fio.list_status(f"{root}/d")) == 5
    # a failure that is not a broken connection is not repeated: one StorageError
    monkeypatch.setattr(obstore, "get", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("403 Forbidden")))
    with pytest.raises(StorageError, match=r"^reading .*f-4 failed: 403 Forbidden$"):
        fio.read_bytes(f"{root}/d/f-4")


def test_a_listing_broken_part_way_resumes_after_its_last_key(fio: S3FileIO, root: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import obstore

    for i in range(7):
        fio.write_bytes(f"{root}/w/f-{i}", b"x")
    real = obstore.list
    calls: list[str | None] = []

    def breaking(store: Any, prefix: str | None = None, offset: str | None = None, chunk_size: int = 50) -> Any:
        calls.append(offset)
        pages = real(store, prefix=prefix, offset=offset, chunk_size=3)
        for n, page in enumerate(pages):
            if len(calls) == 1 and n == 1:
                raise RuntimeError("HTTP error: connection reset by peer")
            yield page

    monkeypatch.setattr(obstore, "list", breaking)
    names = [st.path.rsplit("/", 1)[-1] for st in fio.walk(f"{root}/w")]
    assert names == [f"f-{i}" for i in range(7)]  # each once, in order
    assert calls[0] is None and calls[1] is not None and calls[1].endswith("w/f-2")
