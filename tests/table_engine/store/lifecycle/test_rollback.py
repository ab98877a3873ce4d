"""Rollback to a snapshot or a tag: newer snapshots, tags and changelogs go, with the files only they used."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import SnapshotNotExistError, TableEngineError, TagNotExistError
from table_engine.format.changelog_file import list_changelog_ids
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import (
    assert_exact_files,
    assert_nothing_missing,
    capture,
    rows,
)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])


@pytest.fixture(params=["local", "s3"])
def catalog(request: pytest.FixtureRequest, warehouse: str) -> Catalog:
    """Every rollback test on a local warehouse and on the session's S3 server."""
    return request.getfixturevalue("s3_catalog") if request.param == "s3" else Catalog(warehouse)


def make(catalog: Catalog, **options: str) -> Table:
    return catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "2", "manifest.merge-min-count": "3", **options})


def fill(t: Table, n: int, contents: dict[int, list[tuple[object, ...]]], start: int = 0) -> None:
    for i in range(start, start + n):
        t.write(pa.table({"dt": [["a", "b"][i % 2]] * 3, "id": [i % 4, i % 4 + 1, 50 + i], "v": [i] * 3},
                         schema=SCHEMA))
        capture(t, contents)


def test_rollback_to_snapshot(catalog: Catalog) -> None:
    t = make(catalog)
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 4, contents)
    t.create_tag("early", 2)
    fill(t, 3, contents, start=4)
    t.maintenance.compact(full=True)
    capture(t, contents)
    t.create_tag("late", t.latest_snapshot_id())
    latest = t.latest_snapshot_id()
    assert latest is not None and latest > 5
    t.maintenance.reset_consumer("reader", latest)
    result = t.rollback_to(4)
    assert result.removed_snapshot_ids == list(range(5, latest + 1))
    assert result.removed_tags == ["late"] and result.deleted_files > 0
    assert t.latest_snapshot_id() == 4 and [s.id for s in t.snapshots()] == [1, 2, 3, 4]
    assert t.file_io.read_text(f"{t.path}/snapshot/LATEST") == "4"
    assert t.list_tags() == ["early"]
    assert rows(t.read()) == contents[4]
    assert rows(t.read(tag="early")) == contents[2]
    assert t.consumers() == {"reader": latest}  # consumers are left alone, as in Paimon
    assert_exact_files(t)
    # the table goes on from there
    sid = t.write(pa.table({"dt": ["a"], "id": [99], "v": [0]}, schema=SCHEMA))
    assert sid == 5 and len(t.read()) == len(contents[4]) + 1
    assert_exact_files(t)


def test_rollback_to_tag_whose_snapshot_expired(catalog: Catalog) -> None:
    t = make(catalog)
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 3, contents)
    t.create_tag("t2", 2)
    fill(t, 4, contents, start=3)
    t.create_tag("t6", 6)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert [s.id for s in t.snapshots()] == [7]
    result = t.rollback_to("t2")
    assert result.snapshot_id == 2 and result.removed_snapshot_ids == [7] and result.removed_tags == ["t6"]
    assert [s.id for s in t.snapshots()] == [2]  # the tag's snapshot file was restored
    assert t.earliest_snapshot_id() == 2 and t.latest_snapshot_id() == 2
    assert t.file_io.read_text(f"{t.path}/snapshot/EARLIEST") == "2"
    assert rows(t.read()) == contents[2] == rows(t.read(tag="t2"))
    assert_exact_files(t)
    assert t.write(pa.table({"dt": ["b"], "id": [7], "v": [7]}, schema=SCHEMA)) == 3


def test_rollback_to_expired_snapshot_id_held_by_tag(catalog: Catalog) -> None:
    t = make(catalog)
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 3, contents)
    t.create_tag("hold", 1)
    t.expire_snapshots(retain_min=1, time_retained=0)
    t.rollback_to(1)
    assert rows(t.read()) == contents[1]
    assert_exact_files(t)


def test_rollback_errors(catalog: Catalog) -> None:
    t = make(catalog)
    fill(t, 2, {})
    with pytest.raises(SnapshotNotExistError):
        t.rollback_to(9)
    with pytest.raises(TagNotExistError):
        t.rollback_to("missing")
    with pytest.raises(TableEngineError):
        t.rollback_to(1.5)  # type: ignore[arg-type]


def test_rollback_to_latest_is_a_no_op(catalog: Catalog) -> None:
    t = make(catalog)
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 3, contents)
    result = t.rollback_to(3)
    assert result.removed_snapshot_ids == [] and result.deleted_files == 0
    assert rows(t.read()) == contents[3]


