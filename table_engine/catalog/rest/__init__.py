"""Paimon's REST catalog (``metastore=rest``): the client side of Paimon's REST OpenAPI (ADR 0045).

``client`` (HTTP, retries, errors), ``auth`` (``token.provider``: bear, dlf), ``messages`` (the spec's JSON bodies),
``api`` (``RestApi``: one typed method per endpoint, errors mapped onto ``table_engine.errors``). Not yet wired into
``table_engine.catalog.factory``.
"""
