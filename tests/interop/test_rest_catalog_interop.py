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
