"""The Paimon pages of the provider's UI plugin in the live Airflow (its API server mounts them under /paimon) and
in a real browser: the Browse menu's page lists the connection's tables, a table page shows the engine's values
and links the Airflow run that wrote a snapshot. Screenshots into ``$PAIMON_UI_SCREENSHOTS`` when set (docs/ui)."""

from __future__ import annotations

import os
import pathlib
import re
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.plugins.maintenance_view import snapshot_rate, targets, threshold_text

from table_engine import Catalog
from table_engine.ops.maintain import plan_table
from table_engine.run_identity import RunIdentity
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.lifecycle.planner import compaction_triggers
from tests.dags.test_trigger_forms import browser  # noqa: F401 - the module's Chromium fixture
from tests.live_airflow import LiveAirflow

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(900)]

TABLE = "ui.page_orders"
SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    pa.field("amount", pa.float64())])


def page_table(warehouse: str) -> Any:
    """A partitioned primary-key table with snapshots written by an (illustrative) Airflow run, one partition
    compacted, a tag, a branch and a consumer, and a compaction due (a bucket with more level-0 files than
    ``num-sorted-run.compaction-trigger``: the page's plan is not empty)."""
    catalog = Catalog(warehouse)
    table = catalog.create_table(TABLE, SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "2", "write-only": "true"})
    run = RunIdentity("paimon_lake_ods", "manual__2026-11-27T08:00:00+00:00", "load_ods")
    for day in ("2026-11-25", "2026-11-26", "2026-11-27"):
        table.write(pa.table({"dt": [day] * 50, "id": list(range(50)), "amount": [float(i) for i in range(50)]},
                             schema=SCHEMA), properties=run.to_properties())
    table.write(pa.table({"dt": ["2026-11-27"] * 10, "id": list(range(10)), "amount": [1.0] * 10}, schema=SCHEMA))
    table.maintenance.compact(full=True, partitions=[{"dt": "2026-11-25"}])  # one partition compacted: two levels
    for i in range(4):  # id 0's bucket of dt=2026-11-27: six level-0 files, past the trigger (5): compaction due
        table.write(pa.table({"dt": ["2026-11-27"], "id": [0], "amount": [float(i)]}, schema=SCHEMA))
    table.create_tag("daily-2026-11-26", 2)
    table.create_branch("audit")
    ConsumerManager.of(table.store).create("downstream", 2)
    return catalog.get_table(TABLE)


