"""pypaimon 2.1.0 reads tables that our engine wrote to an S3 warehouse (the session's moto server), with pypaimon's
own storage options (``fs.s3.endpoint``, ``fs.s3.accessKeyId``, ``fs.s3.accessKeySecret``, ``fs.s3.region``, path-style
addressing), given through the driver's stdin."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient
from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])


def pypaimon_options(server: S3Server) -> dict[str, str]:
    return {"fs.s3.endpoint": server.endpoint, "fs.s3.accessKeyId": ACCESS_KEY, "fs.s3.accessKeySecret": SECRET_KEY,
            "fs.s3.region": REGION, "fs.s3.path.style.access": "true"}


@pytest.mark.timeout(900)
def test_pypaimon_reads_our_primary_key_and_append_tables_on_s3(pypaimon: PypaimonClient, s3_server: S3Server,
                                                                 s3_warehouse: str):
    # our side uses the same pypaimon keys (aliases of s3.*): one set of catalog options for both engines
    options = pypaimon_options(s3_server)
    catalog = Catalog(s3_warehouse, options)
    pk = catalog.create_table("db.users", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                              options={"bucket": "2"})
    pk.write(pa.table({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "dt": ["x", "x", "y", "y"]}, schema=SCHEMA))
    pk.write(pa.table({"id": [2, 3], "v": ["B", "C"], "dt": ["x", "y"]}, schema=SCHEMA))
    pk.write(pa.table({"id": [4], "v": ["d"], "dt": ["y"]}, schema=SCHEMA), row_kinds=["-D"])
    pk.create_tag("t1", 2)
    append = catalog.create_table("db.events", SCHEMA)
    for i in range(2):
        append.write(pa.table({"id": [i, i + 10], "v": ["e", "f"], "dt": ["x", "y"]}, schema=SCHEMA))

    def rows(table: pa.Table) -> list[tuple[object, ...]]:
        return sorted((r["id"], r["v"], r["dt"]) for r in table.to_pylist())

    assert rows(pypaimon.read(s3_warehouse, "db.users", catalog_options=options)) == [
        (1, "a", "x"), (2, "B", "x"), (3, "C", "y")]
    assert rows(pypaimon.read(s3_warehouse, "db.users", tag="t1", catalog_options=options)) == [
        (1, "a", "x"), (2, "B", "x"), (3, "C", "y"), (4, "d", "y")]
    assert rows(pypaimon.read(s3_warehouse, "db.events", catalog_options=options)) == rows(append.read())
    assert rows(pypaimon.read(s3_warehouse, "db.users", catalog_options=options)) == rows(pk.read())
