"""The read-only FastAPI app of the Paimon pages, mounted by Airflow's API server under ``/paimon`` (docs/ui.md).

``/`` lists the ``paimon`` connections the user may read and the tables of each; ``/<conn>/<db>/<table>`` shows a
table's health, snapshots (with the Airflow run that wrote each), tags, branches, consumers and partitions. Every
value comes from the engine's public read API on a catalog opened in this process with the connection's options;
the credentials stay in the process (never in a page or a URL, and redacted from error messages).

Airflow mounts a plugin's app as it is, without the API's authentication, so every route depends on Airflow's own
``get_user`` (the JWT of the UI's cookie or an ``Authorization: Bearer`` header, checked by the auth manager) and
shows only connections the auth manager lets the user read (``is_authorized_connection(GET)``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from airflow.api_fastapi.core_api.security import get_user
from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse

from paimon_provider.plugins import URL_PREFIX, render
from paimon_provider.plugins.render import esc, url
from paimon_provider.utils.connection import CONN_TYPE, PaimonConnectionConfig

if TYPE_CHECKING:
    from airflow.api_fastapi.auth.managers.models.base_user import BaseUser

    from table_engine.catalog import Catalog


User = Annotated["BaseUser", Depends(get_user)]


def paimon_connection_ids() -> list[str]:
    """Ids of the ``paimon`` connections in the metadata database and in ``AIRFLOW_CONN_*`` variables."""
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session
    from sqlalchemy import select

    ids: set[str] = set()
    for key, value in os.environ.items():
        if key.startswith("AIRFLOW_CONN_") and _env_conn_type(value) == CONN_TYPE:
            ids.add(key.removeprefix("AIRFLOW_CONN_").lower())
    with create_session() as session:
        ids.update(session.scalars(select(Connection.conn_id).where(Connection.conn_type == CONN_TYPE)))
    return sorted(ids)


def _env_conn_type(value: str) -> str | None:
    if value.lstrip().startswith("{"):
        try:
            conn_type = json.loads(value).get("conn_type")
        except (ValueError, AttributeError):
            return None
        return str(conn_type) if conn_type else None
    return value.split(":", 1)[0].replace("-", "_") if ":" in value else None


def connection_config(conn_id: str) -> PaimonConnectionConfig:
    """The parsed connection (any secrets backend, the environment, the metadata database)."""
    from airflow.models.connection import Connection

    conn = Connection.get_connection_from_secrets(conn_id)
    if conn.conn_type != CONN_TYPE:
        raise ValueError(f"connection {conn_id!r} is of type {conn.conn_type!r}, not {CONN_TYPE!r}")
    return PaimonConnectionConfig.from_connection_fields(conn_id, conn.host, conn.extra_dejson, login=conn.login,
                                                         password=conn.password)


def open_catalog(config: PaimonConnectionConfig) -> Catalog:
    """The connection's catalog in this process (the one its ``metastore`` names)."""
    return config.open_catalog()


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def readable(user: BaseUser, conn_ids: Iterable[str]) -> list[str]:
    """The connections the auth manager lets ``user`` read."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import ConnectionDetails

    manager = get_auth_manager()
    return [c for c in conn_ids
            if manager.is_authorized_connection(method="GET", user=user, details=ConnectionDetails(conn_id=c))]


def _root(request: Request) -> str:
    """This app's root path as the browser sees it (the API server's base path + ``/paimon``)."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def _airflow_root(request: Request) -> str:
    root = _root(request)
    return root.removesuffix(URL_PREFIX) if root.endswith(URL_PREFIX) else ""


