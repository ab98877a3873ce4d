"""Where things live inside a table directory, and how files are named (Paimon's names verbatim)."""

from __future__ import annotations

import datetime
import decimal
import re
import uuid
from collections.abc import Sequence
from typing import Protocol

from table_engine.types import DataType

DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"
_ESCAPE = set("\"#%'*/:=?\\{}[]^")


def escape_path_name(value: str) -> str:
    """Escape a partition directory component like Paimon's ``PartitionPathUtils.escapePathName``."""
    return "".join(f"%{ord(c):02X}" if (ord(c) < 32 or ord(c) == 127 or c in _ESCAPE) else c for c in value)


def unescape_path_name(value: str) -> str:
    """The inverse of :func:`escape_path_name`: ``%XX`` sequences decoded."""
    out = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "%" and i + 3 <= len(value):
            try:
                out.append(chr(int(value[i + 1:i + 3], 16)))
                i += 3
                continue
            except ValueError:
                pass
        out.append(c)
        i += 1
    return "".join(out)


def partition_value_string(value: object, t: DataType, default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """The directory name of one partition value (Paimon's legacy ``toString`` naming, its default)."""
    if value is None or (isinstance(value, str) and (value == "" or value.isspace())):
        return default_name
    if isinstance(value, bool):
        return "true" if value else "false"
    if t.root == "DATE" and isinstance(value, datetime.date):
        return str((value - datetime.date(1970, 1, 1)).days)
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") and isinstance(value, datetime.datetime):
        v = value.astimezone(datetime.UTC).replace(tzinfo=None) if value.tzinfo else value
        text = v.isoformat(timespec="minutes")
        if v.second or v.microsecond:
            text = v.isoformat(timespec="microseconds" if v.microsecond else "seconds")
            if v.microsecond and v.microsecond % 1000 == 0:
                text = text[:-3]
        return text
    if t.root == "TIME" and isinstance(value, datetime.time):
        return str(((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def partition_dir(keys: Sequence[str], values: Sequence[object], types: Sequence[DataType],
                  default_name: str = DEFAULT_PARTITION_NAME) -> str:
    """``k1=v1/k2=v2`` (empty string for unpartitioned tables)."""
    return "/".join(
        f"{escape_path_name(k)}={escape_path_name(partition_value_string(v, t, default_name))}"
        for k, v, t in zip(keys, values, types, strict=True)
    )


MAIN_BRANCH = "main"
"""Paimon's ``BranchManager.DEFAULT_MAIN_BRANCH``: the table directory itself."""
BRANCH_PREFIX = "branch-"
_BRANCH_ROOT = re.compile(r"^(.*)/branch/branch-([^/]+)$")


def branch_path(table_path: str, branch: str) -> str:
    """The metadata root of ``branch`` (Paimon's ``BranchManager.branchPath``): the table directory for ``main``,
    ``<table>/branch/branch-<name>`` otherwise. A branch has its own ``snapshot/``, ``schema/``, ``tag/``,
    ``consumer/`` and ``changelog/`` there and shares the table's data files, manifests, index and statistics
    (:func:`table_root`). The one place that decides where a branch lives."""
    root = table_root(table_path)
    return root if branch == MAIN_BRANCH else f"{root}/branch/{BRANCH_PREFIX}{branch}"


def table_root(path: str) -> str:
    """The table directory of a branch's metadata root (``path`` itself for the main branch): where data files,
    ``manifest/``, ``index/`` and ``statistics/`` live for every branch. A table directory never ends in
    ``/branch/branch-<x>`` (its parent is a ``<db>.db`` directory), so the rule is unambiguous."""
    m = _BRANCH_ROOT.match(path.rstrip("/"))
    return m.group(1) if m else path


def branch_of(path: str) -> str:
    """The branch whose metadata root ``path`` is (``main`` for a table directory)."""
    m = _BRANCH_ROOT.match(path.rstrip("/"))
    return m.group(2) if m else MAIN_BRANCH


def bucket_dir(table_path: str, partition: str, bucket: int) -> str:
    """The bucket directory: ``[<partition>/]bucket-<n>`` (``bucket-postpone`` for bucket -2) of the table (of
    whichever branch ``table_path`` is the root of: branches share data files)."""
    name = "postpone" if bucket == -2 else str(bucket)
    table_path = table_root(table_path)
    return f"{table_path}/{partition}/bucket-{name}" if partition else f"{table_path}/bucket-{name}"


def new_data_file_name(prefix: str = "data-", roll: int = 0, suffix: str = ".parquet", file_uuid: str | None = None
                       ) -> str:
    """``<prefix><uuid>-<roll><suffix>``, e.g. ``data-<uuid>-0.parquet``."""
    return f"{prefix}{file_uuid or uuid.uuid4()}-{roll}{suffix}"


STAGING_DIR_PREFIX = "spark-staging-"
"""Directories ``<table>/spark-staging-<token>/`` hold rows a Spark job staged for its commit (updates by row id on
data-evolution tables); the job removes its own; ``remove-orphan-files`` deletes old files left by a dead one."""


def staging_dir(table_path: str, token: str) -> str:
    """The staging directory of job ``token`` of the table at ``table_path`` (in the table directory whichever branch
    the job writes: orphan cleaning finds it there)."""
    return f"{table_root(table_path).rstrip('/')}/{STAGING_DIR_PREFIX}{token}"


def manifest_dir(table_path: str) -> str:
    """``<table>/manifest``: manifests, manifest lists and index manifests (shared by every branch)."""
    return f"{table_root(table_path)}/manifest"


def index_dir(table_path: str) -> str:
    """``<table>/index``: HASH index and deletion-vector files (shared by every branch)."""
    return f"{table_root(table_path)}/index"


def statistics_dir(table_path: str) -> str:
    """``<table>/statistics``: table statistics files (shared by every branch)."""
    return f"{table_root(table_path)}/statistics"


def manifest_path(table_path: str, name: str) -> str:
    """``<table>/manifest/<name>``: a manifest, manifest list or index manifest."""
    return f"{manifest_dir(table_path)}/{name}"


class NamedFile(Protocol):
    """A file that a manifest names, with an optional external path (an index file's meta)."""

    @property
    def file_name(self) -> str: ...

    @property
    def external_path(self) -> str | None: ...


def index_file_path(table_path: str, meta: NamedFile) -> str:
    """Where an index file (HASH, deletion vectors, global index) is: its external path, else
    ``<table>/index/<name>``."""
    return meta.external_path or f"{index_dir(table_path)}/{meta.file_name}"


def new_manifest_name(kind: str = "", index: int = 0, file_uuid: str | None = None) -> str:
    """``manifest-<uuid>-<i>`` (data) or ``manifest-<uuid>-changelog-<i>``."""
    middle = f"-{kind}" if kind else ""
    return f"manifest-{file_uuid or uuid.uuid4()}{middle}-{index}"


def new_manifest_list_name(file_uuid: str, suffix: str) -> str:
    """``manifest-list-<uuid>-<suffix>`` with suffix 0 (base), 1 (delta) or ``changelog``."""
    return f"manifest-list-{file_uuid}-{suffix}"


def new_index_manifest_name() -> str:
    """``index-manifest-<uuid>``."""
    return f"index-manifest-{uuid.uuid4()}"


def new_index_file_name(kind: int = 0) -> str:
    """``index-<uuid>-0`` (HASH) or ``index-<uuid>-1`` (deletion vectors)."""
    return f"index-{uuid.uuid4()}-{kind}"