def test_table_pages_in_a_browser(live: tuple[LiveAirflow, dict[str, str]], browser: Any) -> None:  # noqa: F811
    import importlib.metadata

    entry_points = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="airflow.plugins")}
    assert entry_points.get("paimon") == "paimon_provider.plugins.plugin:PaimonUIPlugin", (
        "the package's airflow.plugins entry point is not installed: reinstall it (`make install`, pip install -e .)")
    af, lake = live
    table = page_table(lake["warehouse"])
    shots = os.environ.get("PAIMON_UI_SCREENSHOTS")
    shot_dir = pathlib.Path(shots).resolve() if shots else None
    page = browser.new_page(viewport={"width": 1280, "height": 1100})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(af.base)
               else route.abort())  # nothing but the live Airflow on 127.0.0.1

    # Airflow loaded the plugin: its app and its Browse menu entry, which opens the list page inside the UI (an
    # iframe at /plugin/paimon)
    status, body = af.call("GET", "/api/v2/plugins")
    assert status == 200, body
    ours = [p for p in body["plugins"] if p["name"] == "paimon"]
    assert [v["href"] for v in ours[0]["external_views"]] == ["paimon/", "paimon/dags/{DAG_ID}"], body
    assert [a["url_prefix"] for a in ours[0]["fastapi_apps"]] == ["/paimon"], body
    page.goto(f"{af.base}/plugin/paimon", timeout=60_000)
    frame = page.frame_locator("iframe")
    frame.get_by_role("link", name=TABLE).wait_for(timeout=60_000)
    listing = frame.locator("body").inner_text()
    assert "paimon_default" in listing and TABLE in listing and "ods.order_events" in listing, listing
    if shot_dir is not None:
        page.screenshot(path=str(shot_dir / "paimon_tables.png"))

    # the table page: the engine's figures, the run that wrote a snapshot linked to its run page
    frame.get_by_role("link", name=TABLE).click(timeout=60_000)
    try:
        frame.get_by_role("heading", name=TABLE).wait_for(timeout=60_000)
    except Exception as e:  # noqa: BLE001 - say what the frame shows instead (an error page names the error)
        raise AssertionError(f"no table page: {frame.locator('body').inner_text()}") from e
    text = frame.locator("body").inner_text()
    health = table.maintenance.health()
    assert f"rows\n{health.rows}" in text and f"files\n{health.files}" in text, text
    latest = table.latest_snapshot()
    assert latest is not None and f"{latest.id}\t{latest.commit_kind}\t{latest.total_record_count}" in text, text
    assert "daily-2026-11-26" in text and "audit" in text and "downstream" in text, text
    # every column has a header: the tags' and consumers' last one says whether it is expired
    assert "retained\texpired\ndaily-2026-11-26\t2\t" in text and text.count("\texpired\n") == 2, text
    # the maintenance plan maintain would run on this table (a compaction is due), its triggers in the health
    # figures weighed as the plan weighs them, and the snapshot rate
    plan = plan_table(table, health=health)
    assert plan.actions and "nothing due" not in text, (plan, text)
    assert f"Last plan (maintenance due at snapshot {plan.snapshot_id})" in text, text
    for a in plan.actions:
        assert f"{a.kind}\t{targets(a)}\t{a.reason}\t{threshold_text(a)}" in text, text
    for trigger in compaction_triggers(health, table.options):
        assert f"{trigger.what}\n{trigger.text()}" in text, text
    name, _, counts = snapshot_rate(list(table.snapshots()))
    markup = frame.locator("body").inner_html()
    rate = markup[markup.index("<h2>Snapshot rate"):markup.index("<h2>Snapshots ")]
    assert "<svg" in rate and f"<title>snapshots per {name} by commit kind</title>" in rate, rate
    counted: dict[str, int] = {}
    for kind, n in re.findall(r"<title>([A-Z]+): (\d+)</title></rect>", rate):
        counted[kind] = counted.get(kind, 0) + int(n)
    assert counted == {kind: sum(bars) for kind, bars in counts.items()}, (counted, counts)
    assert frame.locator("svg", has_text=f"snapshots per {name} by commit kind").is_visible()
    # the (illustrative) run that wrote the snapshots is not a run of this Airflow: named, not linked (a link would
    # lead to a page that does not exist); a run that exists is linked and clicked in tests/dags/test_trigger_forms.py
    assert "paimon_lake_ods / manual__2026-11-27T08:00:00+00:00 load_ods (not a run of this Airflow)" in text, text
    assert frame.get_by_role("link", name="paimon_lake_ods / manual__2026-11-27T08:00:00+00:00").count() == 0
    if shot_dir is not None:
        height = frame.locator("html").evaluate("e => e.scrollHeight")  # the whole page, every section
        page.set_viewport_size({"width": 1280, "height": max(1100, int(height) + 40)})
        page.screenshot(path=str(shot_dir / "paimon_table.png"))

    # a DAG page's "Paimon tables" tab: the tables of its Assets, linked to the table page and the Asset page (which
    # the link opens in the UI itself)
    page.set_viewport_size({"width": 1280, "height": 1100})
    page.goto(f"{af.base}/dags/paimon_lake_dwd/plugin/paimon-tables", timeout=60_000)
    tab = page.frame_locator("iframe")
    tab.get_by_role("heading", name="Paimon tables of paimon_lake_dwd").wait_for(timeout=60_000)
    listed = tab.locator("body").inner_text()
    assert "ods.order_events\tpaimon_default\tschedule" in listed, listed
    assert "dwd.orders\tpaimon_default\twrites" in listed, listed
    tab.get_by_role("link", name="paimon://paimon_default/ods/order_events").click(timeout=60_000)
    page.wait_for_url(re.compile(r".*/assets/\d+$"), timeout=60_000)
    page.close()
