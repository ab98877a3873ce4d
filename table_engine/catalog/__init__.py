"""Catalogs: databases, tables and views of a warehouse (ADR 0044).

* :class:`Catalog` - the filesystem catalog (``metastore`` = ``filesystem``, the default): the warehouse's
  directories are its databases and tables (:mod:`table_engine.catalog.filesystem`);
* :class:`~table_engine.catalog.metastore_catalog.MetastoreCatalog` - the same files, with databases, tables and
  views registered in a :class:`~table_engine.catalog.metastore.Metastore` (JDBC, Hive);
* :class:`~table_engine.catalog.rest.catalog.RestCatalog` - a server implementing Paimon's REST API (ADR 0045);
* :func:`create_catalog` - the one that dispatches on the ``metastore`` option;
* :mod:`table_engine.catalog.options` - the catalog options registry (docs/catalogs.md);
* :mod:`table_engine.catalog.identifiers` - the identifier rules, once.
"""

from __future__ import annotations

from table_engine.catalog.factory import SUPPORTED_METASTORES, create_catalog
from table_engine.catalog.filesystem import Catalog, open_table
from table_engine.catalog.identifiers import DB_SUFFIX, DEFAULT_DATABASE, check_name, parse_identifier
from table_engine.catalog.metastore import Metastore, ViewDef
from table_engine.catalog.options import CatalogOptions, MetastoreKind, is_secret, redacted, secret_keys

__all__ = [
    "DB_SUFFIX",
    "DEFAULT_DATABASE",
    "SUPPORTED_METASTORES",
    "Catalog",
    "CatalogOptions",
    "Metastore",
    "MetastoreKind",
    "ViewDef",
    "check_name",
    "create_catalog",
    "is_secret",
    "open_table",
    "parse_identifier",
    "redacted",
    "secret_keys",
]
