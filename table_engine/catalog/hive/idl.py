"""The Hive Metastore's Thrift API as thriftpy2 parses it from our IDL subset (``hive_metastore.thrift``, package
data): its structs, enums, exceptions and the ``ThriftHiveMetastore`` service. Parsed once, on first use, so that
importing the catalog package never needs thriftpy2 (an optional dependency, the ``hive`` extra)."""

from __future__ import annotations

import functools
import pathlib
from types import ModuleType

from table_engine.errors import CatalogError

IDL_PATH = pathlib.Path(__file__).with_name("hive_metastore.thrift")
# a module name ending in _thrift: thriftpy2 registers it in sys.modules, so its structs pickle
MODULE_NAME = "table_engine_hive_metastore_thrift"


@functools.cache
def hms() -> ModuleType:
    """The parsed IDL: ``hms().Table``, ``hms().LockType.EXCLUSIVE``, ``hms().ThriftHiveMetastore``, ..."""
    try:
        import thriftpy2
    except ImportError:
        raise CatalogError("metastore 'hive' needs the thriftpy2 package "
                           "(pip install 'airflow-provider-paimon[hive]')") from None
    module: ModuleType = thriftpy2.load(str(IDL_PATH), module_name=MODULE_NAME)
    return module
