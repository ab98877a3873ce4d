"""The provider registers through its entry point, and Airflow shows its connection type, hooks and triggers."""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import subprocess
import sys

from paimon_provider.get_provider_info import get_provider_info


def test_entry_point_points_at_get_provider_info() -> None:
    eps = [ep for ep in importlib.metadata.entry_points(group="apache_airflow_provider")
           if ep.dist is not None and ep.dist.name == "airflow-provider-paimon"]
    assert [ep.value for ep in eps] == ["paimon_provider.get_provider_info:get_provider_info"]
    assert eps[0].load()() == get_provider_info()


def test_provider_info_is_valid_for_airflow() -> None:
    import json

    import airflow
    import jsonschema

    schema = json.loads((pathlib.Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    info = get_provider_info()
    jsonschema.validate(info, schema)
    assert info["package-name"] == importlib.metadata.metadata("airflow-provider-paimon")["Name"]
    modules = [m for section in ("hooks", "operators", "sensors", "triggers") for item in info[section]
               for m in item["python-modules"]]
    for module in modules:
        __import__(module)


def test_providers_manager_registers_the_connection_type_and_its_form() -> None:
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    pm = ProvidersManager()
    assert "airflow-provider-paimon" in pm.providers
    hook = ProvidersManagerTaskRuntime().hooks["paimon"]
    assert hook is not None
    assert hook.hook_class_name == "paimon_provider.hooks.table.PaimonTableHook"
    assert hook.connection_id_attribute_name == "paimon_conn_id"
    widgets = {name for name in pm.connection_form_widgets if name.startswith("extra__paimon__")}
    assert widgets == {f"extra__paimon__{f}" for f in ("warehouse", "catalog_options", "spark_conn_id", "python",
                                                       "spark_conf", "s3_endpoint", "s3_region",
                                                       "s3_path_style_access", "s3_session_token", "metastore",
                                                       "uri", "jdbc_user", "jdbc_password", "catalog_key",
                                                       "lock_enabled", "token_provider", "hive_conf_dir")}
    # the form shows Warehouse first, and requires it (a non-nullable string); every other field is optional
    ours = [(name, w) for name, w in pm.connection_form_widgets.items() if name.startswith("extra__paimon__")]
    assert ours[0][0] == "extra__paimon__warehouse"
    assert ours[0][1].field["schema"] == {"type": "string", "minLength": 1, "title": "Warehouse"}
    assert all("null" in w.field["schema"]["type"] for _, w in ours[1:])
    sensitive = {name for name, w in pm.connection_form_widgets.items() if w.is_sensitive}
    assert "extra__paimon__s3_session_token" in sensitive
    assert "extra__paimon__jdbc_password" in sensitive  # masked in the form, as the session token
    # the catalog: Paimon's metastores, the choice optional (empty: filesystem)
    metastore = pm.connection_form_widgets["extra__paimon__metastore"].field["schema"]
    assert metastore["enum"] == ["filesystem", "jdbc", "hive", "rest", None]
    behaviour = pm.field_behaviours["paimon"]
    # the S3 access key is the login, the secret key the password (masked by Airflow)
    assert set(behaviour["hidden_fields"]) == {"host", "schema", "port", "extra"}
    assert behaviour["relabeling"] == {"login": "S3 access key (rest: DLF access key id)",
                                       "password": "S3 secret key (rest: bearer token or DLF secret)"}
    triggers = {t.trigger_class_name for t in pm.trigger if t.package_name == "airflow-provider-paimon"}
    assert triggers == {"paimon_provider.triggers.metadata", "paimon_provider.triggers.watcher"}
    assert ProvidersManagerTaskRuntime().asset_uri_handlers["paimon"].__name__ == "sanitize_uri"


def test_airflow_cli_lists_the_provider() -> None:
    airflow = pathlib.Path(sys.executable).with_name("airflow")
    out = subprocess.run([str(airflow), "providers", "list", "--output", "plain"], check=True,
                         capture_output=True, text=True, env=dict(os.environ), timeout=120).stdout
    assert "airflow-provider-paimon" in out
    hooks = subprocess.run([str(airflow), "providers", "hooks", "--output", "plain"], check=True,
                           capture_output=True, text=True, env=dict(os.environ), timeout=120).stdout
    assert "paimon_provider.hooks.table.PaimonTableHook" in hooks


def test_provider_info_links_the_repositorys_docs() -> None:
    from paimon_provider.get_provider_info import DOCUMENTATION_URL, REPOSITORY_URL

    info = get_provider_info()
    assert info["documentation-url"] == DOCUMENTATION_URL == f"{REPOSITORY_URL}/tree/main/docs"
    assert (pathlib.Path(__file__).parents[2] / "docs").is_dir()  # the folder the link points at
    import tomllib

    urls = tomllib.loads((pathlib.Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["urls"]
    assert urls == {"Repository": REPOSITORY_URL, "Documentation": DOCUMENTATION_URL}  # what PyPI shows agrees
