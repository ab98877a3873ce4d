"""The trigger forms of the Airflow UI in a real browser: headless Chromium (Debian's ``chromium``, driven by
Playwright) against the session's live Airflow (``make airflow``'s, see :mod:`tests.live_airflow`).

Every DAG with Params has its form opened (and screenshotted into ``$PAIMON_UI_SCREENSHOTS`` when set, e.g.
``PAIMON_UI_SCREENSHOTS=docs/ui``). Each maintenance form is submitted the way a person does it: with its defaults,
with optional fields left empty, with filled-in values; each run is waited for and the table is checked through the
engine's read-only API (snapshots, tags, files). Bad values (an unknown or malformed table, a bad duration, a bad
snapshot id, a malformed partition, a rollback with nothing to roll back to) are refused by the form naming the
field, or fail their task at once (no retry), the task log (read through the REST API) ending with two ERROR lines:
the command and the table, and the engine's one-line error. Only one run does Spark work (a compaction of two small
tables: an upkeep compaction emits no Asset event, so no layer run is queued); the other jobs change table metadata
and run the engine's CLI on the worker. The connections page's Test button passes for the demo connection and fails
for a warehouse that does not exist; the rollback DAG keeps one version while its table changes.

Runs are submitted with "Unpause on trigger" unchecked, and the DAG is unpaused through the REST API only once the
queued run counts against ``max_active_runs``, then paused again: otherwise the scheduler may first add the
scheduled run of the latest interval (all default tables). The scheduler still adds that run the moment the form's
run ends, before the DAG is paused again; it is ended at once (marked failed), or it would run on every lake table
and hold up the next run of the form.
"""

from __future__ import annotations

import os
import pathlib
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import example_lake as sample
import pytest

from table_engine import Catalog
from tests.live_airflow import LiveAirflow

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow,
              pytest.mark.timeout(1800)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
FORMS = ("paimon_compact", "paimon_expire_snapshots", "paimon_daily_tag", "paimon_expire_partitions",
         "paimon_remove_orphan_files", "paimon_rollback", "paimon_lake_ods", "paimon_wap",
         # the metadata hygiene forms (dags/paimon_hygiene.py): opened (and screenshotted) only; their runs are
         # tests/dags/test_hygiene_dags.py
         "paimon_expire_changelogs", "paimon_compact_manifest", "paimon_remove_unexisting_files", "paimon_repair",
         "paimon_clear_consumers", "paimon_reset_consumer", "paimon_audit_branches")
UI_TABLE = "ui.orders"
RUN_TIMEOUT = 600


