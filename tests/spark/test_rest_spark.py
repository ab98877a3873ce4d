"""Spark on a REST catalog's table (issue 39): the ``paimon`` data source writes and reads a table of
``tests/rest_server.py`` whose files are on the session's S3 server (moto) and reached only with the credentials the
REST server vends (``data-token.enabled``). The driver fetches them (``GET .../token``); executors get them inside the
pickled table (:class:`~table_engine.catalog.rest.token_file_io.TokenFileIO`), never through Spark's conf, a command
line or a log record."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from table_engine.catalog import create_catalog
from table_engine.io.object_store import S3FileIO
from table_engine.options.storage import S3Settings
from tests.rest_server import TOKEN, RestCatalogServer

pytestmark = pytest.mark.spark


def _jvm_cmdlines(spark: Any) -> list[str]:
    """The command lines of the driver JVM's launcher and its children (``/proc``; empty where unreachable)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None:
        return []
    pids = [proc.pid]
    try:
        pids += [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    except OSError:
        pass
    out = []
    for pid in pids:
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return out


@pytest.mark.timeout(600)
def test_vended_credentials_reach_executors_and_nowhere_else(
        spark: Any, tmp_path: Path, s3_options: dict[str, str], s3_warehouse: str,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = s3_options["s3.secret-key"]
    vended = {"fs.s3.endpoint": s3_options["s3.endpoint"], "fs.s3.accessKeyId": s3_options["s3.access-key"],
              "fs.s3.accessKeySecret": secret, "fs.s3.region": s3_options["s3.region"],
              "fs.s3.path.style.access": "true"}
    storage = S3FileIO(S3Settings.of(s3_options))
    with RestCatalogServer(tmp_path / "unused", storage=storage, root=s3_warehouse, vended=vended,
                           defaults={"data-token.enabled": "true"}) as server:
        options = server.options()  # metastore, uri, warehouse (the catalog's name), token.provider, token: no S3 key
        df = spark.createDataFrame([(1, "a", "d1"), (2, "b", "d1"), (3, "c", "d2")], "id long, v string, dt string")
        (df.write.format("paimon").mode("append").options(**options).option("partition", "dt")
         .option("primary-key", "id,dt").option("bucket", "1").save("db.t"))
        (spark.createDataFrame([(2, "B", "d1")], "id long, v string, dt string").write.format("paimon")
         .mode("append").options(**options).save("db.t"))
        read = spark.read.format("paimon").options(**options).load("db.t")
        assert sorted(tuple(r) for r in read.collect()) == [(1, "a", "d1"), (2, "B", "d1"), (3, "c", "d2")]

        commits = [p for m, p in server.requests if m == "POST" and p.endswith("/commit")]
        assert commits == ["/v1/paimon/databases/db/tables/t/commit"] * 2  # the driver committed through the server
        assert any(p.endswith("/token") for _, p in server.requests)       # with the credentials the server vended
        with create_catalog(server.warehouse, options) as catalog:
            table = catalog.get_table("db.t")
            assert table.path.startswith(s3_warehouse) and table.latest_snapshot_id() == 2

    conf = [str(v) for _, v in spark.sparkContext.getConf().getAll()]
    cmdlines = _jvm_cmdlines(spark)
    assert cmdlines  # the driver JVM's launcher is reachable here (local mode)
    for value in (secret, TOKEN):
        assert not any(value in v for v in conf)
        assert not any(value in line for line in cmdlines)
    assert secret not in caplog.text  # the vended secret: in no record at all
    # the bearer token the user gave as a data source option: py4j's own DEBUG records show the driver's calls
    # (``.option("token", ...)``); no other record carries it
    assert not any(TOKEN in r.getMessage() for r in caplog.records if not r.name.startswith("py4j"))
