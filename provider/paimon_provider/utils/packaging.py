"""Locate the Spark application of the installed ``table_engine`` and package the engine for a cluster.

The application is ``table_engine/spark/app.py`` of whatever ``table_engine`` is importable (found without importing
it, so neither PySpark nor the engine is loaded). For masters that are not local, executors need the engine's
Python sources: :func:`engine_archive` zips them once per content (the name carries a digest of the sources), for
``--py-files``. Third-party dependencies (pyarrow, fastavro, ...) must be installed on the cluster's Python.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import sys
import tempfile
import zipfile

ENGINE_PACKAGE = "table_engine"
APP_RELATIVE_PATH = ("spark", "app.py")


def engine_package_dir() -> pathlib.Path:
    """Directory of the importable ``table_engine`` package."""
    spec = importlib.util.find_spec(ENGINE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {ENGINE_PACKAGE!r} package is not installed in {sys.executable}")
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


def application_path() -> str:
    """Absolute path of ``table_engine/spark/app.py``; FileNotFoundError if this engine has no Spark application."""
    path = engine_package_dir().joinpath(*APP_RELATIVE_PATH)
    if not path.is_file():
        raise FileNotFoundError(f"the Spark application {path} does not exist in the installed {ENGINE_PACKAGE}")
    return str(path)


def _engine_sources(root: pathlib.Path) -> list[pathlib.Path]:
    files = [p for p in root.rglob("*") if p.is_file() and (p.suffix == ".py" or p.name == "py.typed")
             and "__pycache__" not in p.parts]
    return sorted(files)


def engine_archive(directory: str | None = None) -> str:
    """A zip of the ``table_engine`` sources (``table_engine/...`` inside), built once per content.

    Written to ``directory`` (default: ``<tmp>/airflow-provider-paimon``) under a temporary name and renamed into
    place, so concurrent tasks never see a partial archive.
    """
    root = engine_package_dir()
    sources = _engine_sources(root)
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    out_dir = pathlib.Path(directory or os.path.join(tempfile.gettempdir(), "airflow-provider-paimon"))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{ENGINE_PACKAGE}-{digest.hexdigest()[:16]}.zip"
    if target.is_file():
        return str(target)
    fd, tmp = tempfile.mkstemp(prefix=".engine-", suffix=".zip", dir=out_dir)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for path in sources:
                info = zipfile.ZipInfo(f"{ENGINE_PACKAGE}/{path.relative_to(root).as_posix()}", (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, path.read_bytes())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(target)
