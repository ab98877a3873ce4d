"""Format tables between this engine and pypaimon 2.1.0 (its ``FormatTable``, driven in a subprocess by
pypaimon_format_driver.py): each reads the directory the other wrote. Parquet only: pypaimon writes the partition
columns into its files and a csv header by default, which Paimon Java and this engine do not (a file's columns are
positional there)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from table_engine.format_table import FormatTable
from table_engine.io.file_io import LocalFileIO
from tests.interop.pypaimon_env import ensure_pypaimon_python

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).with_name("pypaimon_format_driver.py")
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64()), ("pt", pa.string())])
DATA = pa.table({"id": [1, 2, 3, 4], "name": ["a", None, "c", "d"], "amount": [1.5, None, -2.0, 0.0],
                 "pt": ["x", "y", "x", "y"]}, schema=SCHEMA)


def _ipc(path: Path, table: pa.Table) -> str:
    with pa.OSFile(str(path), "wb") as f, ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return str(path)


def _drive(spec: dict[str, object]) -> dict[str, object]:
    proc = subprocess.run([ensure_pypaimon_python(), str(DRIVER), json.dumps(spec)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("@@RESULT@@ ")][-1]
    return dict(json.loads(line[len("@@RESULT@@ "):]))


def test_engine_and_pypaimon_read_each_others_format_table(tmp_path: Path) -> None:
    schema_file = _ipc(tmp_path / "schema.arrow", DATA.slice(0, 0))
    base = {"format": "parquet", "schema": schema_file, "partition_keys": ["pt"]}
    # the engine writes, pypaimon reads
    ours = tmp_path / "ours"
    FormatTable(LocalFileIO(), str(ours), SCHEMA, ["pt"], {"file.format": "parquet"}).write(DATA)
    _drive({**base, "cmd": "read", "location": str(ours), "out": str(tmp_path / "read.arrow")})
    with pa.OSFile(str(tmp_path / "read.arrow"), "rb") as f:
        theirs_read = ipc.open_file(f).read_all()
    assert sorted(theirs_read.select(SCHEMA.names).to_pylist(), key=lambda r: r["id"]) == DATA.to_pylist()
    # pypaimon writes, the engine reads
    theirs = tmp_path / "theirs"
    _drive({**base, "cmd": "write", "location": str(theirs), "data": _ipc(tmp_path / "in.arrow", DATA)})
    assert sorted(p.name for p in theirs.iterdir()) == ["pt=x", "pt=y"]
    back = FormatTable(LocalFileIO(), str(theirs), SCHEMA, ["pt"], {"file.format": "parquet"}).read()
    assert back.sort_by("id").equals(DATA)
