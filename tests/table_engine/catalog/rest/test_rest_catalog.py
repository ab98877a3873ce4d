"""The REST catalog (``metastore=rest``) end to end against ``tests/rest_server.py`` on 127.0.0.1: databases, tables,
views through the server; writes whose snapshots the server commits; races, refused and lost requests; vended
credentials (ADR 0045)."""

from __future__ import annotations

import logging
import os
import pickle
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine.catalog import create_catalog, is_secret, redacted
from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.catalog import RestCatalog
from table_engine.catalog.rest.table import RestTable
from table_engine.catalog.rest.token_file_io import TokenFileIO
from table_engine.errors import CatalogError, CommitOutcomeUnknownError, OptionError, UnsupportedError
from table_engine.format.snapshot import Snapshot
from table_engine.schema_change import SetOption
from table_engine.store.pins import PartitionDelta
from table_engine.table.hooks import TableHooks
from tests.rest_server import FAST_RETRY, TOKEN, RestCatalogServer

pytestmark = pytest.mark.timeout(300)

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])


def _rows(ids: list[int], names: list[str], dt: str = "d1") -> pa.Table:
    return pa.table({"id": ids, "name": names, "dt": [dt] * len(ids)}, schema=SCHEMA)


def open_catalog(server: RestCatalogServer, **extra: str) -> RestCatalog:
    """A REST catalog of ``server`` whose client retries fast (the tests' servers fail on purpose)."""
    options = server.options(**extra)
    return RestCatalog(server.warehouse, options, api=RestApi(options, retry=FAST_RETRY))


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[RestCatalogServer]:
    with RestCatalogServer(tmp_path / "warehouse") as server:
        yield server


def _files(root: str) -> dict[str, int]:
    """Every file below ``root`` with its size (directories left empty do not count)."""
    out = {}
    for base, _, names in os.walk(root):
        for n in names:
            out[os.path.join(base, n)] = os.path.getsize(os.path.join(base, n))
    return out


def _commits(server: RestCatalogServer) -> list[str]:
    return [p for m, p in server.requests if m == "POST" and p.endswith("/commit")]


def test_create_catalog_dispatches_rest(fresh: RestCatalogServer) -> None:
    with create_catalog(fresh.warehouse, fresh.options()) as catalog:
        assert isinstance(catalog, RestCatalog)
        assert catalog.warehouse == str(fresh.warehouse_dir)  # the server's override of `warehouse`
        assert TOKEN not in repr(catalog)
    with pytest.raises(OptionError, match="names another catalog"):
        create_catalog("other", fresh.options())


