"""The /paimon pages through FastAPI's TestClient on an S3 warehouse of the session's S3 server: they render, show
the engine's values, link the Airflow runs, require an authenticated user, and never show the secret key."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from fastapi.testclient import TestClient

from table_engine import Catalog
from table_engine.run_identity import RunIdentity
from table_engine.store.changes.consumers import ConsumerManager
from tests import airflow_env
from tests.s3_server import SECRET_KEY, S3Server

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    pa.field("v", pa.string())])

JWT_SECRET = "paimon-ui-tests-jwt-secret-" + "x" * 40
"""The tests' JWT signing key (64+ bytes, as PyJWT wants for HS512): a test value, not a secret."""


@pytest.fixture
def ui(airflow_db: None, s3_server: S3Server, s3_warehouse: str, s3_catalog: Catalog,
       monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, Catalog, dict[str, str]]]:
    """A client of the app with an admin's JWT cookie, connection ``paimon_ui`` on a warehouse with one table."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from paimon_provider.plugins.app import create_app

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_UI", airflow_env.paimon_s3_connection(s3_warehouse, s3_server.endpoint))
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
    monkeypatch.setenv("AIRFLOW__API_AUTH__JWT_SECRET", JWT_SECRET)
    t = s3_catalog.create_table("sales.orders", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "2"})
    run = RunIdentity("etl_orders", "manual__2026-11-27T10:00:00+00:00", "load")
    t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=SCHEMA),
            properties=run.to_properties())
    t.write(pa.table({"dt": ["b"], "id": [4], "v": ["w"]}, schema=SCHEMA))
    t.create_tag("release-1", 1)
    t.create_branch("dev")
    ConsumerManager.of(t.store).create("reader", 1)
    s3_catalog.create_table("sales.empty", SCHEMA)
    token = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
    client = TestClient(create_app(), root_path="/paimon")
    yield client, s3_catalog, {"_token": token}


def _get(client: TestClient, path: str, cookies: dict[str, str]) -> Any:
    client.cookies.clear()
    for k, v in cookies.items():
        client.cookies.set(k, v)
    return client.get(path)


def test_pages_render_the_engines_values_and_no_secret(ui: tuple[TestClient, Catalog, dict[str, str]],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_provider.plugins import app as app_module

    client, catalog, cookies = ui
    # this Airflow has the run that wrote snapshot 1 (the real query is tested below and in the browser test)
    assert app_module.airflow_runs([("etl_orders", "manual__2026-11-27T10:00:00+00:00")]) == set()
    monkeypatch.setattr(app_module, "airflow_runs", lambda pairs: {p for p in pairs if p[0] == "etl_orders"})
    responses = []
    listing = _get(client, "/", cookies)
    responses.append(listing)
    assert listing.status_code == 200, listing.text
    assert "paimon_ui" in listing.text and "2 tables in s3://" in listing.text
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_TYPO", airflow_env.paimon_connection("/nonexistent/warehous"))
    typo = _get(client, "/", cookies).text  # a wrong warehouse is an error, not "no table"
    assert "warehouse /nonexistent/warehous does not exist" in typo
    assert "/paimon/paimon_ui/sales/orders" in listing.text and "sales.empty" in listing.text

    page = _get(client, "/paimon_ui/sales/orders", cookies)
    responses.append(page)
    assert page.status_code == 200, page.text
    t = catalog.get_table("sales.orders")
    health = t.maintenance.health()
    text = page.text
    assert f"<b>{health.rows}</b>" in text and f"<b>{health.files}</b>" in text
    for s in t.snapshots():
        assert f"<td class='n'>{s.id}</td><td>{s.commit_kind}</td><td class='n'>{s.total_record_count}</td>" in text
    # the run that wrote snapshot 1, linked to its Airflow run page (the top window's, through the page's script)
    assert "<a data-airflow href='/dags/etl_orders/runs/manual__2026-11-27T10%3A00%3A00%2B00%3A00'>" in text
    assert "top.history.pushState" in text and "target='_top'" not in text
    assert "release-1" in text and "dev" in text
    # every column has a header: the tags' and consumers' last one says whether the tag or consumer is expired
    assert "<th>retained</th><th>expired</th>" in text and "<th>lag (snapshots)</th><th>expired</th>" in text
    assert "<th></th>" not in text and "<td></td>" not in text
    assert "<td>release-1</td><td class='n'>1</td>" in text and "<td>no</td></tr>" in text
    consumer = health.consumers[0]
    assert f"<td>reader</td><td class='n'>{consumer.next_snapshot_id}</td><td class='n'>{consumer.lag}</td>" in text
    for p in health.partitions:
        assert f"<td>{p.partition}</td><td class='n'>{p.buckets}</td><td class='n'>{p.files}</td>" in text
    assert "<svg" in text and "files per bucket by level" in text
    files = catalog.get_table("sales.orders$files").read()
    for level in set(files["level"].to_pylist()):
        n = files["level"].to_pylist().count(level)
        assert f"<title>files: {n}</title>" in text and f">level {level} (" in text

    empty = _get(client, "/paimon_ui/sales/empty", cookies)
    responses.append(empty)
    assert empty.status_code == 200 and "no snapshot" in empty.text

    missing = _get(client, "/paimon_ui/sales/nope", cookies)
    responses.append(missing)
    assert missing.status_code == 404 and "sales.nope" in missing.text
    no_conn = _get(client, "/nope/sales/orders", cookies)
    responses.append(no_conn)
    assert no_conn.status_code == 404 and "nope" in no_conn.text
    for r in responses:
        assert SECRET_KEY not in r.text and SECRET_KEY not in str(r.headers)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_dags_tab_and_the_table_page_link_the_table_and_its_asset(
        ui: tuple[TestClient, Catalog, dict[str, str]], tmp_path: Any) -> None:
    """Airflow 3.3 shows no plugin view on an Asset's page: the DAG tab lists the tables of the DAG's paimon://
    Assets (scheduled on, read, written), each linked to its table page and its Asset page, and the table page
    links its Asset."""
    import datetime

    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG
    from paimon_provider.utils.assets import split_asset_uri, table_asset, table_asset_uri

    from tests.dags.test_s3_credentials import sync_to_db

    client, _catalog, cookies = ui
    orders, other = table_asset("sales.orders", "paimon_ui"), table_asset("sales.other", "paimon_hidden")
    with DAG("paimon_tab_probe", schedule=[orders], start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        EmptyOperator(task_id="load", inlets=[orders], outlets=[other])
    sync_to_db(dag, tmp_path / "no-dags")

    tab = _get(client, "/dags/paimon_tab_probe", cookies)
    assert tab.status_code == 200, tab.text
    rows = tab.text.split("<tbody>")[1]
    assert rows.count("<tr>") == 3, rows
    assert "<a href='/paimon/paimon_ui/sales/orders'>sales.orders</a>" in rows  # a connection the user may read
    assert "<td>sales.other</td>" in rows  # no such connection: named, not linked
    assert "<td>schedule</td>" in rows and "<td>reads</td>" in rows and "<td>writes</td>" in rows
    assert "<a data-airflow href='/assets/" in rows and table_asset_uri("sales.orders", "paimon_ui") in rows
    assert "names no paimon:// Asset" in _get(client, "/dags/no_such_dag", cookies).text

    page = _get(client, "/paimon_ui/sales/orders", cookies).text
    assert "its Asset in Airflow" in page and "<a data-airflow href='/assets/" in page
    assert "its Asset in Airflow" not in _get(client, "/paimon_ui/sales/empty", cookies).text
    assert split_asset_uri("paimon://c/d/t") == ("c", "d", "t")
    with pytest.raises(ValueError, match="not a paimon:// asset URI"):
        split_asset_uri("s3://b/k")


def test_the_page_shows_the_plan_the_last_maintaining_run_and_the_snapshot_rate(
        ui: tuple[TestClient, Catalog, dict[str, str]], s3_warehouse: str) -> None:
    import re

    from table_engine.ops import Maintain
    from table_engine.ops.maintain import maintain
    from table_engine.schema_change import SetOption

    client, catalog, cookies = ui
    t = catalog.create_table("sales.backlog", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "write-only": "true"})
    for i in range(6):  # six level-0 files in bucket 0 of dt=a: num-sorted-run.compaction-trigger (5) passed
        t.write(pa.table({"dt": ["a"], "id": [i], "v": ["x"]}, schema=SCHEMA))
    text = _get(client, "/paimon_ui/sales/backlog", cookies).text
    assert "<h2>Last plan" in text and "nothing due" not in text
    assert ("<td>compact</td><td>dt=a bucket 0</td><td>1 bucket with 5 sorted runs or more "
            "(num-sorted-run.compaction-trigger; worst 6)</td><td>num-sorted-run.compaction-trigger = 5</td>") in text
    # the health figures weigh the buckets as the plan does: its trigger is due, beside the plan that says so
    assert "worst bucket 6; due: at 5 (num-sorted-run.compaction-trigger)" in text
    assert "no retained snapshot was committed by <code>maintain</code>" in text
    assert "orphan removal is not in this plan" not in text
    # with orphan removal on, maintain also lists the files; the page does not, and says its plan omits it
    t.alter(SetOption("maintenance.remove-orphan-files.enabled", "true"))
    text = _get(client, "/paimon_ui/sales/backlog", cookies).text
    assert "maintenance.remove-orphan-files.enabled is on" in text and "orphan removal is not in this plan" in text
    t.alter(SetOption("maintenance.remove-orphan-files.enabled", "false"))

    run = RunIdentity("paimon_maintenance", "scheduled__2026-11-27T00:00:00+00:00", "maintain")
    done = maintain(Maintain(warehouse=s3_warehouse, table="sales.backlog", snapshot_properties=run.to_properties()),
                    catalog)
    assert done["due"] == ["compact"]
    text = _get(client, "/paimon_ui/sales/backlog", cookies).text
    assert "<p class='muted'>nothing due</p>" in text
    assert "due: at 5 (num-sorted-run.compaction-trigger)" in text and "; due: " not in text  # not due now
    compacted = t.snapshot(t.latest_snapshot_id())  # type: ignore[arg-type]
    assert f"last maintained: <b>compact</b> in snapshot {compacted.id} at " in text
    # a run this Airflow does not have (here: none has any run) is named, not linked (its page would not exist)
    assert ("paimon_maintenance / scheduled__2026-11-27T00:00:00+00:00 <span class='muted'>maintain (not a run of "
            "this Airflow)</span>") in text and "href='/dags/paimon_maintenance" not in text

    # the snapshot rate: every retained snapshot counted once, in a bar of its commit kind
    assert "<svg" in text and "snapshots per minute by commit kind" in text
    rate = text[text.index("<h2>Snapshot rate"):text.index("<h2>Snapshots ")]
    counted: dict[str, int] = {}
    for kind, n in re.findall(r"<title>(APPEND|COMPACT): (\d+)</title></rect>", rate):
        counted[kind] = counted.get(kind, 0) + int(n)
    kinds = [str(s.commit_kind) for s in t.snapshots()]
    assert counted == {"APPEND": kinds.count("APPEND"), "COMPACT": kinds.count("COMPACT")} == {"APPEND": 6,
                                                                                                "COMPACT": 1}


def test_the_layout_section_shows_files_per_value_before_and_after_clustering(
        ui: tuple[TestClient, Catalog, dict[str, str]]) -> None:
    client, catalog, cookies = ui
    events = pa.schema([("user_id", pa.int64()), ("v", pa.string())])
    t = catalog.create_table("sales.events", events, options={
        "bucket": "-1", "clustering.incremental": "true", "clustering.columns": "user_id",
        "target-file-size": "2 kb", "num-sorted-run.compaction-trigger": "2"})
    for i in range(4):
        t.write(pa.table({"user_id": [(j * 7919 + i) % 1000 for j in range(400)], "v": ["x"] * 400}, schema=events))
    text = _get(client, "/paimon_ui/sales/events", cookies).text
    assert "<h2>Layout <span class='muted'>(files a filter on user_id reads; before: no compaction retained)" in text
    appended = t.maintenance.overlap()[0]
    assert appended.mean_files_per_value > appended.files / 2  # appended files each span (almost) every value
    assert (f"<td class='n'>{appended.files}</td><td class='n'>{appended.mean_files_per_value:.1f}</td>"
            f"<td class='n'>{appended.max_files_per_value}</td>") in text
    t.maintenance.compact(full=True)
    text = _get(client, "/paimon_ui/sales/events", cookies).text
    before = t.latest_snapshot_id() - 1  # type: ignore[operator]
    assert f"before: snapshot {before})" in text
    assert f"{appended.mean_files_per_value:.1f} of {appended.files}</td>" in text
    now = t.maintenance.overlap()[0]
    assert now.files > 1 and now.mean_files_per_value < 2.0  # clustered: about one file per value
    assert f"<td class='n'>{now.mean_files_per_value:.1f}</td>" in text
    assert "<h2>Layout" not in _get(client, "/paimon_ui/sales/orders", cookies).text  # no clustering.columns


def test_the_snapshots_by_kind_and_page(ui: tuple[TestClient, Catalog, dict[str, str]]) -> None:
    """The Snapshots section lists a page of the table's history: by commit kind (links for each), older pages."""
    from paimon_provider.plugins import table_view

    client, catalog, cookies = ui
    t = catalog.get_table("sales.orders")
    t.maintenance.compact(full=True)
    latest = t.latest_snapshot_id()
    text = _get(client, "/paimon_ui/sales/orders?kind=COMPACT", cookies).text
    rows = text[text.index("<h2>Snapshots"):text.index("<h2>Tags")]
    assert f"<td class='n'>{latest}</td><td>COMPACT</td>" in rows and "<td>APPEND</td>" not in rows, rows
    assert "href='/paimon/paimon_ui/sales/orders?kind=APPEND'" in rows and ">all</a>" in rows
    old = table_view.MAX_SNAPSHOTS
    table_view.MAX_SNAPSHOTS = 1
    try:
        first = _get(client, "/paimon_ui/sales/orders", cookies).text
        assert f"href='/paimon/paimon_ui/sales/orders?before={latest}'>older" in first
        older = _get(client, f"/paimon_ui/sales/orders?before={latest}", cookies).text
        section = older[older.index("<h2>Snapshots"):older.index("<h2>Tags")]
        assert f"<td class='n'>{latest - 1}</td>" in section and f"<td class='n'>{latest}</td>" not in section
    finally:
        table_view.MAX_SNAPSHOTS = old
    bad = _get(client, "/paimon_ui/sales/orders?kind=MERGE", cookies)
    assert bad.status_code == 400 and "unknown commit kind" in bad.text