def _skip_reason() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is absent (Debian package chromium; `make test` installs it when run as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (dev extras)"
    return None


class Form:
    """The trigger dialog of one DAG in the browser."""

    def __init__(self, page: Any, af: LiveAirflow, dag_id: str) -> None:
        self.page, self.af, self.dag_id = page, af, dag_id
        page.goto(f"{af.base}/dags/{dag_id}", timeout=60_000)
        page.get_by_role("button", name="Trigger").first.click(timeout=60_000)
        self.dialog = page.get_by_role("dialog")
        self.dialog.get_by_text("Run Parameters").wait_for(timeout=60_000)
        unpause = self.dialog.get_by_text(f"Unpause {dag_id} on trigger")
        if unpause.count():  # the test unpauses once the run is queued (see the module docstring)
            box = self.dialog.locator("input[type=checkbox]").first
            if box.is_checked():
                unpause.click()

    def field(self, name: str) -> Any:
        return self.dialog.locator(f"[name=element_{name}]").first

    def fill(self, **values: Any) -> Form:
        for name, value in values.items():
            if isinstance(value, list):
                self.field(name).fill("\n".join(value))
            elif isinstance(value, bool):
                self.field(name).set_checked(value, force=True)
            else:
                self.field(name).fill("" if value is None else str(value))
        return self

    def choose(self, name: str, option: str) -> Form:
        self.dialog.locator(f"[name=element_{name}]").locator("xpath=..").click()
        self.page.get_by_role("option", name=option, exact=True).click()
        return self

    def screenshot(self, directory: pathlib.Path | None, name: str | None = None) -> None:
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            self.dialog.screenshot(path=str(directory / f"{name or self.dag_id}.png"))

    def submit(self) -> str:
        """Click Trigger; the id of the run it created (AssertionError with the form's text if it created none)."""
        before = set(self.af.run_ids(self.dag_id))
        button = self.dialog.get_by_role("button", name="Trigger", exact=True)
        assert button.is_enabled(), f"{self.dag_id}: Trigger is disabled:\n{self.dialog.inner_text()}"
        button.click()
        created = self.af.wait(f"a new {self.dag_id} run", lambda: set(self.af.run_ids(self.dag_id)) - before
                               or self._refused(), 60, interval=1)
        assert isinstance(created, set), f"{self.dag_id}: the form refused the run:\n{created}"
        (run_id,) = created
        return str(run_id)

    def refused(self) -> str:
        """Click Trigger expecting a refusal; the form's message."""
        self.dialog.get_by_role("button", name="Trigger", exact=True).click()
        message = self.af.wait(f"{self.dag_id}'s form to refuse", self._refused, 60, interval=1)
        assert isinstance(message, str)
        return message

    def cannot_submit(self) -> str:
        """A form that cannot be submitted as filled in: its Trigger button disabled, or a click refused; what it
        says."""
        button = self.dialog.get_by_role("button", name="Trigger", exact=True)
        if button.is_disabled():
            return f"Trigger disabled: {self.dialog.inner_text()}"
        return self.refused()

    def _refused(self) -> str | None:
        text = self.dialog.inner_text() if self.dialog.count() else ""
        return text if "Bad Request" in text or "Invalid input" in text else None

    def close(self) -> None:
        if self.dialog.count():
            self.dialog.get_by_role("button", name="Close").first.click()


class Runs:
    """Runs the forms created, driven to their end through the REST API."""

    def __init__(self, af: LiveAirflow) -> None:
        self.af = af

    def start(self, dag_id: str, run_id: str) -> None:
        self.af.drop_other_runs(dag_id, run_id)  # a scheduled run the scheduler added meanwhile: not what was asked
        scheduled = not self.af.db_flag(f"SELECT next_dagrun_create_after IS NULL FROM dag WHERE dag_id = '{dag_id}'")
        if scheduled:  # (a DAG without a schedule gets no scheduled run to race with)
            self.af.wait(f"{run_id} to count against max_active_runs", lambda: self.af.db_flag(
                f"SELECT exceeds_max_non_backfill FROM dag WHERE dag_id = '{dag_id}'"), 120, interval=1)
        self.af.unpause(dag_id)

    def finish(self, dag_id: str, run_id: str) -> str:
        state = self.af.wait(f"{dag_id} run {run_id}", lambda: self._ended(dag_id, run_id), RUN_TIMEOUT, interval=1)
        self.af.pause(dag_id)
        # the scheduler adds the run of the latest schedule interval as soon as this one ends, unless the DAG was
        # paused first: end it before it runs its tasks (on every lake table) or holds up the next run of the form
        self.af.drop_other_runs(dag_id, run_id)
        return str(state)

    def _ended(self, dag_id: str, run_id: str) -> str | None:
        state = self.af.run_state(dag_id, run_id)
        return state if state in ("success", "failed") else None

    def run(self, dag_id: str, run_id: str) -> str:
        self.start(dag_id, run_id)
        return self.finish(dag_id, run_id)

    def tasks(self, dag_id: str, run_id: str) -> dict[str, dict[str, Any]]:
        """``task_id`` or ``task_id[<rendered map index>]`` -> the task instance."""
        status, body = self.af.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        assert status == 200, body
        out = {}
        for ti in body["task_instances"]:
            key = ti["task_id"] if ti["map_index"] < 0 else f"{ti['task_id']}[{ti['rendered_map_index']}]"
            out[key] = ti
        return out

    def log_entries(self, dag_id: str, run_id: str, ti: dict[str, Any]) -> list[dict[str, Any]]:
        """A task's log entries (structured: ``event``, ``level``, ``error_detail``), group markers left out."""
        path = (f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{ti['task_id']}/logs/{ti['try_number']}"
                f"?map_index={ti['map_index']}&full_content=true")
        status, body = self.af.call("GET", path)
        assert status == 200, body
        return [e for e in body["content"] if not str(e.get("event", "")).startswith("::")]

    @staticmethod
    def last_two_lines(entries: list[dict[str, Any]]) -> tuple[str, str]:
        """The two ERROR lines a failed task's log ends with (the summary and ``error: <the engine's error>``),
        each once. Airflow's task runner adds its own record of the failure after them ("Task failed with
        exception", with the exception -- whose message is these two lines -- and its frames): an operator cannot
        leave it out (ADR 0022)."""
        ours = [e for e in entries if e.get("event") != "Task failed with exception"]
        last = ours[-2:]
        assert all(e.get("level") == "error" for e in last), last
        summary, error = (str(e["event"]) for e in last)
        texts = [str(e.get("event")) for e in entries]
        assert texts.count(summary) == 1 and texts.count(error) == 1, texts[-8:]
        runner = entries[len(ours):]  # Airflow's record, if any, is the last entry
        assert [str(e.get("event")) for e in runner] in ([], ["Task failed with exception"]), texts[-4:]
        if runner:
            assert [f"{d['exc_value']}" for d in runner[0].get("error_detail") or []][:1] == [f"{summary}\n{error}"]
        return summary, error

    def asset_events(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        """The Asset events a run emitted."""
        query = urllib.parse.urlencode({"source_dag_id": dag_id, "source_run_id": run_id})  # run ids hold '+'
        status, body = self.af.call("GET", f"/api/v2/assets/events?{query}")
        assert status == 200, body
        return list(body["asset_events"])

    def log_tail(self, dag_id: str, run_id: str, ti: dict[str, Any], lines: int = 3) -> str:
        """The last ``lines`` entries of a task's log (their messages and exceptions), as text."""
        path = (f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{ti['task_id']}/logs/{ti['try_number']}"
                f"?map_index={ti['map_index']}&full_content=true")
        status, body = self.af.call("GET", path)
        assert status == 200, body
        entries = [e for e in body["content"] if not str(e.get("event", "")).startswith("::")]
        out = []
        for e in entries[-lines:]:
            out.append(str(e.get("event", "")))
            out.extend(f"{d['exc_type']}: {d['exc_value']}" for d in e.get("error_detail") or [])
        return "\n".join(out)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=120_000)
        try:
            yield b
        finally:
            b.close()


def ui_table(warehouse: str) -> Any:
    """``ui.orders``: the DWD definition (write-only, so compaction has work), three batches, snapshots 1-3."""
    from paimon_provider.operators.table import create_table

    from table_engine import Catalog

    d = sample.DWD
    catalog = Catalog(warehouse)
    options = {k: v for k, v in d.options.items() if k != "snapshot.num-retained.min"}
    create_table(catalog, UI_TABLE, d.columns, primary_keys=d.primary_keys, partition_keys=d.partition_keys,
                 options=options)
    table = catalog.get_table(UI_TABLE)
    for batch in sample.BATCHES:
        table.write(sample.order_events(batch))
    return table


def paimon_conn_fields() -> dict[str, dict[str, Any]]:
    """The ``conn-fields`` of the paimon connection type (the provider info)."""
    from paimon_provider.get_provider_info import get_provider_info

    (conn_type,) = [c for c in get_provider_info()["connection-types"] if c["connection-type"] == "paimon"]
    fields: dict[str, dict[str, Any]] = conn_type["conn-fields"]
    return fields


def test_trigger_forms_in_a_browser(live: tuple[LiveAirflow, dict[str, str]], browser: Any) -> None:
    af, lake = live
    runs = Runs(af)
    for dag_id in FORMS:
        af.wait(f"DAG {dag_id} parsed", lambda d=dag_id: af.call("GET", f"/api/v2/dags/{d}")[0] == 200, 300)
        # paused, as Airflow starts them (an earlier test of the session may have unpaused one): no scheduled runs
        af.pause(dag_id)
        af.drop_other_runs(dag_id)
    shots = os.environ.get("PAIMON_UI_SCREENSHOTS")
    shot_dir = pathlib.Path(shots).resolve() if shots else None
    page = browser.new_page(viewport={"width": 1280, "height": 2200})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(af.base)
               else route.abort())  # nothing but the live Airflow on 127.0.0.1
    table = ui_table(lake["warehouse"])

    def form(dag_id: str) -> Form:
        return Form(page, af, dag_id)

    # Admin -> Connections: the demo connection is listed, its Test button passes; a wrong warehouse fails, saying so
    # (made as the UI's form makes it: no port, which Airflow 3.3.2's list button sends as 0; the provider's
    # middleware lets it through)
    status, body = af.call("POST", "/api/v2/connections", {
        "connection_id": "paimon_wrong", "conn_type": "paimon",
        "extra": '{"warehouse": "/nonexistent/warehouse", "spark_conn_id": "spark_default"}'})
    assert status == 201, body
    results = {}
    for conn_id in ("paimon_default", "paimon_wrong"):
        page.goto(f"{af.base}/connections", timeout=60_000)  # afresh: no tooltip of the previous row's button
        with page.expect_response(lambda r: r.url.endswith("/api/v2/connections/test"), timeout=60_000) as answer:
            page.get_by_role("row").filter(has_text=conn_id).get_by_label("Test Connection").click(timeout=60_000)
        assert answer.value.status == 200, answer.value.text()
        results[conn_id] = answer.value.json()
    assert results["paimon_default"]["status"] is True, results
    assert "lists databases ['dwd', 'dws', 'ods'" in results["paimon_default"]["message"], results
    assert results["paimon_wrong"]["status"] is False, results
    assert results["paimon_wrong"]["message"].startswith("warehouse /nonexistent/warehouse does not exist"), results
    if shot_dir is not None:
        page.screenshot(path=str(shot_dir / "connections.png"))
    assert af.call("DELETE", "/api/v2/connections/paimon_wrong")[0] == 204

    # Edit of the connection made in code (form_extra): every field of the form, its Spark conf as JSON text
    page.goto(f"{af.base}/connections", timeout=60_000)
    page.get_by_role("row").filter(has_text="paimon_default").get_by_label("Edit Connection").click(timeout=60_000)
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Extra Fields", exact=True).click(timeout=60_000)
    dialog.get_by_text("Spark conf", exact=True).wait_for(timeout=60_000)
    text = dialog.inner_text()
    labels = [f["label"] for f in paimon_conn_fields().values()]
    assert [label for label in labels if label not in text] == [], text
    assert "[object Object]" not in text, text
    if shot_dir is not None:
        page.screenshot(path=str(shot_dir / "connection_edit.png"))
    page.keyboard.press("Escape")

    # every form opens (screenshots of their defaults)
    for dag_id in FORMS:
        f = form(dag_id)
        if dag_id == "paimon_wap":  # the ODS form, plus the audit's checks (JSON) and the fast-forward's switch
            text = f.dialog.inner_text()
            assert all(label in text for label in ("Sample batch", "Checks", "Publish even if main moved")), text
        f.screenshot(shot_dir)
        f.close()

    # (1) defaults: each form submits as it opens (paimon_compact's empty partitions included); the cheap ones run
    # on the lake's tables (created empty, as by `make airflow`: nothing to do, nothing fails)
    f = form("paimon_compact")
    compact_default = f.submit()  # not run: it would be Spark on every lake table
    status, created = af.call("GET", f"/api/v2/dags/paimon_compact/dagRuns/{compact_default}")
    assert created["conf"]["partitions"] is None and created["conf"]["mode"] == "minor", created
    assert af.call("DELETE", f"/api/v2/dags/paimon_compact/dagRuns/{compact_default}")[0] == 204
    for dag_id in ("paimon_expire_snapshots", "paimon_expire_partitions", "paimon_remove_orphan_files"):
        run_id = form(dag_id).submit()  # accepted as they open; deleted unrun (the same jobs run filled in below)
        assert af.call("DELETE", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")[0] == 204
    run_id = form("paimon_daily_tag").submit()  # run: every lake table, a mapped task labelled by each
    assert runs.run("paimon_daily_tag", run_id) == "success", runs.tasks("paimon_daily_tag", run_id)
    tasks = runs.tasks("paimon_daily_tag", run_id)
    assert {f"create_tag[{t}]" for t in sample.ALL_TABLES} <= set(tasks), tasks

    # (3) filled in: a daily tag of ui.orders, then a fourth batch
    f = form("paimon_daily_tag").fill(tables=[UI_TABLE], tag_prefix="ui", time_retained="2 d")
    assert runs.run("paimon_daily_tag", f.submit()) == "success"
    (tag,) = table.list_tags()
    assert tag.startswith("ui-") and table.tag_snapshot(tag).id == 3
    table.write(sample.order_events(1).slice(0, 2))
    assert table.latest_snapshot_id() == 4

    # the rollback form is built without reading the warehouse: labelled fields, and where to see the targets
    f = form("paimon_rollback")
    text = f.dialog.inner_text()
    assert all(label in text for label in ("Snapshot id or tag", "list_snapshots_and_tags")), text
    f.screenshot(shot_dir)
    f.close()

    # rollback: (1) what to roll back to is one required field: the form cannot be submitted without it
    f = form("paimon_rollback").fill(table=UI_TABLE)
    message = f.cannot_submit()
    assert message.startswith("Trigger disabled") and "Snapshot id or tag\n*" in message \
        and "This field is required" in message, message
    f.screenshot(shot_dir, "paimon_rollback_required")
    f.close()
    assert table.latest_snapshot_id() == 4
    # (2) a tag
    run_id = form("paimon_rollback").fill(table=UI_TABLE, version=tag).submit()
    assert runs.run("paimon_rollback", run_id) == "success"
    listed = runs.log_tail("paimon_rollback", run_id, runs.tasks("paimon_rollback", run_id)["list_snapshots_and_tags"],
                          lines=12)
    assert f"tags of {UI_TABLE}: {tag} (snapshot 3)" in listed and f"latest snapshots of {UI_TABLE}: 4 (" in listed, \
        listed
    assert table.latest_snapshot_id() == 3
    # (3) a snapshot id
    run_id = form("paimon_rollback").fill(table=UI_TABLE, version=2).submit()
    assert runs.run("paimon_rollback", run_id) == "success"
    assert table.latest_snapshot_id() == 2 and table.list_tags() == []
    # a snapshot that does not exist: the task fails at once, its log ending with our two lines
    run_id = form("paimon_rollback").fill(table=UI_TABLE, version=99).submit()
    assert runs.run("paimon_rollback", run_id) == "failed"
    ti = runs.tasks("paimon_rollback", run_id)["rollback"]
    summary, error = runs.last_two_lines(runs.log_entries("paimon_rollback", run_id, ti))
    assert summary.startswith("rollback of table ui.orders failed"), summary
    assert error.startswith("error: snapshot 99 of table"), error
    assert table.latest_snapshot_id() == 2
    # a malformed table name: the form refuses it in one line, naming the field as the form does and the rule in
    # words (the provider's middleware; Airflow's own message dumps the field's JSON schema)
    message = form("paimon_rollback").fill(table="ui orders", version=1).refused()
    assert "Invalid input for Table (table): 'ui orders' is not valid: The table to " in message, message
    assert "Failed validating" not in message and "^[" not in message, message
    page.keyboard.press("Escape")

    # compaction (the Spark runs): filled in, partitions left empty (all), on ui.orders (lookup changelog) and on
    # the lake's ODS table (append: a compaction changes no data), each with files to compact
    table.write(sample.order_events(3))  # snapshot 3: files to compact
    ods = Catalog(lake["warehouse"]).get_table(sample.ODS.name)
    ods_before = ods.latest_snapshot_id() or 0  # an earlier test of the session may have run the ODS layer
    for batch in (1, 2):
        ods.write(sample.order_events(batch))
    dwd_runs = set(af.run_ids("paimon_lake_dwd"))
    f = form("paimon_compact").fill(tables=[UI_TABLE, sample.ODS.name], partitions=None).choose("mode", "full")
    run_id = f.submit()
    assert runs.run("paimon_compact", run_id) == "success", runs.tasks("paimon_compact", run_id)
    latest, ods_latest = table.latest_snapshot(), ods.latest_snapshot()
    assert latest is not None and str(latest.commit_kind) == "COMPACT"
    assert ods_latest is not None and str(ods_latest.commit_kind) == "COMPACT" and ods_latest.id == ods_before + 3
    assert {f"compact[{UI_TABLE}]", f"compact[{sample.ODS.name}]"} <= set(runs.tasks("paimon_compact", run_id))
    # a compaction is data for the layers only if it produced changelog: no event for ODS, so no DWD run queued
    events = runs.asset_events("paimon_compact", run_id)
    assert not [e for e in events if e["uri"].endswith("/ods/order_events")], events
    assert [e["extra"]["changelog_records"] for e in events] == (
        [latest.changelog_record_count] if latest.changelog_record_count else []), (
        events, runs.log_tail("paimon_compact", run_id, runs.tasks("paimon_compact", run_id)[f"compact[{UI_TABLE}]"],
                              lines=6))
    status, queued = af.call("GET", "/api/v2/dags/paimon_lake_dwd/assets/queuedEvents")
    assert status == 404 or not queued.get("queued_events"), queued
    assert set(af.run_ids("paimon_lake_dwd")) == dwd_runs  # (an earlier test of the session may have unpaused it)
    # the table page inside the UI (Browse -> Paimon tables): its link to the run that compacted ODS navigates the
    # UI itself, out of the plugin's frame
    page.goto(f"{af.base}/plugin/paimon", timeout=60_000)
    frame = page.frame_locator("iframe")
    frame.locator("a", has_text=sample.ODS.name).first.click(timeout=60_000)
    frame.locator("a[data-airflow]", has_text=run_id).first.click(timeout=60_000)
    page.wait_for_url(f"**/dags/paimon_compact/runs/{urllib.parse.quote(run_id, safe='')}**", timeout=60_000)
    # a malformed partition fails at once, before any Spark work
    run_id = form("paimon_compact").fill(tables=[UI_TABLE], partitions="dt").submit()
    assert runs.run("paimon_compact", run_id) == "failed"
    ti = runs.tasks("paimon_compact", run_id)[f"compact[{UI_TABLE}]"]
    assert ti["state"] == "failed" and ti["try_number"] == 1  # the DAG retries, but not this
    summary, error = runs.last_two_lines(runs.log_entries("paimon_compact", run_id, ti))
    assert summary.startswith("compact of table ui.orders failed") and \
        error == "error: partition spec 'dt' must look like 'k=v,k2=v2' (item 'dt')", (summary, error)
    compacted = table.latest_snapshot_id()

    # snapshot expiry: (2) older_than left empty (the table's snapshot.time-retained), at most 2 kept; a table that
    # does not exist fails its own task at once, labelled by its name
    run_id = form("paimon_expire_snapshots").fill(tables=[UI_TABLE, "ui.missing"], retain_min=1, retain_max=2,
                                                  older_than=None).submit()
    assert runs.run("paimon_expire_snapshots", run_id) == "failed"
    tasks = runs.tasks("paimon_expire_snapshots", run_id)
    assert tasks[f"expire_snapshots[{UI_TABLE}]"]["state"] == "success", tasks
    assert [s.id for s in table.snapshots()] == [compacted - 1, compacted]
    ti = tasks["expire_snapshots[ui.missing]"]
    assert ti["state"] == "failed" and ti["try_number"] == 1, ti
    tail = runs.log_tail("paimon_expire_snapshots", run_id, ti)
    assert "expire-snapshots of table ui.missing failed" in tail and "'ui.missing' does not exist" in tail, tail
    # a bad duration fails at once, saying which field
    run_id = form("paimon_expire_snapshots").fill(tables=[UI_TABLE], older_than="5 fortnights ago").submit()
    assert runs.run("paimon_expire_snapshots", run_id) == "failed"
    ti = runs.tasks("paimon_expire_snapshots", run_id)[f"expire_snapshots[{UI_TABLE}]"]
    assert ti["state"] == "failed" and ti["try_number"] == 1, ti
    tail = runs.log_tail("paimon_expire_snapshots", run_id, ti)
    assert f"expire-snapshots of table {UI_TABLE} failed" in tail and "older_than" in tail \
        and "'5 fortnights' before 'ago' is not a duration" in tail, tail

    # orphan files: filled in, an old orphan goes, the data stays
    rows = table.read().num_rows
    bucket_dir = next(pathlib.Path(table.path).glob("dt=*/bucket-*"))
    orphan = bucket_dir / "data-orphan-old.parquet"
    orphan.write_bytes(b"not referenced")
    old = time.time() - 2 * 86400
    os.utime(orphan, (old, old))
    run_id = form("paimon_remove_orphan_files").fill(tables=[UI_TABLE], older_than="1 d ago", dry_run=False).submit()
    assert runs.run("paimon_remove_orphan_files", run_id) == "success"
    assert not orphan.exists() and table.read().num_rows == rows

    # partition expiry: filled in, partitions older than a day are dropped
    run_id = form("paimon_expire_partitions").fill(tables=[UI_TABLE], expiration_time="1 d").submit()
    assert runs.run("paimon_expire_partitions", run_id) == "success"
    assert table.read().num_rows == 0

    # write-audit-publish from its form, as it opens: batch 1 written into an audit branch of the ODS table, checked
    # there, published to main by a fast-forward (main's Asset event), the branch and its tag gone
    ods_rows, ods_latest_before = ods.read().num_rows, ods.latest_snapshot_id()
    run_id = form("paimon_wap").submit()
    assert runs.run("paimon_wap", run_id) == "success", runs.tasks("paimon_wap", run_id)
    assert ods.read().num_rows == ods_rows + sample.order_events(1).num_rows
    assert (ods.latest_snapshot_id() or 0) > (ods_latest_before or 0) and ods.list_branches() == []
    published = runs.asset_events("paimon_wap", run_id)
    assert [e["uri"] for e in published] == ["paimon://paimon_default/ods/order_events"], published

    # the rollback DAG was parsed again and again while its table took batches, tags and rollbacks: one version
    status, versions = af.call("GET", "/api/v2/dags/paimon_rollback/dagVersions")
    assert status == 200 and versions["total_entries"] == 1, versions
    page.close()