def airflow_runs(pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which ``(dag_id, run_id)`` pairs are runs in this Airflow's metadata database (a table may carry runs of
    another Airflow, or of ``make demo``'s own database: those are not linked)."""
    if not pairs:
        return set()
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    wanted = set(pairs)
    with create_session() as session:
        rows = session.execute(select(DagRun.dag_id, DagRun.run_id).where(
            DagRun.dag_id.in_({d for d, _ in wanted}), DagRun.run_id.in_({r for _, r in wanted}))).all()
    return {(str(d), str(r)) for d, r in rows} & wanted


def paimon_assets(uris: Iterable[str] | None = None, dag_id: str | None = None) -> list[tuple[int, str, str]]:
    """The active ``paimon://`` Assets of this Airflow as ``(asset id, uri, role)``: with ``uris``, those of these
    URIs (role ``""``); with ``dag_id``, those the DAG is scheduled on (``schedule``), that its tasks read
    (``reads``) or write (``writes``: declared outlets, and Assets it emitted events of through an alias)."""
    from airflow.models.asset import (
        AssetActive,
        AssetEvent,
        AssetModel,
        DagScheduleAssetReference,
        TaskInletAssetReference,
        TaskOutletAssetReference,
    )
    from airflow.utils.session import create_session
    from sqlalchemy import or_, select

    from paimon_provider.utils.assets import SCHEME

    active = (select(AssetModel.id, AssetModel.uri)
              .join(AssetActive, (AssetActive.name == AssetModel.name) & (AssetActive.uri == AssetModel.uri))
              .where(AssetModel.uri.startswith(f"{SCHEME}://")))
    queries: list[tuple[str, Any]] = []
    if uris is not None:
        queries.append(("", active.where(AssetModel.uri.in_(set(uris)))))
    if dag_id is not None:
        queries += [
            ("schedule", active.where(AssetModel.id.in_(select(DagScheduleAssetReference.asset_id).where(
                DagScheduleAssetReference.dag_id == dag_id)))),
            ("reads", active.where(AssetModel.id.in_(select(TaskInletAssetReference.asset_id).where(
                TaskInletAssetReference.dag_id == dag_id)))),
            ("writes", active.where(or_(
                AssetModel.id.in_(select(TaskOutletAssetReference.asset_id).where(
                    TaskOutletAssetReference.dag_id == dag_id)),
                AssetModel.id.in_(select(AssetEvent.asset_id).where(AssetEvent.source_dag_id == dag_id))))),
        ]
    out: list[tuple[int, str, str]] = []
    with create_session() as session:
        for role, query in queries:
            out += [(int(i), str(u), role) for i, u in session.execute(query.order_by(AssetModel.uri)).all()]
    return out


def _error_page(status: int, title: str, message: str) -> HTMLResponse:
    return HTMLResponse(render.page(title, f"<h1>{esc(title)}</h1><p class='err'>{esc(message)}</p>"),
                        status_code=status)


def _connection_section(conn_id: str, root: str) -> str:
    """The tables page's section of one connection: its tables linked to their pages, or what failed (without the
    connection's credentials: one broken connection must not hide the others)."""
    secrets: list[str] = []
    catalog: Catalog | None = None
    try:
        config = connection_config(conn_id)
        secrets = list(config.credentials.values())
        catalog = open_catalog(config)
        if catalog.file_io.has_directories and not catalog.file_io.exists(config.warehouse):
            raise FileNotFoundError(f"warehouse {config.warehouse} does not exist (a wrong path, or no table was "
                                    "created there yet)")
        rows = [[f"<a href='{root}/{url(conn_id, db, name)}'>{esc(db)}.{esc(name)}</a>"]
                for db in catalog.list_databases() for name in catalog.list_tables(db)]
        body = render.table(["table"], rows, empty="no table")
        count = f"{len(rows)} table{'' if len(rows) == 1 else 's'}"
        where = f" <span class='muted'>{esc(count)} in {esc(config.warehouse)}</span>"
    except Exception as e:  # noqa: BLE001 - one broken connection must not hide the others
        body, where = f"<p class='err'>{esc(redact(f'{type(e).__name__}: {e}', secrets))}</p>", ""
    finally:
        if catalog is not None:
            catalog.close()  # a metastore's connections: not kept between requests
    return f"<h2>{esc(conn_id)}{where}</h2>{body}"


def create_app() -> FastAPI:
    """The app the plugin mounts (a new one per call)."""
    app = FastAPI(title="Apache Paimon tables", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse)
    def tables_page(request: Request, user: User) -> HTMLResponse:
        root = _root(request)
        sections = [_connection_section(conn_id, root) for conn_id in readable(user, paimon_connection_ids())]
        content = "".join(sections) or "<p class='muted'>no paimon connection you may read</p>"
        return HTMLResponse(render.page("Paimon tables", f"<h1>Paimon tables</h1>{content}"))

    @app.get("/{conn_id}/{database}/{table}", response_class=HTMLResponse)
    def table_page(request: Request, conn_id: str, database: str, table: str, user: User, kind: str | None = None,
                   before: int | None = None) -> HTMLResponse:
        """A table's page; ``kind`` (a commit kind) and ``before`` (a snapshot id) select the snapshots listed."""
        from paimon_provider.plugins.table_view import table_body
        from table_engine.errors import CommandError, DatabaseNotExistError, TableNotExistError

        identifier = f"{database}.{table}"
        if not readable(user, [conn_id]):  # first: a user who may not read it learns nothing of the connection
            return _error_page(403, "Forbidden", f"you may not read connection {conn_id!r}")
        if conn_id not in paimon_connection_ids():
            return _error_page(404, "Not found", f"no paimon connection {conn_id!r}")
        secrets: list[str] = []
        catalog: Catalog | None = None
        try:
            config = connection_config(conn_id)
            secrets = list(config.credentials.values())
            catalog = open_catalog(config)
            paimon_table = catalog.get_table(identifier)
            from paimon_provider.utils.assets import table_asset_uri

            assets = paimon_assets(uris=[table_asset_uri(identifier, conn_id)])
            body = table_body(catalog, paimon_table, conn_id, _airflow_root(request), _root(request), airflow_runs,
                              asset_id=assets[0][0] if assets else None, kind=kind or None, before=before)
        except CommandError as e:  # a kind that is not a commit kind
            return _error_page(400, "Bad request", redact(str(e), secrets))
        except (TableNotExistError, DatabaseNotExistError) as e:
            return _error_page(404, "Not found", redact(f"no table {identifier} in connection {conn_id!r}: {e}",
                                                        secrets))
        except Exception as e:  # noqa: BLE001 - the page says what failed, without the credentials
            return _error_page(500, "Error", redact(f"{identifier}: {type(e).__name__}: {e}", secrets))
        finally:
            if catalog is not None:
                catalog.close()
        return HTMLResponse(render.page(f"{identifier} - Paimon", body))

    @app.get("/dags/{dag_id}", response_class=HTMLResponse)
    def dag_tables_page(request: Request, dag_id: str, user: User) -> HTMLResponse:
        """The DAG page's "Paimon tables" tab: the tables of the DAG's ``paimon://`` Assets, each linked to its
        table page and its Asset page."""
        from paimon_provider.utils.assets import split_asset_uri

        root, airflow_root = _root(request), _airflow_root(request)
        allowed = set(readable(user, paimon_connection_ids()))
        rows = []
        for asset_id, uri, role in paimon_assets(dag_id=dag_id):
            conn_id, db, name = split_asset_uri(uri)
            table = f"{esc(db)}.{esc(name)}"
            page = f"<a href='{root}/{url(conn_id, db, name)}'>{table}</a>" if conn_id in allowed else table
            rows.append([page, esc(conn_id), esc(role),
                         render.airflow_link(f"{airflow_root}/{url('assets', str(asset_id))}", esc(uri))])
        body = render.table(["table", "connection", "role", "Asset"], rows,
                            empty="this DAG names no paimon:// Asset (it neither waits for, reads nor writes one "
                                  "that Airflow knows)")
        return HTMLResponse(render.page(f"{dag_id} - Paimon tables",
                                        f"<p><a href='{root}/'>Paimon tables</a></p><h1>Paimon tables of "
                                        f"{esc(dag_id)}</h1>{body}"))

    return app


def app_spec() -> dict[str, Any]:
    """The plugin's ``fastapi_apps`` entry."""
    return {"app": create_app(), "url_prefix": URL_PREFIX, "name": "Apache Paimon tables"}
