"""The catalog options registry: Paimon's keys and defaults, unknown keys refused with a suggestion, secrets never
shown, and docs/catalogs.md generated from it."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog, create_catalog, factory, redacted
from table_engine.catalog.options import (
    CATALOG_KEY,
    CLIENT_POOL_SIZE,
    LOCK_ACQUIRE_TIMEOUT,
    LOCK_CHECK_MAX_SLEEP,
    CatalogOptions,
    MetastoreKind,
    is_secret,
    render_markdown,
    secret_keys,
)
from table_engine.errors import OptionError
from table_engine.options import storage

DOCS = pathlib.Path(__file__).resolve().parents[3] / "docs" / "catalogs.md"
PASSWORD = "hunter2-do-not-show"
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_docs_are_generated_from_the_registry() -> None:
    assert DOCS.read_text() == render_markdown(), (
        "docs/catalogs.md is stale: run `python -m table_engine.catalog.options --markdown > docs/catalogs.md`")


def test_paimon_defaults() -> None:
    o = CatalogOptions({})
    assert o.metastore() is MetastoreKind.FILESYSTEM and not o.lock_enabled()
    assert o.get(LOCK_ACQUIRE_TIMEOUT) == 8 * 60 * 1000 and o.get(LOCK_CHECK_MAX_SLEEP) == 8 * 1000
    assert o.get(CLIENT_POOL_SIZE) == 2 and o.get(CATALOG_KEY) == "jdbc"
    assert CatalogOptions({"lock-acquire-timeout": "30 s"}).get(LOCK_ACQUIRE_TIMEOUT) == 30_000


@pytest.mark.parametrize(("given", "suggested"), [("lock.acquire-timeout", "lock-acquire-timeout"),
                                                  ("lock.check-max-sleep", "lock-check-max-sleep"),
                                                  ("metastor", "metastore"), ("s3.endpiont", "s3.endpoint")])
def test_an_unknown_option_is_refused_with_a_suggestion(tmp_path: pathlib.Path, given: str, suggested: str) -> None:
    with pytest.raises(OptionError, match=f"Unknown catalog option '{given}'. Did you mean '{suggested}'"):
        Catalog(str(tmp_path), {given: "x"})


@pytest.mark.parametrize("name", ["cache-enabled", "allow-upper-case", "lock.type", "hadoop.fs.defaultFS",
                                  "hive.metastore.uris"])
def test_paimon_options_not_implemented_are_refused_by_name(tmp_path: pathlib.Path, name: str) -> None:
    with pytest.raises(OptionError, match=f"'{name}' is a Paimon catalog option this engine does not implement"):
        Catalog(str(tmp_path), {name: "true"})


def test_every_problem_in_one_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(OptionError, match="2 invalid catalog options") as e:
        Catalog(str(tmp_path), {"nope": "1", "client-pool-size": "0"})
    assert "'nope'" in str(e.value) and "client-pool-size" in str(e.value)


def test_what_callers_pass_today_is_accepted(tmp_path: pathlib.Path) -> None:
    # the storage options and pypaimon's aliases (the data source, the connection, the CLI's --catalog-option)
    Catalog(str(tmp_path), {"s3.endpoint": "http://127.0.0.1:9", "fs.s3.accessKeyId": "a", "s3.region": "r",
                            "s3.path.style.access": "true", "s3.attempts.maximum": "4", "warehouse": str(tmp_path)})


def test_the_warehouse_option_must_agree(tmp_path: pathlib.Path) -> None:
    Catalog(str(tmp_path), {"warehouse": f"file://{tmp_path}/"})
    with pytest.raises(OptionError, match="another warehouse"):
        Catalog(str(tmp_path), {"warehouse": str(tmp_path / "other")})


def test_secrets_are_derived_from_the_storage_list_and_the_jdbc_password() -> None:
    assert storage.secret_keys() <= secret_keys() and "jdbc.password" in secret_keys()
    for name in ("jdbc.password", "s3.secret-key", "fs.s3.accessKeySecret", "s3.session.token", "jdbc.sslpassword"):
        assert is_secret(name), name
    for name in ("jdbc.user", "s3.access-key", "uri", "metastore"):
        assert not is_secret(name), name
    assert redacted({"jdbc.password": PASSWORD, "jdbc.user": "u"}) == {"jdbc.password": "******", "jdbc.user": "u"}
    assert PASSWORD not in repr(CatalogOptions({"jdbc.password": PASSWORD}))


def test_a_secret_never_appears_in_an_error(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(factory.METASTORE_IMPLEMENTATIONS, MetastoreKind.JDBC,
                        ("tests.table_engine.catalog.fake_metastore", "FakeMetastore"))
    cases = [
        (create_catalog, {"metastore": "jdbc", "jdbc.password": PASSWORD, "lock.acquire-timeout": "1 s"}),
        (create_catalog, {"metastore": "rest", "jdbc.password": PASSWORD}),
        (Catalog, {"jdbc.password": PASSWORD}),
        (Catalog, {"metastore": "hive", "jdbc.password": PASSWORD}),
        (Catalog, {"jdbc.pasword": PASSWORD}),
        (Catalog, {"s3.secret-key": PASSWORD, "s3.secrte-key": PASSWORD}),
    ]
    for make, options in cases:
        with pytest.raises(OptionError) as e:
            make(str(tmp_path), options)
        assert PASSWORD not in str(e.value), (options, str(e.value))


def test_table_defaults_apply_to_new_tables(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path), {"table-default.bucket": "2", "table-default.file.format": "orc"})
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"file.format": "parquet"})
    assert t.options.bucket() == 2 and t.schema.options["file.format"] == "parquet"
    with pytest.raises(OptionError, match="Unknown table option 'bucktt'"):
        Catalog(str(tmp_path), {"table-default.bucktt": "2"}).create_table("db.u", SCHEMA)