def test_rollback_removes_newer_changelogs(catalog: Catalog) -> None:
    t = make(catalog, **{"changelog.num-retained.min": "20", "changelog.num-retained.max": "20"})
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 3, contents)
    t.create_tag("t1", 1)
    fill(t, 4, contents, start=3)
    t.expire_snapshots(retain_min=2, time_retained=0)
    assert list_changelog_ids(t.file_io, t.path) == [1, 2, 3, 4, 5]
    result = t.rollback_to("t1")
    # 2-5 are newer than the target; 1 is the target's own, which the restored snapshot supersedes (see
    # test_rollback_to_an_expired_tag_whose_changelog_outlived_it)
    assert result.removed_changelog_ids == [1, 2, 3, 4, 5]
    assert list_changelog_ids(t.file_io, t.path) == []
    assert rows(t.read()) == contents[1]
    assert_nothing_missing(t)


@pytest.mark.parametrize("decoupled_after", [False, True])
def test_rollback_to_an_expired_tag_whose_changelog_outlived_it(catalog: Catalog, decoupled_after: bool) -> None:
    """The tag's snapshot expired into a long-lived changelog of the same id; the rollback brings the snapshot back
    and that changelog goes (the snapshot uses all it references), so a later expiry of the snapshot, decoupled or
    not, deletes nothing a changelog still names (found by the lifecycle state machine)."""
    t = make(catalog, **{"changelog.num-retained.min": "6", "changelog.num-retained.max": "8"})
    t.write(pa.table({"dt": ["a"], "id": [0], "v": [0]}, schema=SCHEMA))
    t.maintenance.compact(full=True)
    t.create_tag("tag1", 1)
    assert t.expire_snapshots(retain_min=1, max_deletes=1, older_than_millis=2**62).changelogs_kept == [1]
    result = t.rollback_to("tag1")
    assert result.removed_changelog_ids == [1] and list_changelog_ids(t.file_io, t.path) == []
    assert_nothing_missing(t)
    t.maintenance.compact(full=True)
    t.delete_tag("tag1")
    if decoupled_after:
        t.expire_snapshots(retain_min=1, older_than_millis=2**62)  # snapshot 1 becomes changelog 1 again
        assert list_changelog_ids(t.file_io, t.path) == [1]
        assert_nothing_missing(t)
    t.expire_snapshots(retain_min=1, changelog_retain_min=1, changelog_retain_max=1, changelog_time_retained=0,
                       older_than_millis=2**62, max_deletes=10_000)
    assert_exact_files(t)
    assert rows(t.read()) == [("a", 0, 0)]


def test_a_tag_deleted_while_a_rollback_runs_does_not_fail_it(catalog: Catalog,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulation rollback-concurrent seeds 16575 and 24414: a rollback read the tags, then the only tag on an
    expired snapshot was deleted (with the files only it held), and the rollback failed with MissingFileError reading
    that tag's manifest lists. It now reads the tags standing then and goes on."""
    from table_engine.store.lifecycle.tags import TagManager

    t = make(catalog)
    contents: dict[int, list[tuple[object, ...]]] = {}
    fill(t, 2, contents)
    t.create_tag("old", 1)
    fill(t, 2, contents, start=2)
    t.create_tag("rb", 3)
    t.expire_snapshots(retain_min=2, time_retained=0)  # snapshot 1 is held by its tag only
    assert [s.id for s in t.snapshots()] == [3, 4]
    real = TagManager.tagged_snapshots
    deleted: list[str] = []

    def old_deleted_after_the_rollback_read_the_tags(self: TagManager) -> list:  # type: ignore[type-arg]
        out = real(self)
        if not deleted:
            deleted.append("old")
            monkeypatch.setattr(TagManager, "tagged_snapshots", real)
            t.delete_tag("old")  # its snapshot's own files go with it
            monkeypatch.setattr(TagManager, "tagged_snapshots", old_deleted_after_the_rollback_read_the_tags)
        return out

    monkeypatch.setattr(TagManager, "tagged_snapshots", old_deleted_after_the_rollback_read_the_tags)
    result = t.rollback_to("rb")
    monkeypatch.setattr(TagManager, "tagged_snapshots", real)
    assert deleted == ["old"] and result.snapshot_id == 3 and t.list_tags() == ["rb"]
    assert rows(t.read()) == contents[3]
    assert_nothing_missing(t)
