"""``create_catalog(warehouse, options)``: the catalog the ``metastore`` option names (Paimon's
``CatalogFactory.createCatalog``). The JDBC and Hive metastores and the REST catalog are imported only when asked
for."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import cast

from table_engine.catalog.filesystem import Catalog, catalog_warehouse
from table_engine.catalog.metastore import Metastore
from table_engine.catalog.options import METASTORE, CatalogOptions, MetastoreKind
from table_engine.errors import OptionError
from table_engine.io.file_io import FileIO

SUPPORTED_METASTORES = tuple(kind.value for kind in MetastoreKind)

#: metastore -> (module, class) of its Metastore, imported lazily (its client library is an optional extra)
METASTORE_IMPLEMENTATIONS = {
    MetastoreKind.JDBC: ("table_engine.catalog.jdbc", "JdbcMetastore"),
    MetastoreKind.HIVE: ("table_engine.catalog.hive", "HiveMetastore"),
}


def _metastore_kind(options: Mapping[str, str]) -> MetastoreKind:
    value = options.get(METASTORE.key)
    if value is not None and value.strip().lower() not in SUPPORTED_METASTORES:
        raise OptionError(f"catalog option 'metastore' = {value!r} is not supported: use one of "
                          f"{', '.join(SUPPORTED_METASTORES)}")
    return CatalogOptions(options).metastore()


def load_metastore(kind: MetastoreKind, options: CatalogOptions, warehouse: str) -> Metastore:
    """The :class:`Metastore` of ``kind`` (``JdbcMetastore(options, warehouse)``, ``HiveMetastore(options,
    warehouse)``), built from the catalog's validated ``options`` and its normalized ``warehouse``."""
    module_name, class_name = METASTORE_IMPLEMENTATIONS[kind]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise OptionError(f"catalog option 'metastore' = {kind.value!r}: its implementation ({module_name}) cannot "
                          f"be imported: {e}") from None
    return cast(Metastore, getattr(module, class_name)(options, warehouse))


def create_catalog(warehouse: str, options: Mapping[str, str] | None = None,
                   file_io: FileIO | None = None) -> Catalog:
    """The catalog of ``warehouse`` that ``options['metastore']`` names: the filesystem catalog (the default), a
    :class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog` over the JDBC or Hive metastore, or the
    REST catalog (:class:`~table_engine.catalog.rest.catalog.RestCatalog`; ``warehouse`` is then the catalog's
    name on the server, as Paimon's). Any other value is one OptionError naming it and the supported ones; so is
    an unknown option, and a ``warehouse`` option naming another place: all before anything connects."""
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    kind = _metastore_kind(opts)
    if kind is MetastoreKind.FILESYSTEM:
        return Catalog(warehouse, opts, file_io)
    if kind is MetastoreKind.REST:
        try:
            from table_engine.catalog.rest.catalog import RestCatalog
        except ImportError as e:
            raise OptionError(f"catalog option 'metastore' = 'rest': its client cannot be imported (the 'rest' "
                              f"extra, requests): {e}") from None
        return RestCatalog(warehouse, opts, file_io)
    from table_engine.catalog.metastore_catalog import MetastoreCatalog

    catalog_options = CatalogOptions(opts)
    metastore = load_metastore(kind, catalog_options, catalog_warehouse(warehouse, catalog_options))
    try:
        return MetastoreCatalog(warehouse, opts, metastore, file_io)
    except BaseException:
        metastore.close()
        raise
