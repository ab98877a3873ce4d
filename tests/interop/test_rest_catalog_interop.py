"""Conformance of ``tests/rest_server.py`` with Paimon's REST protocol, proven by pypaimon 2.1.0's own client.

pypaimon's ``RESTCatalog`` (in its own venv, a subprocess) creates a database and a table on the test server, commits
two batches (snapshot commits go through ``POST .../commit``; data files go to the ``path`` the server handed out),
then reads the rows back. The server side is checked too: the snapshot files it wrote and the calls it received.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.interop.pypaimon_env import ensure_pypaimon_python
from tests.rest_server import RestCatalogServer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

DRIVER = Path(__file__).resolve().parent / "pypaimon_rest_driver.py"


def _run_pypaimon(spec: dict) -> dict:
    proc = subprocess.run([ensure_pypaimon_python(), str(DRIVER), json.dumps(spec)], capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@ ")][-1]
    return dict(json.loads(line[len("@@RESULT@@ "):]))


@pytest.mark.parametrize(("primary_keys", "partition_keys", "data_token"),
                         [(["id"], [], False), ([], ["dt"], False), (["id"], [], True)],
                         ids=["primary-key", "append-partitioned", "primary-key-data-token"])
def test_pypaimon_rest_catalog_round_trip(tmp_path: Path, primary_keys: list[str], partition_keys: list[str],
                                          data_token: bool) -> None:
    defaults = {"data-token.enabled": "true"} if data_token else {}
    with RestCatalogServer(tmp_path / "warehouse", defaults=defaults) as server:
        result = _run_pypaimon({"options": server.options(), "table": "db1.t1", "primary_keys": primary_keys,
                                "partition_keys": partition_keys})
        if primary_keys:
            expected = [[1, "a", "d1"], [2, "B", "d1"], [3, "c", "d2"], [4, "d", "d2"]]
        else:
            expected = sorted([[1, "a", "d1"], [2, "b", "d1"], [3, "c", "d2"], [2, "B", "d1"], [4, "d", "d2"]])
        assert result["rows"] == expected
        assert result["databases"] == ["db1"]
        assert result["tables"] == ["t1"]
        assert result["snapshot_id"] == 2
        table_dir = tmp_path / "warehouse" / "db1.db" / "t1"
        assert (table_dir / "snapshot" / "LATEST").read_text() == "2"
        assert (table_dir / "schema" / "schema-0").exists()
        commits = [p for m, p in server.requests if m == "POST" and p.endswith("/commit")]
        assert commits == ["/v1/paimon/databases/db1/tables/t1/commit"] * 2
        token_calls = [p for m, p in server.requests if m == "GET" and p.endswith("/token")]
        assert bool(token_calls) == data_token  # the server's default turned vended credentials on


PK_ROWS = [[1, "a", "d1"], [2, "B", "d1"], [3, "c", "d2"], [4, "d", "d2"]]


def test_pypaimon_writes_the_engine_reads_compacts_and_expires(tmp_path: Path) -> None:
    """pypaimon's REST client creates and writes a table; the engine (metastore=rest, same server) reads it,
    compacts it fully and expires the older snapshots, all its commits through the server; pypaimon reads it again."""
    from table_engine.catalog import create_catalog

    with RestCatalogServer(tmp_path / "warehouse") as server:
        _run_pypaimon({"options": server.options(), "table": "db1.t1", "primary_keys": ["id"], "partition_keys": []})
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.get_table("db1.t1")
            assert sorted([r["id"], r["name"], r["dt"]] for r in table.read().to_pylist()) == PK_ROWS
            table.maintenance.compact(full=True)
            table.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
            assert (table.earliest_snapshot_id(), table.latest_snapshot_id()) == (3, 3)
        assert len([p for m, p in server.requests if m == "POST" and p.endswith("/commit")]) == 3
        result = _run_pypaimon({"options": server.options(), "table": "db1.t1", "read_only": True})
        assert result["rows"] == PK_ROWS
        assert result["snapshot_id"] == 3


@pytest.mark.parametrize("data_token", [False, True], ids=["plain", "data-token"])
def test_the_engine_writes_pypaimon_reads(tmp_path: Path, data_token: bool) -> None:
    """The engine creates (the server writes schema-0) and writes a primary-key table through the REST catalog,
    then compacts and expires it; pypaimon's REST client reads the same rows at the same snapshot."""
    import pyarrow as pa

    from table_engine.catalog import create_catalog

    defaults = {"data-token.enabled": "true"} if data_token else {}
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
    with RestCatalogServer(tmp_path / "warehouse", defaults=defaults) as server:
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.create_table("db2.t", schema, primary_keys=["id"], partition_keys=[],
                                         options={"bucket": "2"})
            table.write(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "dt": ["d1", "d1", "d2"]}, schema=schema))
            table.write(pa.table({"id": [2, 4], "name": ["B", "d"], "dt": ["d1", "d2"]}, schema=schema))
            result = _run_pypaimon({"options": server.options(), "table": "db2.t", "read_only": True})
            assert result["rows"] == PK_ROWS and result["snapshot_id"] == 2
            table.maintenance.compact(full=True)
            table.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
        result = _run_pypaimon({"options": server.options(), "table": "db2.t", "read_only": True})
        assert result["rows"] == PK_ROWS
        assert result["snapshot_id"] == 3
        assert result["databases"] == ["db2"] and result["tables"] == ["t"]


def test_the_engine_alters_pypaimon_reads_the_new_schema(tmp_path: Path) -> None:
    """The engine alters a table through the server (add, widen, rename, set an option) between two writes;
    pypaimon's REST client reads the new schema and the rows written before and after it, and so does the engine."""
    import pyarrow as pa

    from table_engine.catalog import create_catalog
    from table_engine.schema_change import AddColumn, RenameColumn, SetOption, UpdateColumnType

    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("dt", pa.string())])
    with RestCatalogServer(tmp_path / "warehouse") as server:
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.create_table("db3.t", schema, primary_keys=["id"], options={"bucket": "1"})
            table.write(pa.table({"id": [1, 2], "name": ["a", "b"], "dt": ["d1", "d1"]}, schema=schema))
            table.alter(AddColumn("score", pa.float64()), UpdateColumnType("name", pa.string()),
                        RenameColumn("dt", "day"), SetOption("snapshot.num-retained.min", "5"))
            table.write(pa.table({"id": pa.array([2, 3], pa.int32()), "name": ["B", "c"], "day": ["d2", "d2"],
                                  "score": [0.5, 1.5]}))
            engine_rows = sorted(catalog.get_table("db3.t").read().to_pylist(), key=lambda r: r["id"])
        result = _run_pypaimon({"options": server.options(), "table": "db3.t", "read_only": True})
        expected = [{"id": 1, "name": "a", "day": "d1", "score": None},
                    {"id": 2, "name": "B", "day": "d2", "score": 0.5},
                    {"id": 3, "name": "c", "day": "d2", "score": 1.5}]
        assert engine_rows == expected
        assert result["all_rows"] == expected
        assert result["schema_id"] == 1
        assert [f[1] for f in result["fields"]] == ["id", "name", "day", "score"]
        assert [f[0] for f in result["fields"]] == [0, 1, 2, 3]  # field ids kept; the new column got the next
        assert [m for m, p in server.requests if p == "/v1/paimon/databases/db3/tables/t"].count("POST") == 1
