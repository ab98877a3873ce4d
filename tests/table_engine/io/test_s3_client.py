"""S3 after a fork: a child forked after the parent used S3 reads and commits through the helper, and the parent's
requests go on (against the session's real S3 API server)."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import uuid

import pyarrow as pa
import pytest
from obstore.exceptions import AlreadyExistsError

from table_engine import Catalog
from table_engine.io.s3_client import DirectClient, HelperClient, S3RequestError, _Helper, client_for
from table_engine.options.storage import S3Settings
from tests.s3_server import free_port

CHILD_SECONDS = 60


def _wait(pid: int, timeout: float) -> int:
    """The exit status of child ``pid``; killed (and the test failed) when it is not done within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child hung for {timeout} s")


def _in_child(work: object) -> int:
    """Run ``work()`` in a forked child; its exit code (0: it returned)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            signal.alarm(CHILD_SECONDS)  # never outlive the test, whatever happens
            work()  # type: ignore[operator]
            code = 0
        except BaseException as e:  # noqa: BLE001 - reported through the exit code
            print(f"child failed: {type(e).__name__}: {e}", flush=True)
        finally:
            os._exit(code)
    return _wait(pid, CHILD_SECONDS + 10)


def test_a_child_forked_after_use_reads_and_commits_and_the_parent_goes_on(s3_catalog: Catalog) -> None:
    t = s3_catalog.create_table("db.forked", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"]}))  # the parent's obstore runtime is running now

    def child() -> None:
        assert isinstance(t.file_io._client(t.path.split("/")[2]), HelperClient)  # type: ignore[attr-defined]
        assert sorted(r["id"] for r in t.read().to_pylist()) == [1, 2]
        assert s3_catalog.list_tables("db") == ["forked"]
        t.write(pa.table({"id": [3], "v": ["c"]}))  # a conditional create through the helper

    assert _in_child(child) == 0
    started = time.monotonic()
    assert t.latest_snapshot_id() == 2  # the child's commit, seen by the parent
    assert sorted(r["id"] for r in t.read().to_pylist()) == [1, 2, 3]
    t.write(pa.table({"id": [4], "v": ["d"]}))
    assert time.monotonic() - started < 30  # a hang would be killed by the test timeout long before
    assert isinstance(client_for(S3Settings(), "b"), DirectClient)


def test_the_helper_answers_as_obstore_does(s3_server: object, s3_bucket: str, s3_options: dict[str, str]) -> None:
    settings = S3Settings.of(s3_options)
    helper = HelperClient(settings, s3_bucket)
    root = uuid.uuid4().hex
    data = bytes(range(256)) * 40
    helper.put(f"{root}/f", data, create=True)
    with pytest.raises(AlreadyExistsError):
        helper.put(f"{root}/f", b"other", create=True)
    assert helper.get(f"{root}/f") == data and helper.head(f"{root}/f")["size"] == len(data)
    with pytest.raises(FileNotFoundError):
        helper.get(f"{root}/missing")
    with helper.open_reader(f"{root}/f", len(data), 1000) as f:  # ranged GETs as a reader seeks
        f.seek(5000)
        assert f.read(10) == data[5000:5010]
        f.seek(-6, os.SEEK_END)
        assert f.read() == data[-6:]
    for i in range(5):
        helper.put(f"{root}/d/k-{i}", b"x", create=False)
    assert [len(p) for p in helper.pages(f"{root}/d/", None, 2)] == [2, 2, 1]
    listing = helper.list_with_delimiter(f"{root}/")
    assert listing["common_prefixes"] == [f"{root}/d"] and len(listing["objects"]) == 1
    helper.delete([f"{root}/d/k-{i}" for i in range(5)])
    assert helper.list_with_delimiter(f"{root}/d/")["objects"] == []
    closed = free_port()  # nothing listens there: the store's error comes back, without the credentials
    wrong = HelperClient(dataclasses.replace(settings, endpoint=f"http://127.0.0.1:{closed}", max_retries=0,
                                             secret_key="secret-value-7c1e"), s3_bucket)
    with pytest.raises(S3RequestError) as e:
        wrong.get(f"{root}/f")
    assert str(closed) in str(e.value) and "secret-value-7c1e" not in str(e.value)


def test_the_helper_is_started_again_when_it_died(s3_bucket: str, s3_options: dict[str, str]) -> None:
    helper = HelperClient(S3Settings.of(s3_options), s3_bucket)
    helper.put("restart/f", b"1", create=False)
    process = _Helper.current().process
    process.kill()
    process.wait(timeout=10)
    assert helper.get("restart/f") == b"1"
    assert _Helper.current().process is not process