def test_the_snapshot_rate_buckets_fit_the_retained_range() -> None:

    from paimon_provider.plugins.maintenance_view import MAX_RATE_BARS, rate_width, snapshot_rate

    hour = 3_600_000
    assert rate_width(0, 47 * 60_000) == (60_000, "minute") and rate_width(0, 48 * 60_000)[1] == "5 minutes"
    assert rate_width(0, 10 * hour)[1] == "15 minutes" and rate_width(0, 47 * hour) == (hour, "hour")
    for span in (0, 10**9, 10**11, 5 * 10**12):
        width, _ = rate_width(10**12, 10**12 + span)
        assert (10**12 + span) // width - 10**12 // width < MAX_RATE_BARS

    def snap(i: int, ms: int, kind: str) -> Any:  # what the rate reads of a snapshot: its time and kind
        return types.SimpleNamespace(id=i, time_millis=ms, commit_kind=kind)

    name, starts, counts = snapshot_rate([snap(1, 0, "APPEND"), snap(2, 2 * hour + 1, "APPEND"),
                                          snap(3, 2 * hour + 2, "COMPACT")])
    assert name == "5 minutes" and len(starts) == 25 and starts[-1] == 2 * hour
    assert counts == {"APPEND": [1] + [0] * 23 + [1], "COMPACT": [0] * 24 + [1]}


