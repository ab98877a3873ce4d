"""Airflow Assets for Paimon tables: ``paimon://<connection id>/<database>/<table>``.

The URI names the Paimon connection rather than the warehouse, so DAG files can build it at parse time without
resolving connections, and a producer and its consumers agree on it as long as they use the same connection id.
Writes and compactions emit an event for their table's asset with the committed snapshot id in the extra.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import SplitResult

from paimon_provider.utils.connection import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from airflow.sdk import Asset, AssetAlias

SCHEME = "paimon"
_NAME = re.compile(r"[A-Za-z0-9_\-]+")


def split_table(table: str) -> tuple[str, str]:
    """``db.t`` -> (db, t); a bare name is in database ``default`` (as in the engine's catalog)."""
    parts = table.split(".")
    if len(parts) == 1:
        parts = ["default", parts[0]]
    if len(parts) != 2 or not parts[0] or not parts[1]:
        raise ValueError(f"table {table!r} must be 'database.table'")
    return parts[0], parts[1]


def table_asset_uri(table: str, paimon_conn_id: str = DEFAULT_CONN_ID) -> str:
    """The URI of a table's Asset: ``paimon://<paimon_conn_id>/<database>/<table>``."""
    db, name = split_table(table)
    return f"{SCHEME}://{paimon_conn_id}/{db}/{name}"


def split_asset_uri(uri: str) -> tuple[str, str, str]:
    """``paimon://<conn>/<db>/<table>`` -> (conn, db, table); the inverse of :func:`table_asset_uri`."""
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    if parts.scheme != SCHEME:
        raise ValueError(f"not a {SCHEME}:// asset URI: {uri!r}")
    clean = sanitize_uri(parts)
    db, name = clean.path.strip("/").split("/")
    return clean.netloc, db, name


def table_asset(table: str, paimon_conn_id: str = DEFAULT_CONN_ID) -> Asset:
    """The Asset of a table; schedule a DAG on it (``schedule=[table_asset("dwd.orders")]``) to run after writes."""
    from airflow.sdk import Asset

    db, name = split_table(table)
    return Asset(name=f"paimon.{paimon_conn_id}.{db}.{name}", uri=table_asset_uri(table, paimon_conn_id),
                 group="paimon")


def writes_alias(paimon_conn_id: str = DEFAULT_CONN_ID) -> AssetAlias:
    """The AssetAlias through which operators whose table is only known at run time (templated, or mapped with
    ``expand(table=...)``) emit their table's Asset event. Pass it in ``outlets`` of a mapped operator's
    ``partial(...)`` so the scheduler knows the task emits asset events."""
    from airflow.sdk import AssetAlias

    return AssetAlias(name=f"paimon.{paimon_conn_id}.writes", group="paimon")


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """Asset URI handler registered for ``paimon://`` (provider info ``asset-uris``): the connection id and a
    ``/<database>/<table>`` path are required."""
    if not uri.netloc or not _NAME.fullmatch(uri.netloc):
        raise ValueError(f"a paimon asset URI needs a connection id as its host: {uri.geturl()!r}")
    parts = [p for p in uri.path.split("/") if p]
    if len(parts) != 2:
        raise ValueError(f"a paimon asset URI's path must be /<database>/<table>: {uri.geturl()!r}")
    return uri._replace(path="/" + "/".join(parts))
