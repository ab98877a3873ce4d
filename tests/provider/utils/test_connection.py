"""The ``paimon`` connection's object-store fields: credentials from the login/password (and a session-token
field) are kept apart from the catalog options, which may travel in a command line."""

from __future__ import annotations

import pytest
from paimon_provider.utils.connection import PaimonConnectionConfig, credential_keys, without_credentials

from table_engine.options.storage import secret_keys

SECRET = "sEcReT-value-1234"


def test_credentials_come_from_login_password_and_the_session_token_field() -> None:
    cfg = PaimonConnectionConfig.from_connection_fields(
        "c", None, {"warehouse": "s3://b/wh", "s3_endpoint": "http://127.0.0.1:9000", "s3_region": "eu-west-1",
                    "s3_path_style_access": True, "s3_session_token": "tok", "catalog_options": {"a": "1"}},
        login="AKID", password=SECRET)
    assert cfg.catalog_options == {"a": "1", "s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1",
                                   "s3.path.style.access": "true"}
    assert cfg.credentials == {"s3.access-key": "AKID", "s3.secret-key": SECRET, "s3.session.token": "tok"}
    assert SECRET not in repr(cfg) and "tok" not in repr(cfg)
    assert cfg.engine_options() == {**cfg.catalog_options, **cfg.credentials}
    assert cfg.job_environment() == {
        "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": "tok",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true", "AWS_REGION": "eu-west-1"}


@pytest.mark.parametrize("key", sorted(credential_keys()))
def test_a_credential_typed_into_catalog_options_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match=f"connection 'c': catalog_options {key} carry credentials") as e:
        PaimonConnectionConfig.from_connection_fields(
            "c", None, {"warehouse": "s3://b/wh", "catalog_options": {key: SECRET, "fs.s3.endpoint": "http://e"}},
            login="AKID", password="pw")
    assert SECRET not in str(e.value)


def test_an_alias_of_a_storage_option_in_catalog_options_resolves() -> None:
    cfg = PaimonConnectionConfig.from_connection_fields(
        "c", None, {"warehouse": "s3://b/wh", "catalog_options": {"fs.s3.endpoint": "http://e"}})
    assert cfg.catalog_options == {"fs.s3.endpoint": "http://e"} and cfg.credentials == {}
    assert cfg.job_environment()["AWS_ENDPOINT_URL"] == "http://e"


def test_credential_keys_cover_the_engine_secrets_and_the_access_key() -> None:
    keys = credential_keys()
    assert secret_keys() <= set(keys)
    assert {"s3.access-key", "fs.s3.accessKeyId"} <= set(keys)
    options = dict.fromkeys(keys, SECRET) | {"s3.endpoint": "http://e", "s3.region": "r"}
    assert without_credentials(options) == {"s3.endpoint": "http://e", "s3.region": "r"}


def test_a_local_warehouse_needs_no_storage_fields() -> None:
    cfg = PaimonConnectionConfig.from_connection_fields("c", None, {"warehouse": "/wh"})
    assert cfg.credentials == {} and cfg.job_environment() == {} and cfg.engine_options() == {}


def test_form_extra_has_every_form_field_and_json_fields_as_text() -> None:
    """A connection made in code stores its extra as the UI's form does: the Edit form then shows every field, and
    the JSON-object fields as text (not ``[object Object]``); it parses back to the same configuration."""
    import json

    from paimon_provider.get_provider_info import get_provider_info
    from paimon_provider.utils.connection import form_extra

    (conn_type,) = [c for c in get_provider_info()["connection-types"] if c["connection-type"] == "paimon"]
    extra = form_extra("/w", spark_conf={"spark.executor.memory": "2g"}, catalog_options={"a": "1"})
    assert list(extra) == list(conn_type["conn-fields"])
    assert extra["warehouse"] == "/w" and extra["s3_endpoint"] is None
    assert json.loads(extra["spark_conf"]) == {"spark.executor.memory": "2g"}
    assert json.loads(extra["catalog_options"]) == {"a": "1"}
    config = PaimonConnectionConfig.from_connection_fields("c", None, json.loads(json.dumps(extra)))
    assert config.warehouse == "/w" and config.spark_conf == {"spark.executor.memory": "2g"}
    assert config.catalog_options == {"a": "1"}
    with pytest.raises(ValueError, match=r"^paimon connection fields \['sparkconf'\] do not exist; the form has "):
        form_extra("/w", sparkconf={})


def test_the_catalog_fields_are_paimons_catalog_options_and_the_jdbc_password_a_credential() -> None:
    import json

    from table_engine.ops.secrets import SECRETS_ENV

    cfg = PaimonConnectionConfig.from_connection_fields(
        "c", None, {"warehouse": "/wh", "metastore": "jdbc", "uri": "jdbc:postgresql://db:5432/lake",
                    "jdbc_user": "etl", "jdbc_password": SECRET, "catalog_key": "lake", "lock_enabled": True,
                    "hive_conf_dir": None, "catalog_options": {"jdbc.sslmode": "require"}})
    assert cfg.catalog_options == {"metastore": "jdbc", "uri": "jdbc:postgresql://db:5432/lake", "jdbc.user": "etl",
                                   "catalog-key": "lake", "lock.enabled": "true", "jdbc.sslmode": "require"}
    assert cfg.credentials == {"jdbc.password": SECRET} and SECRET not in repr(cfg)
    # a job process gets it in its environment (no AWS variable carries it), never in its argv
    assert cfg.job_environment() == {SECRETS_ENV: json.dumps({"jdbc.password": SECRET})}
    assert without_credentials(cfg.engine_options()) == cfg.catalog_options
    # any key naming a password or a secret is a credential (the engine's registry decides): refused here
    with pytest.raises(ValueError, match="catalog_options jdbc.sslpassword carry credentials") as e:
        PaimonConnectionConfig.from_connection_fields(
            "c", None, {"warehouse": "/wh", "catalog_options": {"jdbc.sslpassword": SECRET}})
    assert SECRET not in str(e.value)
