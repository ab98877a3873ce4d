"""The Airflow plugin of the provider (the ``plugins`` entry of its provider info and an ``airflow.plugins`` entry
point): the ``/paimon`` app, its nav link and its DAG tab, the middleware that says a refused trigger form's error in
one line (:mod:`paimon_provider.plugins.form_errors`), and on Airflow 3.3.2 and earlier the middleware that lets the
Test button test a connection without a port (:mod:`paimon_provider.plugins.test_button`)."""

from __future__ import annotations

import functools
from typing import Any

from airflow.plugins_manager import AirflowPlugin

from paimon_provider.plugins import URL_PREFIX

EXTERNAL_VIEW = {"name": "Paimon tables", "href": f"{URL_PREFIX.lstrip('/')}/", "destination": "nav",
                 "category": "browse", "url_route": "paimon"}
"""The nav entry: Browse -> Paimon tables, the list page in an iframe of the UI (``url_route``; ``href`` relative
to the UI's base URL, so that it works behind a path prefix)."""


@functools.cache
def fastapi_apps() -> list[dict[str, Any]]:
    """The plugin's ``fastapi_apps``, built once on first use."""
    from paimon_provider.plugins.app import app_spec

    return [app_spec()]


DAG_VIEW = {"name": "Paimon tables", "href": f"{URL_PREFIX.lstrip('/')}/dags/{{DAG_ID}}", "destination": "dag",
            "url_route": "paimon-tables"}
"""A tab on every DAG's page: the tables of the DAG's ``paimon://`` Assets, linked to their table pages and their
Asset pages (Airflow 3.3 has no ``asset`` destination for a view: this and the table page's link to its Asset are
the way between the two)."""


class PaimonUIPlugin(AirflowPlugin):
    """Mounts the read-only Paimon table pages under ``/paimon`` and links them from the UI's Browse menu.

    Every Airflow process loads plugins (a task, to integrate their macros), only the API server mounts apps: the app
    (FastAPI, Airflow's security module) is built when ``fastapi_apps`` is first read, not when this module is
    imported.
    """

    name = "paimon"
    external_views = [EXTERNAL_VIEW, DAG_VIEW]

    @property
    def fastapi_apps(self) -> list[dict[str, Any]]:  # type: ignore[override]  # noqa: D102 - see the class
        return fastapi_apps()

    @property
    def fastapi_root_middlewares(self) -> list[dict[str, Any]]:  # type: ignore[override]  # noqa: D102
        from paimon_provider.plugins.form_errors import OneLineParamErrors
        from paimon_provider.plugins.test_button import root_middlewares

        one_line = {"name": "paimon: a refused trigger form's error in one line (apache/airflow#49567)",
                    "middleware": OneLineParamErrors}
        return [*root_middlewares(), one_line]
