"""Tag files: Paimon's Jackson JSON (tagCreateTime as a LocalDateTime array, tagTimeRetained as decimal seconds)."""

from __future__ import annotations

import datetime
import json

import pytest

from table_engine.errors import CorruptMetadataError
from table_engine.format.changelog_file import list_changelog_ids, read_changelog, write_changelog
from table_engine.format.snapshot import CommitKind, Snapshot
from table_engine.format.tag_file import Tag, list_tag_names, read_tag, tag_path
from table_engine.io.file_io import LocalFileIO

# A tag file as Java Paimon writes it (Jackson's pretty printer, TagTest#testFromSnapshotAndTagTtl)
JAVA_TAG = """{
  "version" : 3,
  "id" : 7,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-a-0",
  "deltaManifestList" : "manifest-list-a-1",
  "commitUser" : "u",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "APPEND",
  "timeMillis" : 1000,
  "totalRecordCount" : 5,
  "deltaRecordCount" : 5,
  "tagCreateTime" : [ 1969, 1, 1, 0, 0, 0, 123456789 ],
  "tagTimeRetained" : 5.000000000
}"""


def snapshot(sid: int = 7) -> Snapshot:
    return Snapshot(id=sid, schema_id=0, base_manifest_list="manifest-list-a-0",
                    delta_manifest_list="manifest-list-a-1", commit_user="u", commit_identifier=1,
                    commit_kind=CommitKind.APPEND, time_millis=1000, total_record_count=5, delta_record_count=5,
                    uuid=f"uuid-{sid}")


def test_reads_java_tag_json() -> None:
    tag = Tag.from_json("t", JAVA_TAG, "tag-t")
    assert tag.snapshot.id == 7 and tag.snapshot.total_record_count == 5
    assert tag.create_time == datetime.datetime(1969, 1, 1, 0, 0, 0, 123456)
    assert tag.time_retained_ms == 5000
    assert "tagCreateTime" not in tag.snapshot.extra and "tagTimeRetained" not in tag.snapshot.extra
    assert tag.expires_at() == datetime.datetime(1969, 1, 1, 0, 0, 5, 123456)


def test_writes_java_shapes() -> None:
    tag = Tag("t", snapshot(), datetime.datetime(2024, 5, 6, 7, 8, 9, 10), 86_400_000)
    text = tag.to_json()
    assert '"tagTimeRetained": 86400.000000000' in text
    data = json.loads(text)
    assert data["tagCreateTime"] == [2024, 5, 6, 7, 8, 9, 10_000]
    assert Tag.from_json("t", text, "p") == tag


def test_datetime_array_omits_zero_seconds_and_nanos() -> None:
    text = Tag("t", snapshot(), datetime.datetime(2024, 5, 6, 7, 8), 1500).to_json()
    data = json.loads(text)
    assert data["tagCreateTime"] == [2024, 5, 6, 7, 8]
    assert '"tagTimeRetained": 1.500000000' in text


def test_tag_without_retention_is_a_plain_snapshot() -> None:
    text = Tag("t", snapshot()).to_json()
    assert text == snapshot().to_json()
    tag = Tag.from_json("t", text, "p")
    assert tag.create_time is None and tag.time_retained_ms is None and tag.expires_at() is None


def test_iso_forms_are_accepted() -> None:
    data = json.loads(snapshot().to_json())
    data["tagCreateTime"] = "2024-01-02T03:04:05"
    data["tagTimeRetained"] = "PT1H30M"
    tag = Tag.from_json("t", json.dumps(data), "p")
    assert tag.create_time == datetime.datetime(2024, 1, 2, 3, 4, 5)
    assert tag.time_retained_ms == 5_400_000


def test_garbled_retention_is_corrupt_metadata() -> None:
    data = json.loads(snapshot().to_json())
    data["tagTimeRetained"] = "forever"
    with pytest.raises(CorruptMetadataError, match="tag file"):
        Tag.from_json("t", json.dumps(data), "p")


def test_listing_and_reading(tmp_path: object) -> None:
    fio = LocalFileIO()
    root = str(tmp_path)
    assert read_tag(fio, root, "nope") is None
    fio.write_bytes(tag_path(root, "b"), Tag("b", snapshot()).to_json().encode())
    fio.write_bytes(tag_path(root, "a"), Tag("a", snapshot(3)).to_json().encode())
    fio.write_bytes(f"{root}/tag/.tag-c.tmp", b"junk")
    assert [n for n, _ in list_tag_names(fio, root)] == ["a", "b"]
    found = read_tag(fio, root, "a")
    assert found is not None and found.snapshot_id == 3


def test_changelog_files_round_trip(tmp_path: object) -> None:
    fio = LocalFileIO()
    root = str(tmp_path)
    assert list_changelog_ids(fio, root) == [] and read_changelog(fio, root, 1) is None
    write_changelog(fio, root, snapshot(4))
    write_changelog(fio, root, snapshot(2))
    assert list_changelog_ids(fio, root) == [2, 4]
    assert read_changelog(fio, root, 4) == snapshot(4)
    assert fio.read_text(f"{root}/changelog/LATEST") == "2"  # hint of the last write; readers verify it
