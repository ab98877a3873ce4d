"""The listing behind an object table: every object below a location, as index rows of
:data:`~table_engine.object_table.schema.ARROW_SCHEMA`.

Paimon's ``ObjectRefresh`` (1.0) lists the location recursively through the object FileIO and writes one row per
file: ``path`` = ``FileStatus.getPath().toString()`` (the qualified path: ``file:/dir/a.jpg`` on local disk,
``s3://bucket/prefix/a.jpg`` on S3, the scheme as the location spells it), ``parent_path`` its parent, ``name`` its
last segment, ``length`` its size, ``mtime`` its modification time and ``atime`` its access time as
TIMESTAMP_LTZ(3), ``owner`` the FileStatus's owner. Neither Paimon's local FileIO nor this engine's FileIOs report
an access time or an owner: Paimon then records the epoch (``getAccessTime()`` defaults to 0) and null, and so does
this listing. The other columns (generation, content type, storage class, MD5, metadata) are filled by Paimon 1.2
only for object stores whose Java FileIO reports them; here they are null.

Only the listing walks in Python (one ``FileStatus`` per object, through :meth:`FileIO.walk`: on S3 one paginated
flat listing); the rows are built with Arrow kernels. On an object store (no directories) the engine's directory
markers (``.keep``, :data:`table_engine.io.object_store.DIR_MARKER`, which ``list_status`` hides too) and keys that
end in ``/`` (other tools' folder markers) are not objects and not listed.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import OptionError, StorageError
from table_engine.io.file_io import FileIO
from table_engine.object_table.schema import ARROW_SCHEMA

__all__ = ["DIR_MARKER", "list_objects", "qualified_location"]

DIR_MARKER = ".keep"
"""The engine's directory marker on object stores (the value of ``table_engine.io.object_store.DIR_MARKER``, not
imported here so that a local-only install needs no object-store client)."""


def _is_local(location: str) -> bool:
    scheme = urlparse(location).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def _walk_root(location: str) -> str:
    """The path handed to the FileIO: an absolute local path, or the URI without trailing slashes."""
    if _is_local(location):
        if location.startswith("file://"):
            location = urlparse(location).path or "/"
        elif location.startswith("file:"):
            location = location[len("file:"):]
        return os.path.abspath(location)
    return location.rstrip("/")


def qualified_location(location: str) -> str:
    """The location as the ``path`` of its objects starts (without the final ``/``): ``file:/abs/dir`` on local
    disk (Java's ``Path.toString`` of a local file), the URI itself otherwise."""
    root = _walk_root(location)
    return "file:" + root if _is_local(location) else root


def _missing(location: str) -> OptionError:
    return OptionError(f"object-location {location!r} does not exist: nothing to index (create it, or correct the "
                       "table's 'object-location')")


def _not_a_directory(location: str) -> OptionError:
    return OptionError(f"object-location {location!r} is a file, not a directory of objects")


def list_objects(file_io: FileIO, location: str, *, missing_ok: bool = False) -> pa.Table:
    """Every object below ``location``, recursively, as index rows (:data:`ARROW_SCHEMA`), sorted by ``path``.

    A location that does not exist (on an object store: no object below it, not even a directory marker) raises
    one :class:`~table_engine.errors.OptionError` naming it, or with ``missing_ok`` (a virtual object table's
    location before its first object) lists no rows; a location that is a file raises one ``OptionError``; a
    failing listing raises the FileIO's error (:class:`~table_engine.errors.StorageError` on S3) and nothing is
    returned.
    """
    root = _walk_root(location)
    if not file_io.exists(root):
        if missing_ok:
            return ARROW_SCHEMA.empty_table()
        raise _missing(location)
    if not file_io.has_directories and file_io.is_file(root):
        raise _not_a_directory(location)
    paths: list[str] = []
    sizes: list[int] = []
    mtimes: list[int] = []
    try:
        for status in file_io.walk(root):
            paths.append(status.path)
            sizes.append(status.size)
            mtimes.append(status.mtime_millis)
    except NotADirectoryError:
        raise _not_a_directory(location) from None
    except FileNotFoundError:
        raise _missing(location) from None  # removed while listed
    return _rows(root, qualified_location(location), paths, sizes, mtimes, object_store=not file_io.has_directories)


def _rows(root: str, qualified: str, paths: list[str], sizes: list[int], mtimes: list[int], *,
          object_store: bool) -> pa.Table:
    """The index rows of the listed ``paths`` (each ``root/<relative>``), vectorized."""
    listed = pa.array(paths, pa.string())
    if len(listed) and not pc.all(pc.starts_with(listed, root + "/")).as_py():
        raise StorageError(f"the listing of {root!r} returned paths outside it")  # a FileIO bug; never silently
    relative = pc.utf8_slice_codeunits(listed, len(root) + 1)
    name = pc.replace_substring_regex(relative, r"^.*/", "")
    keep = pc.invert(pc.ends_with(relative, "/"))
    if object_store:
        keep = pc.and_(keep, pc.not_equal(name, DIR_MARKER))
    keep = pc.and_(keep, pc.not_equal(relative, ""))
    full = pc.binary_join_element_wise(pa.scalar(qualified + "/"), relative, "")
    table = pa.table({
        "path": full,
        "parent_path": pc.replace_substring_regex(full, r"/[^/]*$", ""),
        "name": name,
        "length": pa.array(sizes, pa.int64()),
        "mtime": pa.array(mtimes, pa.int64()).cast(pa.timestamp("ms", tz="UTC")),
    }).filter(keep)
    n = table.num_rows
    table = table.sort_by("path")
    columns = {name: table.column(name) for name in table.column_names}
    columns["atime"] = pa.chunked_array([pa.repeat(pa.scalar(0, pa.timestamp("ms", tz="UTC")), n)])
    arrays = [columns[f.name].cast(f.type) if f.name in columns else pa.nulls(n, f.type) for f in ARROW_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)