def test_errors_are_shown_without_the_credentials() -> None:
    from paimon_provider.plugins.app import redact

    message = f"OSError: signature of key {SECRET_KEY} rejected by http://127.0.0.1:1"
    assert redact(message, [SECRET_KEY, ""]) == "OSError: signature of key *** rejected by http://127.0.0.1:1"


def test_pages_require_an_authenticated_user_with_access(ui: tuple[TestClient, Catalog, dict[str, str]]) -> None:
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    client, _, _ = ui
    for path in ("/", "/paimon_ui/sales/orders"):
        assert _get(client, path, {}).status_code == 401
        assert _get(client, path, {"_token": "not-a-jwt"}).status_code == 403
    # a user without a role may read no connection: the list is empty and the table page forbidden
    nobody = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username="nobody", role=None))
    listing = _get(client, "/", {"_token": nobody})
    assert listing.status_code == 200 and "paimon_ui" not in listing.text
    assert _get(client, "/paimon_ui/sales/orders", {"_token": nobody}).status_code == 403
    assert _get(client, "/nope/sales/orders", {"_token": nobody}).status_code == 403  # not even whether it exists
    # a bearer token works as for Airflow's API
    admin = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
    client.cookies.clear()
    assert client.get("/", headers={"Authorization": f"Bearer {admin}"}).status_code == 200


