"""The Airflow plugin of the provider (the ``plugins`` entry of its provider info): the ``/paimon`` app and its
nav link."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from paimon_provider.plugins.app import URL_PREFIX, app_spec

EXTERNAL_VIEW = {"name": "Paimon tables", "href": f"{URL_PREFIX.lstrip('/')}/", "destination": "nav",
                 "category": "browse", "url_route": "paimon"}
"""The nav entry: Browse -> Paimon tables, the list page in an iframe of the UI (``url_route``; ``href`` relative
to the UI's base URL, so that it works behind a path prefix)."""


class PaimonUIPlugin(AirflowPlugin):
    """Mounts the read-only Paimon table pages under ``/paimon`` and links them from the UI's Browse menu."""

    name = "paimon"
    fastapi_apps = [app_spec()]
    external_views = [EXTERNAL_VIEW]