def test_databases_tables_and_rows_through_the_server(fresh: RestCatalogServer) -> None:
    with open_catalog(fresh) as catalog:
        catalog.create_database("db1", properties={"owner": "lake"})
        assert catalog.list_databases() == ["db1"]
        assert catalog.database_properties("db1") == {"owner": "lake"}
        table = catalog.create_table("db1.t1", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        assert isinstance(table, RestTable)
        assert ("POST", "/v1/paimon/databases/db1/tables") in fresh.requests
        assert table.path == str(fresh.warehouse_dir / "db1.db" / "t1")  # the server's path
        assert (fresh.warehouse_dir / "db1.db" / "t1" / "schema" / "schema-0").exists()  # written by the server
        assert catalog.list_tables("db1") == ["t1"] and catalog.table_exists("db1.t1")

        table.write(_rows([1, 2, 3], ["a", "b", "c"]))
        table.write(_rows([2, 4], ["B", "d"]))
        table.maintenance.compact(full=True)
        assert table.latest_snapshot_id() == 3
        assert len(_commits(fresh)) == 3  # every snapshot through the server's commit endpoint
        table.create_tag("t3")
        table.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
        assert table.earliest_snapshot_id() == 3

    with open_catalog(fresh) as other:  # a second client sees the same table and rows
        rows = sorted(other.get_table("db1.t1").read().to_pylist(), key=lambda r: r["id"])
        assert [(r["id"], r["name"]) for r in rows] == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
        assert other.get_table("db1.t1$snapshots").read().num_rows == 1
        assert fresh.list_tags("db1", "t1", {})["tags"] == ["t3"]
        other.drop_table("db1.t1")
        assert not other.table_exists("db1.t1")
        assert not (fresh.warehouse_dir / "db1.db" / "t1").exists()  # the server removed a table it managed
        other.drop_database("db1")
        assert other.list_databases() == []


def test_rename_and_views(fresh: RestCatalogServer) -> None:
    with open_catalog(fresh) as catalog:
        catalog.create_table("db1.t1", SCHEMA).write(_rows([1], ["a"]))
        catalog.rename_table("db1.t1", "db1.t2")
        assert catalog.list_tables("db1") == ["t2"]
        assert catalog.get_table("db1.t2").read().num_rows == 1
        catalog.create_view("db1.v1", pa.schema([("id", pa.int64())]), "SELECT id FROM db1.t2",
                            dialects={"spark": "SELECT id FROM db1.t2"}, comment="ids")
        view = catalog.get_view("db1.v1")
        assert (view.query, dict(view.dialects), view.comment) == ("SELECT id FROM db1.t2",
                                                                   {"spark": "SELECT id FROM db1.t2"}, "ids")
        assert catalog.list_views("db1") == ["v1"]
        with pytest.raises(Exception, match="view"):
            catalog.create_table("db1.v1", SCHEMA)
        catalog.drop_database("db1", cascade=True)
        assert catalog.list_databases() == []


def test_a_commit_that_loses_the_race_retries_and_lands(fresh: RestCatalogServer) -> None:
    with open_catalog(fresh) as catalog:
        catalog.create_table("db1.t", SCHEMA).write(_rows([1], ["a"]))
        a, b = catalog.get_table("db1.t"), catalog.get_table("db1.t")
        server_commit = a.hooks.snapshot_commit
        assert server_commit is not None
        answers: list[bool] = []

        def racing(snapshot: Snapshot, base: Snapshot | None, statistics: Sequence[PartitionDelta]) -> bool:
            if not answers:
                b.write(_rows([2], ["b"]))  # another writer commits on the same base first
            answers.append(server_commit(snapshot, base, statistics))
            return answers[-1]

        raced = RestTable(a.file_io, a.path, a.identifier, a.schema, hooks=TableHooks(snapshot_commit=racing))
        raced.write(_rows([3], ["c"]))
        assert answers == [False, True]  # the server refused the stale base; the retry landed
        assert sorted(r["id"] for r in catalog.get_table("db1.t").read().to_pylist()) == [1, 2, 3]
        assert a.latest_snapshot_id() == 3


def test_wrong_token_is_one_clear_error(fresh: RestCatalogServer) -> None:
    options = fresh.options(token="wrong-token-SECRET-123")
    with pytest.raises(CatalogError) as e:
        RestCatalog(fresh.warehouse, options, api=RestApi(options, retry=FAST_RETRY))
    text = str(e.value)
    assert "authentication failed" in text and "/v1/config" in text and "401" in text
    assert "wrong-token-SECRET-123" not in text


def test_expired_token_fails_the_commit_and_leaves_the_table_unchanged(
        fresh: RestCatalogServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with open_catalog(fresh) as catalog:
        table = catalog.create_table("db1.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
        table.write(_rows([1], ["a"]))
        before = _files(table.path)
        fresh.expire_token()
        with pytest.raises(CatalogError) as e:
            table.write(_rows([2], ["b"]))
        text = str(e.value)
        assert "/commit" in text and "401" in text and TOKEN not in text
        assert _files(table.path) == before
    assert TOKEN not in caplog.text


def test_server_down_fails_the_commit_and_leaves_the_table_unchanged(
        fresh: RestCatalogServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    catalog = open_catalog(fresh)
    table = catalog.create_table("db1.t", SCHEMA)
    table.write(_rows([1], ["a"]))
    before = _files(table.path)
    fresh.stop()
    with pytest.raises(CatalogError, match="cannot reach the REST catalog") as e:
        table.write(_rows([2], ["b"]))
    assert "/commit" in str(e.value) and TOKEN not in str(e.value)
    assert _files(table.path) == before
    assert TOKEN not in caplog.text
    catalog.close()


def test_a_commit_whose_answer_is_lost_is_unknown_and_keeps_its_files(fresh: RestCatalogServer) -> None:
    with open_catalog(fresh) as catalog:
        table = catalog.create_table("db1.t", SCHEMA)
        table.write(_rows([1], ["a"]))
        fresh.fail_next(1, 503)  # the commit's POST: a 503 is not retried (it may have been executed)
        with pytest.raises(CommitOutcomeUnknownError, match="outcome is unknown"):
            table.write(_rows([2], ["b"]))
        assert table.latest_snapshot_id() == 1
        data_files = [p for p in _files(table.path) if os.path.basename(p).startswith("data-")]
        assert len(data_files) == 2  # the second write's file is kept: the snapshot might have referenced it


def test_a_shipped_copy_refuses_what_goes_through_the_server(fresh: RestCatalogServer) -> None:
    with open_catalog(fresh) as catalog:
        table = catalog.create_table("db1.t", SCHEMA)
        table.write(_rows([1], ["a"]))
        before = _files(table.path)
        copy = pickle.loads(pickle.dumps(table))  # a Spark task's copy: no catalog to commit through
        assert copy.hooks.snapshot_commit is not None
        with pytest.raises(UnsupportedError, match="no catalog"):
            copy.hooks.snapshot_commit(table.latest_snapshot(), None, [])
        with pytest.raises(UnsupportedError, match="alter"):
            copy.alter(SetOption("snapshot.num-retained.min", "3"))
        with pytest.raises(UnsupportedError, match="rollback_to"):
            copy.rollback_to(1)
        assert _files(table.path) == before


def test_rest_options_are_registered_and_secret() -> None:
    for key in ("token", "dlf.access-key-secret", "dlf.security-token", "header.Authorization"):
        assert is_secret(key), key
    assert not is_secret("token.provider") and not is_secret("data-token.enabled")
    assert redacted({"token": "abc", "uri": "http://x"}) == {"token": "******", "uri": "http://x"}
    with pytest.raises(OptionError, match="belong to a jdbc, hive or rest"):
        create_catalog("/tmp/wh-unused", {"token": "abc"})
    with pytest.raises(OptionError, match="does not implement"):
        create_catalog("lake", {"metastore": "rest", "uri": "http://127.0.0.1:1", "dlf.token-loader": "ecs"})
    with pytest.raises(OptionError, match="token.provider"):
        create_catalog("lake", {"metastore": "rest", "uri": "http://127.0.0.1:1", "token.provider": "oauth"})


def test_vended_credentials_are_refreshed_before_they_expire(tmp_path: Path) -> None:
    # a 61 s token is replaced once less than a minute of it is left
    with RestCatalogServer(tmp_path / "warehouse", defaults={"data-token.enabled": "true"},
                           data_token_ttl_ms=61_000) as server, open_catalog(server) as catalog:
        table = catalog.create_table("db1.t", SCHEMA)
        assert isinstance(table.file_io, TokenFileIO)
        tokens = lambda: sum(1 for m, p in server.requests if m == "GET" and p.endswith("/token"))  # noqa: E731
        first = tokens()
        table.write(_rows([1], ["a"]))
        assert tokens() == first
        time.sleep(1.2)
        assert table.read().num_rows == 1
        assert tokens() == first + 1


def test_vended_credentials_write_a_table_on_s3(tmp_path: Path, s3_options: dict[str, str], s3_warehouse: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    from table_engine.io.object_store import S3FileIO
    from table_engine.options.storage import S3Settings

    caplog.set_level(logging.DEBUG)
    # the server reaches the bucket with its own credentials and vends them under Paimon's fs.s3.* names
    vended = {"fs.s3.endpoint": s3_options["s3.endpoint"], "fs.s3.accessKeyId": s3_options["s3.access-key"],
              "fs.s3.accessKeySecret": s3_options["s3.secret-key"], "fs.s3.region": s3_options["s3.region"],
              "fs.s3.path.style.access": "true"}
    secret = s3_options["s3.secret-key"]
    storage = S3FileIO(S3Settings.of(s3_options))
    with RestCatalogServer(tmp_path / "unused", storage=storage, root=s3_warehouse, vended=vended,
                           defaults={"data-token.enabled": "true"}) as server, open_catalog(server) as catalog:
        assert set(catalog.options) == {"metastore", "uri", "warehouse", "token.provider", "token"}  # no S3 keys
        table = catalog.create_table("db1.t", SCHEMA, partition_keys=["dt"])
        assert table.path == f"{s3_warehouse}/db1.db/t"
        table.write(_rows([1, 2], ["a", "b"], "d1"))
        table.write(_rows([3], ["c"], "d2"))
        assert isinstance(table.file_io, TokenFileIO)
        assert table.file_io.current().settings.secret_key == secret  # type: ignore[attr-defined]
        assert sorted(r["id"] for r in catalog.get_table("db1.t").read().to_pylist()) == [1, 2, 3]
        assert storage.is_file(f"{s3_warehouse}/db1.db/t/snapshot/snapshot-2")
        assert any(p.endswith("/token") for _, p in server.requests)
        copy = pickle.loads(pickle.dumps(table))  # a Spark task's copy carries the credentials, never shows them
        assert copy.read().num_rows == 3
        for text in (repr(table.file_io), repr(copy.file_io), repr(table), repr(catalog)):
            assert secret not in text and TOKEN not in text
    assert secret not in caplog.text and TOKEN not in caplog.text


def test_a_copy_whose_credentials_expired_says_so(tmp_path: Path) -> None:
    from table_engine.catalog.rest.messages import DataToken

    token = DataToken({"fs.s3.accessKeySecret": "secret-0b1e"}, int(time.time() * 1000) + 600_000)
    fio = TokenFileIO(str(tmp_path), {}, None, token)
    fio.write_bytes(str(tmp_path / "f"), b"x")
    assert "secret-0b1e" not in repr(fio)
    fio._token = DataToken(token.token, int(time.time() * 1000) - 1)  # as if the task outlived it
    with pytest.raises(UnsupportedError, match="expired in a copy"):
        fio.read_bytes(str(tmp_path / "f"))
