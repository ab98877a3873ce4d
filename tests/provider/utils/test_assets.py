"""Asset URIs of tables and the registered ``paimon://`` URI handler."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from paimon_provider.utils.assets import sanitize_uri, split_table, table_asset, table_asset_uri, writes_alias


def test_table_assets() -> None:
    assert table_asset_uri("dwd.orders") == "paimon://paimon_default/dwd/orders"
    assert table_asset_uri("orders", "lake") == "paimon://lake/default/orders"
    asset = table_asset("dwd.orders", "lake")
    assert (asset.name, asset.uri, asset.group) == ("paimon.lake.dwd.orders", "paimon://lake/dwd/orders", "paimon")
    assert table_asset("dwd.orders") == table_asset("dwd.orders")
    assert writes_alias("lake").name == "paimon.lake.writes"
    with pytest.raises(ValueError, match="database.table"):
        split_table("a.b.c")


def test_uri_handler() -> None:
    assert sanitize_uri(urlsplit("paimon://lake//dwd/orders/")).geturl() == "paimon://lake/dwd/orders"
    for bad in ("paimon:///dwd/orders", "paimon://lake/orders", "paimon://la:ke/a/b"):
        with pytest.raises(ValueError, match="paimon asset URI"):
            sanitize_uri(urlsplit(bad))
