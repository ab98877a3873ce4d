"""Tag files (``tag/tag-<name>``): a snapshot's JSON plus Paimon's optional tag TTL fields.

Paimon's ``Tag`` is a ``Snapshot`` with two extra, optional keys written by Jackson's JavaTimeModule:

* ``tagCreateTime``: a ``LocalDateTime`` as an array ``[year, month, day, hour, minute(, second(, nanos))]``
  (second and nanos are omitted when zero) -- wall-clock time of the creating process, no zone;
* ``tagTimeRetained``: a ``Duration`` as decimal seconds with nine fraction digits (``86400.000000000``).

Both are written only when the tag has a retention (Paimon keeps old readers working that way). Readers also
accept the ISO forms (``"2024-01-01T10:00:00"``, ``"PT24H"``).

Who created a tag is not part of Paimon's format; the engine records it (when told, see :attr:`Tag.creator`) as
the :data:`TAG_CREATOR` entry of the tag file's snapshot ``properties`` (a map every reader keeps or ignores), and
:attr:`Tag.snapshot` is the tagged snapshot without that entry (see ADR 0015).
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from table_engine import clock
from table_engine.errors import CorruptMetadataError
from table_engine.format.snapshot import Snapshot
from table_engine.io.file_io import FileIO

__all__ = [
    "TAG_CREATE_TIME",
    "TAG_CREATOR",
    "TAG_PREFIX",
    "TAG_TIME_RETAINED",
    "Tag",
    "list_tag_names",
    "read_tag",
    "tag_dir",
    "tag_path",
]

TAG_PREFIX = "tag-"
TAG_CREATE_TIME = "tagCreateTime"
TAG_TIME_RETAINED = "tagTimeRetained"
TAG_CREATOR = "tag.creator"
"""The snapshot ``properties`` key of a tag file that names who created the tag (the engine's, not Paimon's)."""
_TAG_KEYS = (TAG_CREATE_TIME, TAG_TIME_RETAINED)
_RETAINED_PLACEHOLDER = "\x00tag-time-retained\x00"
_ISO_DURATION = re.compile(
    r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)


def tag_dir(table_path: str) -> str:
    """``<table>/tag``."""
    return f"{table_path.rstrip('/')}/tag"


def tag_path(table_path: str, name: str) -> str:
    """``<table>/tag/tag-<name>``."""
    return f"{tag_dir(table_path)}/{TAG_PREFIX}{name}"


@dataclass(frozen=True)
class Tag:
    """A named snapshot. ``snapshot`` is the trimmed snapshot (no tag fields in ``extra``)."""

    name: str
    snapshot: Snapshot
    create_time: datetime.datetime | None = None
    """Local wall-clock creation time (naive), present only with a retention."""
    time_retained_ms: int | None = None
    creator: str | None = None
    """Who created the tag, if the creator said (a retry of the same job recognises its own tag by it)."""

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.id

    def expires_at(self) -> datetime.datetime | None:
        """Local time after which the tag is expired (None: kept until deleted)."""
        if self.create_time is None or self.time_retained_ms is None:
            return None
        return self.create_time + datetime.timedelta(milliseconds=self.time_retained_ms)

    def to_json(self) -> str:
        data: dict[str, Any] = json.loads(self.snapshot.to_json())
        if self.creator is not None:
            data["properties"] = {**data.get("properties", {}), TAG_CREATOR: self.creator}
        if self.time_retained_ms is None:
            return json.dumps(data, indent=2, ensure_ascii=False)
        create = self.create_time or clock.now_local()
        data[TAG_CREATE_TIME] = _datetime_to_array(create)
        data[TAG_TIME_RETAINED] = _RETAINED_PLACEHOLDER
        text = json.dumps(data, indent=2, ensure_ascii=False)
        return text.replace(json.dumps(_RETAINED_PLACEHOLDER), _duration_seconds(self.time_retained_ms))

    @staticmethod
    def from_json(name: str, text: str | bytes, path: str) -> Tag:
        snapshot = Snapshot.from_json(text, path)
        extra = dict(snapshot.extra)
        raw_create = extra.pop(TAG_CREATE_TIME, None)
        extra.pop(TAG_TIME_RETAINED, None)
        try:
            data = json.loads(text, parse_float=Decimal)
            create = None if raw_create is None else _parse_datetime(raw_create)
            retained = data.get(TAG_TIME_RETAINED)
            retained_ms = None if retained is None else _parse_duration_ms(retained)
        except (ValueError, TypeError, InvalidOperation) as e:
            raise CorruptMetadataError(f"cannot parse tag file {path}: {e}") from e
        props = dict(snapshot.properties or {})
        creator = props.pop(TAG_CREATOR, None)
        return Tag(name, replace(snapshot, extra=extra, properties=props or None), create, retained_ms, creator)


def _datetime_to_array(t: datetime.datetime) -> list[int]:
    out = [t.year, t.month, t.day, t.hour, t.minute]
    nanos = t.microsecond * 1000
    if t.second or nanos:
        out.append(t.second)
        if nanos:
            out.append(nanos)
    return out


def _duration_seconds(ms: int) -> str:
    sign = "-" if ms < 0 else ""
    seconds, rest = divmod(abs(ms), 1000)
    return f"{sign}{seconds}.{rest * 1_000_000:09d}"


def _parse_datetime(value: Any) -> datetime.datetime:
    if isinstance(value, list):
        parts = [int(v) for v in value] + [0] * (7 - len(value))
        if len(value) < 5:
            raise ValueError(f"tagCreateTime {value!r} has fewer than 5 fields")
        y, mo, d, h, mi, s, ns = parts[:7]
        return datetime.datetime(y, mo, d, h, mi, s, ns // 1000)
    if isinstance(value, str):
        return datetime.datetime.fromisoformat(value)
    raise ValueError(f"tagCreateTime {value!r} is neither an array nor an ISO string")


def _parse_duration_ms(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"tagTimeRetained {value!r} is not a duration")
    if isinstance(value, (int, Decimal)):
        return int(Decimal(value) * 1000)
    if isinstance(value, str):
        m = _ISO_DURATION.fullmatch(value.strip())
        if not m or value.strip().upper() in ("P", "PT"):
            raise ValueError(f"tagTimeRetained {value!r} is not an ISO-8601 duration")
        seconds = (Decimal(m.group("d") or 0) * 86400 + Decimal(m.group("h") or 0) * 3600
                   + Decimal(m.group("m") or 0) * 60 + Decimal(m.group("s") or 0))
        return int(seconds * 1000)
    raise ValueError(f"tagTimeRetained {value!r} is not a duration")


def list_tag_names(file_io: FileIO, table_path: str) -> list[tuple[str, int]]:
    """(name, file modification millis) of every tag file, by name."""
    out = []
    for st in file_io.list_status(tag_dir(table_path)):
        base = st.path.rstrip("/").rsplit("/", 1)[-1]
        if not st.is_dir and base.startswith(TAG_PREFIX) and len(base) > len(TAG_PREFIX):
            out.append((base[len(TAG_PREFIX):], st.mtime_millis))
    out.sort()
    return out


def read_tag(file_io: FileIO, table_path: str, name: str) -> Tag | None:
    """The tag, or None if its file does not exist."""
    p = tag_path(table_path, name)
    data = file_io.read_if_exists(p)
    return None if data is None else Tag.from_json(name, data, p)
