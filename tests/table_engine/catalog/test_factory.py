"""``create_catalog`` dispatches on ``metastore``; the constructor and the factory refuse what they cannot honour
(issue 38: a hive, jdbc or rest catalog was silently a filesystem one)."""

from __future__ import annotations

import pathlib

import pytest

from table_engine.catalog import Catalog, create_catalog, factory
from table_engine.catalog.metastore_catalog import MetastoreCatalog
from table_engine.catalog.options import MetastoreKind
from table_engine.errors import OptionError
from tests.table_engine.catalog.fake_metastore import FakeMetastore

FAKE = ("tests.table_engine.catalog.fake_metastore", "FakeMetastore")


def test_filesystem_is_the_default(tmp_path: pathlib.Path) -> None:
    for options in (None, {}, {"metastore": "filesystem"}, {"metastore": "FILESYSTEM"}):
        catalog = create_catalog(str(tmp_path), options)
        assert type(catalog) is Catalog


@pytest.mark.parametrize("kind", [MetastoreKind.JDBC, MetastoreKind.HIVE])
def test_jdbc_and_hive_are_imported_by_name(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                            kind: MetastoreKind) -> None:
    monkeypatch.setitem(factory.METASTORE_IMPLEMENTATIONS, kind, FAKE)
    catalog = create_catalog(f"{tmp_path}/", {"metastore": kind.value, "uri": "x", "lock.enabled": "true"})
    assert isinstance(catalog, MetastoreCatalog) and isinstance(catalog.metastore, FakeMetastore)
    assert catalog.metastore.warehouse == catalog.warehouse  # normalized as the catalog normalizes it
    assert catalog.metastore.options["metastore"] == kind.value and catalog.lock_enabled


def test_the_real_modules_are_the_named_ones() -> None:
    assert factory.METASTORE_IMPLEMENTATIONS == {
        MetastoreKind.JDBC: ("table_engine.catalog.jdbc", "JdbcMetastore"),
        MetastoreKind.HIVE: ("table_engine.catalog.hive", "HiveMetastore")}


@pytest.mark.parametrize("value", ["glue", ""])
def test_other_metastores_are_one_error(tmp_path: pathlib.Path, value: str) -> None:
    with pytest.raises(OptionError, match=f"'metastore' = '{value}'.*filesystem, jdbc, hive, rest"):
        create_catalog(str(tmp_path), {"metastore": value})
    with pytest.raises(OptionError, match="metastore"):
        Catalog(str(tmp_path), {"metastore": value})


def test_rest_needs_its_server_before_anything_connects(tmp_path: pathlib.Path) -> None:
    with pytest.raises(OptionError, match="metastore=rest needs the option 'uri'"):
        create_catalog("lake", {"metastore": "rest"})
    with pytest.raises(OptionError, match="metastore"):
        Catalog(str(tmp_path), {"metastore": "rest"})


@pytest.mark.parametrize("value", ["hive", "jdbc"])
def test_the_constructor_refuses_a_metastore_it_cannot_honour(tmp_path: pathlib.Path, value: str) -> None:
    with pytest.raises(OptionError, match="create_catalog"):
        Catalog(str(tmp_path / "wh"), {"metastore": value, "uri": "thrift://127.0.0.1:1"})
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("options", [{"uri": "thrift://h:9083"}, {"catalog-key": "k"}, {"jdbc.user": "u"},
                                     {"jdbc.sslmode": "require"}, {"hive-conf-dir": "/etc/hive"}])
def test_the_filesystem_catalog_refuses_a_metastores_options(tmp_path: pathlib.Path,
                                                             options: dict[str, str]) -> None:
    (key,) = options
    with pytest.raises(OptionError, match=f"'{key}'.*'metastore' is 'filesystem'"):
        Catalog(str(tmp_path), options)


def test_the_filesystem_catalog_has_no_lock(tmp_path: pathlib.Path) -> None:
    with pytest.raises(OptionError, match="lock.enabled"):
        Catalog(str(tmp_path), {"lock.enabled": "true"})
    Catalog(str(tmp_path), {"lock.enabled": "false"})


def test_a_missing_implementation_is_one_option_error(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(factory.METASTORE_IMPLEMENTATIONS, MetastoreKind.HIVE, ("tests.no_such_module", "X"))
    with pytest.raises(OptionError, match="'hive'.*tests.no_such_module"):
        create_catalog(str(tmp_path), {"metastore": "hive"})
