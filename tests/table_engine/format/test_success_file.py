"""Paimon's ``_SUCCESS`` file: Jackson's pretty JSON byte for byte, Jackson's lenient reading, a re-mark keeps the
creation time."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError
from table_engine.format.success_file import SuccessFile, read_success_file, success_file_path, write_success_file
from table_engine.io.file_io import LocalFileIO

# what Paimon Java's SuccessFile.toJson() (JsonSerdeUtil: writerWithDefaultPrettyPrinter) writes
JAVA_TEXT = '{\n  "creationTime" : 1764201600000,\n  "modificationTime" : 1764205200000\n}'


def test_json_is_javas_and_parses_back() -> None:
    assert SuccessFile(1764201600000, 1764205200000).to_json() == JAVA_TEXT
    assert SuccessFile.from_json(JAVA_TEXT, "p") == SuccessFile(1764201600000, 1764205200000)
    # Jackson: unknown fields ignored, a missing long is 0
    assert SuccessFile.from_json('{"creationTime":1,"x":[1]}', "p") == SuccessFile(1, 0)
    assert SuccessFile.from_json("{}", "p") == SuccessFile(0, 0)
    for bad in ("", "[1]", "{", '{"creationTime": "x"}'):
        with pytest.raises(CorruptMetadataError, match="success file /t/dt=1/_SUCCESS is not Paimon's"):
            SuccessFile.from_json(bad, "/t/dt=1/_SUCCESS")


@given(st.integers(0, 2**62), st.integers(0, 2**62))
def test_round_trip(created: int, modified: int) -> None:
    done = SuccessFile(created, modified)
    assert SuccessFile.from_json(done.to_json(), "p") == done


def test_write_then_mark_again_keeps_the_creation_time(tmp_path: pathlib.Path) -> None:
    fio, part = LocalFileIO(), str(tmp_path / "t" / "dt=1")
    assert read_success_file(fio, part) is None
    assert write_success_file(fio, part, 10) == SuccessFile(10, 10)
    assert pathlib.Path(success_file_path(part)).read_text() == SuccessFile(10, 10).to_json()
    assert write_success_file(fio, part, 25) == SuccessFile(10, 25) == read_success_file(fio, part)
    assert sorted(p.name for p in (tmp_path / "t" / "dt=1").iterdir()) == ["_SUCCESS"]  # no temp file left