def test_the_plugin_registers_the_app_and_the_nav_link() -> None:
    from paimon_provider.get_provider_info import get_provider_info
    from paimon_provider.plugins.plugin import PaimonUIPlugin

    assert get_provider_info()["plugins"] == [
        {"name": "paimon", "plugin-class": "paimon_provider.plugins.plugin.PaimonUIPlugin"}]
    assert [a["url_prefix"] for a in PaimonUIPlugin().fastapi_apps] == ["/paimon"]
    assert [(v["destination"], v["href"]) for v in PaimonUIPlugin.external_views] == [
        ("nav", "paimon/"), ("dag", "paimon/dags/{DAG_ID}")]


def test_importing_the_plugin_builds_no_app() -> None:
    """Every Airflow process loads plugins (a task, for their macros); only the API server needs the app."""
    import subprocess
    import sys

    code = ("import sys, airflow.plugins_manager, paimon_provider.plugins.plugin\n"
            "print(sorted(m for m in ('fastapi', 'airflow.api_fastapi.core_api.security', 'pyarrow') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_airflow_loads_the_plugin_from_the_provider() -> None:
    from airflow.providers_manager import ProvidersManager

    pm = ProvidersManager()
    pm.initialize_providers_plugins()
    ours = [p for p in pm.plugins if p.provider_name == "airflow-provider-paimon"]
    assert [(p.name, p.plugin_class) for p in ours] == [("paimon", "paimon_provider.plugins.plugin.PaimonUIPlugin")]


def test_the_plugin_is_an_airflow_plugins_entry_point() -> None:
    """Airflow reads a provider's ``plugins`` only with ``[core] lazy_discover_providers`` off (default on): the
    ``airflow.plugins`` entry point loads it in every deployment (the live Airflow test checks it end to end)."""
    import pathlib
    import tomllib

    project = tomllib.loads((pathlib.Path(__file__).parents[3] / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["airflow.plugins"] == {"paimon": "paimon_provider.plugins.plugin:PaimonUIPlugin"}
