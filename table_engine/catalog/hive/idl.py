"""The Hive Metastore's Thrift API as thriftpy2 parses it from our IDL subset (``hive_metastore.thrift``, package
data): its structs, enums, exceptions and the ``ThriftHiveMetastore`` service. Parsed once, on first use, so that
importing the catalog package never needs thriftpy2 (an optional dependency, the ``hive`` extra)."""

from __future__ import annotations

import pathlib
import threading
from types import ModuleType

from table_engine.errors import CatalogError

IDL_PATH = pathlib.Path(__file__).with_name("hive_metastore.thrift")
# a module name ending in _thrift: thriftpy2 registers it in sys.modules, so its structs pickle
MODULE_NAME = "table_engine_hive_metastore_thrift"
_parsed: list[ModuleType] = []
_parsing = threading.Lock()


def hms() -> ModuleType:
    """The parsed IDL: ``hms().Table``, ``hms().LockType.EXCLUSIVE``, ``hms().ThriftHiveMetastore``, ... Parsed
    once per process (under a lock: two parses would give two sets of exception classes, and ``except`` would miss
    the other's)."""
    with _parsing:
        if not _parsed:
            try:
                import thriftpy2
            except ImportError:
                raise CatalogError("metastore 'hive' needs the thriftpy2 package "
                                   "(pip install 'airflow-provider-paimon[hive]')") from None
            _parsed.append(thriftpy2.load(str(IDL_PATH), module_name=MODULE_NAME))
        return _parsed[0]
