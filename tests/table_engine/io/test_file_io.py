"""LocalFileIO: atomic create-if-absent across processes, listing, deletes."""

from __future__ import annotations

import multiprocessing as mp
import pathlib

from table_engine.io import LocalFileIO, file_io_for, normalize_path
from table_engine.io.paths import escape_path_name, partition_value_string, unescape_path_name
from table_engine.types import parse_type


def _race(path: str, i: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    out.put((i, LocalFileIO().write_if_absent(path, f"writer {i}".encode())))


def test_write_if_absent_one_winner_across_processes(tmp_path: pathlib.Path) -> None:
    target = str(tmp_path / "snapshot" / "snapshot-1")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(target, i, q)) for i in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = dict(q.get() for _ in procs)
    winners = [i for i, won in results.items() if won]
    assert len(winners) == 1
    assert LocalFileIO().read_text(target) == f"writer {winners[0]}"
    assert [p.name for p in (tmp_path / "snapshot").iterdir()] == ["snapshot-1"]  # no temp files left


def test_basic_operations(tmp_path: pathlib.Path) -> None:
    fio = file_io_for(f"file://{tmp_path}")
    p = f"file://{tmp_path}/a/b/c.txt"
    fio.write_bytes(p, b"hello")
    assert fio.exists(p) and fio.read_bytes(p) == b"hello" and fio.file_size(p) == 5
    fio.write_bytes(p, b"bye", overwrite=True)
    assert fio.read_text(p) == "bye" and fio.read_if_exists(p) == b"bye"
    assert fio.read_if_exists(f"file://{tmp_path}/a/b/none.txt") is None
    assert [s.path.rsplit("/", 1)[-1] for s in fio.list_status(f"file://{tmp_path}/a/b")] == ["c.txt"]
    assert fio.delete(p) and not fio.delete(p)
    assert fio.list_status(f"{tmp_path}/missing") == []
    assert normalize_path(f"file://{tmp_path}/x/") == f"{tmp_path}/x"


def test_partition_names() -> None:
    assert escape_path_name("a/b=c d") == "a%2Fb%3Dc d"
    assert unescape_path_name("a%2Fb%3Dc d") == "a/b=c d"
    assert partition_value_string(None, parse_type("STRING")) == "__DEFAULT_PARTITION__"
    assert partition_value_string(True, parse_type("BOOLEAN")) == "true"


def test_listing_skips_entries_deleted_while_it_lists(tmp_path: pathlib.Path, monkeypatch) -> None:
    """A file deleted between the directory read and its stat (a snapshot a concurrent expiry removes) is simply
    not listed; the listing must not come back empty (a committer would then take the table for empty and publish
    snapshot 1 again)."""
    import os

    from table_engine.io import file_io as module

    for i in range(1, 6):
        (tmp_path / f"snapshot-{i}").write_text("{}")
    real_scandir = os.scandir

    class DeletingScandir:
        """os.scandir that really deletes snapshot-2 after the directory was read, before its entry is used."""

        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)

        def __enter__(self) -> DeletingScandir:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def __iter__(self):
            entries = list(self.inner)
            (tmp_path / "snapshot-2").unlink()
            return iter(entries)

    monkeypatch.setattr(module.os, "scandir", DeletingScandir)
    listed = sorted(s.path.rsplit("/", 1)[-1] for s in LocalFileIO().list_status(str(tmp_path)))
    assert listed == ["snapshot-1", "snapshot-3", "snapshot-4", "snapshot-5"]


def _vanishing_directory(monkeypatch, times: int) -> list[str]:
    """``os.makedirs`` as the file IO calls it, except that the first ``times`` calls for each directory really make
    it and then really remove it again, as a concurrent commit pin that made ``consumer/`` removes it when it is done
    (the window between another writer's ``makedirs`` and its create)."""
    import os

    from table_engine.io import file_io as module

    real = os.makedirs
    removed: list[str] = []

    def makedirs(name: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        real(name, mode, exist_ok)
        if removed.count(name) < times and not os.listdir(name):
            os.rmdir(name)
            removed.append(name)

    monkeypatch.setattr(module.os, "makedirs", makedirs)
    return removed


def test_a_create_survives_its_directory_vanishing_before_it(tmp_path: pathlib.Path, monkeypatch) -> None:
    """Process soak loop 32 (issue 35): a reader's consumer update failed with FileNotFoundError on its temp file,
    because a commit pin removed the empty ``consumer/`` directory it had made, between the reader's ``makedirs``
    and its create. Every way of creating a file makes the directory again and retries."""
    fio = LocalFileIO()
    removed = _vanishing_directory(monkeypatch, times=2)
    fio.write_bytes(str(tmp_path / "c1" / "consumer-a"), b"1", overwrite=True)
    assert (tmp_path / "c1" / "consumer-a").read_bytes() == b"1"
    fio.write_bytes(str(tmp_path / "c2" / "f"), b"2")
    assert fio.write_if_absent(str(tmp_path / "c3" / "snapshot-1"), b"3")
    with fio.open_output(str(tmp_path / "c4" / "data.parquet")) as out:
        out.write(b"4")
    (tmp_path / "src").write_bytes(b"5")
    fio.rename(str(tmp_path / "src"), str(tmp_path / "c5" / "dst"))
    assert [(tmp_path / p).read_bytes() for p in ("c2/f", "c3/snapshot-1", "c4/data.parquet", "c5/dst")] == \
        [b"2", b"3", b"4", b"5"]
    assert len(removed) == 2 * 5  # each create really lost its directory twice
    assert sorted(p.name for p in (tmp_path / "c3").iterdir()) == ["snapshot-1"]  # no temp file left


def test_a_create_gives_up_when_its_directory_keeps_vanishing(tmp_path: pathlib.Path, monkeypatch) -> None:
    import pytest

    from table_engine.io.file_io import DIRECTORY_ATTEMPTS

    _vanishing_directory(monkeypatch, times=DIRECTORY_ATTEMPTS)
    with pytest.raises(FileNotFoundError):
        LocalFileIO().write_bytes(str(tmp_path / "c" / "f"), b"x")
