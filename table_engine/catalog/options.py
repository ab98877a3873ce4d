"""The registry of catalog options: Paimon's keys (``CatalogOptions``, ``JdbcCatalogOptions``, ``HiveCatalogOptions``),
types, defaults and descriptions, the storage options of :mod:`table_engine.options.storage`, and which of them are
secrets.

``CatalogOptions(raw)`` validates a catalog's options (one :class:`~table_engine.errors.OptionError` naming every
unknown key, with a close match, and every bad value; never a secret's value) and reads them typed.
``python -m table_engine.catalog.options --markdown > docs/catalogs.md`` regenerates the reference.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Mapping
from typing import Any, TypeVar

from table_engine.options import ConfigOption, OptionRegistry, OptionSection, key
from table_engine.options import storage as storage_options

V = TypeVar("V")


class TableType(enum.Enum):
    """Values of ``table.type`` (Paimon's ``CatalogOptions.TABLE_TYPE``): how a Hive Metastore registers a table."""

    MANAGED = "managed"
    EXTERNAL = "external"


class MetastoreKind(enum.Enum):
    """Values of ``metastore``: where a catalog keeps its databases, tables and views."""

    FILESYSTEM = "filesystem"
    JDBC = "jdbc"
    HIVE = "hive"
    REST = "rest"


class TokenProvider(enum.Enum):
    """Values of ``token.provider`` (Paimon's ``RESTCatalogOptions.TOKEN_PROVIDER``): how a REST catalog's requests
    are authenticated."""

    BEAR = "bear"
    DLF = "dlf"


METASTORE = key("metastore").enum_type(MetastoreKind).default_value(MetastoreKind.FILESYSTEM).with_description(
    "Where the catalog keeps its databases, tables and views: the warehouse's directories (`filesystem`), a JDBC "
    "database (`jdbc`, Paimon's `JdbcCatalog`), a Hive Metastore (`hive`, Paimon's `HiveCatalog`) or a server "
    "implementing Paimon's REST API (`rest`, Paimon's `RESTCatalog`). The table files are under "
    "`<warehouse>/<db>.db/<table>` in the first three; a REST server says where each table is. Open a `jdbc`, "
    "`hive` or `rest` catalog with `table_engine.catalog.create_catalog(warehouse, options)`.")
WAREHOUSE = key("warehouse").string_type().no_default_value().with_description(
    "The warehouse root. The catalog's `warehouse` argument is the warehouse; when both are given they must name "
    "the same place. `rest`: the name of the catalog on the server (sent to its config endpoint, which may answer "
    "with a storage location in its place, as Paimon's `RESTCatalog`).")
URI = key("uri").string_type().no_default_value().with_description(
    "The metastore's address: a `jdbc:` URL (`metastore` = `jdbc`), `thrift://host:port[,...]` (`metastore` = "
    "`hive`) or the REST server's `http(s)://host:port` (`metastore` = `rest`).")
LOCK_ENABLED = key("lock.enabled").bool_type().no_default_value().with_description(
    "Take the metastore's lock on a table around each snapshot commit and around `create_table`'s schema commit, "
    "as Paimon Java's `CatalogLock` (so that a Java writer and this engine on one table are serialized). Unset: "
    "off; the conditional create of each snapshot stays the commit protocol either way.")
LOCK_ACQUIRE_TIMEOUT = key("lock-acquire-timeout").duration_type().default_value(8 * 60_000).with_validator(
    lambda v: v > 0, "a positive duration").with_description(
    "How long a commit waits for the table's lock before it fails (retryably).")
LOCK_CHECK_MAX_SLEEP = key("lock-check-max-sleep").duration_type().default_value(8_000).with_validator(
    lambda v: v > 0, "a positive duration").with_description(
    "The longest sleep between two attempts to take the lock (the first is 50 ms, then doubling).")
CLIENT_POOL_SIZE = key("client-pool-size").int_type().default_value(2).with_validator(
    lambda v: v > 0, "a number of connections > 0").with_description(
    "Connections to the metastore the catalog keeps open.")
CATALOG_KEY = key("catalog-key").string_type().default_value("jdbc").with_description(
    "`jdbc`: the catalog's name in the JDBC tables (their `catalog_key` column): catalogs with different keys "
    "share one database without seeing each other's rows.")
LOCK_KEY_MAX_LENGTH = key("lock-key-max-length").int_type().default_value(255).with_validator(
    lambda v: v > 0, "a length > 0").with_description(
    "`jdbc`: the longest lock id (`<catalog-key>.<db>.<table>`): the width of `paimon_distributed_locks.lock_id` "
    "when the catalog creates that table (`lock.enabled`).")
JDBC_USER = key("jdbc.user").string_type().no_default_value().with_description(
    "`jdbc`: the database user.")
JDBC_PASSWORD = key("jdbc.password").string_type().no_default_value().with_description(
    "`jdbc`: the database user's password. A secret: never in a command line, a log line or an error.")
HIVE_CONF_DIR = key("hive-conf-dir").string_type().no_default_value().with_description(
    "`hive`: a directory with `hive-site.xml`, read for `hive.metastore.uris` when `uri` is not given.")
TABLE_TYPE = key("table.type").enum_type(TableType).default_value(TableType.MANAGED).with_description(
    "`hive`: how tables are registered: `managed` (the metastore's `MANAGED_TABLE`) or `external` "
    "(`EXTERNAL_TABLE`, with `EXTERNAL` = `TRUE`). The catalog writes and deletes the files either way.")
TOKEN_PROVIDER = key("token.provider").enum_type(TokenProvider).no_default_value().with_description(
    "`rest`: how requests are authenticated: `bear` (the `token` as `Authorization: Bearer`) or `dlf` (Alibaba "
    "DLF's signature with `dlf.access-key-id` / `dlf.access-key-secret`, Paimon's default signer).")
TOKEN = key("token").string_type().no_default_value().with_description(
    "`rest`, `token.provider` = `bear`: the bearer token. A secret: never in a command line, a log line or an "
    "error.")
DLF_REGION = key("dlf.region").string_type().no_default_value().with_description(
    "`rest`, `token.provider` = `dlf`: the DLF region (e.g. `cn-hangzhou`), part of each signature.")
DLF_ACCESS_KEY_ID = key("dlf.access-key-id").string_type().no_default_value().with_description(
    "`rest`, `token.provider` = `dlf`: the access key id.")
DLF_ACCESS_KEY_SECRET = key("dlf.access-key-secret").string_type().no_default_value().with_description(
    "`rest`, `token.provider` = `dlf`: the access key secret. A secret.")
DLF_SECURITY_TOKEN = key("dlf.security-token").string_type().no_default_value().with_description(
    "`rest`, `token.provider` = `dlf`: the STS security token of temporary credentials. A secret.")
DLF_SIGNING_ALGORITHM = key("dlf.signing-algorithm").string_type().default_value("dlf-default").with_description(
    "`rest`, `token.provider` = `dlf`: the signer. Only `dlf-default` (DLF's VPC endpoints) is implemented; "
    "`dlf-openapi` (and a `dlfnext` host, for which Paimon picks it) is refused.")
DATA_TOKEN_ENABLED = key("data-token.enabled").bool_type().default_value(False).with_description(
    "`rest`: read and write each table's files with the storage credentials the server vends for it (`GET "
    ".../token`), fetched again before they expire (Paimon's `RESTTokenFileIO`). The server may turn it on in "
    "its config answer.")
FORMAT_TABLE_ENABLED = key("format-table.enabled").bool_type().default_value(True).with_description(
    "`hive`: whether the catalog holds format tables (Paimon 1.x's default, true): `create_format_table` registers "
    "one as a Hive table of its format, `list_tables` lists them and `get_format_table` opens them, and plain Hive "
    "tables of csv, parquet, orc or json files are format tables too. `false`: only Paimon tables.")
HADOOP_CONF_DIR = key("hadoop-conf-dir").string_type().no_default_value().with_description(
    "`hive`: a directory with Hadoop's `core-site.xml` / `hdfs-site.xml`.")

SECTIONS = (
    OptionSection("Catalog", (METASTORE, WAREHOUSE, URI, LOCK_ENABLED, LOCK_ACQUIRE_TIMEOUT, LOCK_CHECK_MAX_SLEEP,
                              CLIENT_POOL_SIZE),
                  "Paimon's catalog options, with its keys and defaults: a Flink or Spark catalog definition's "
                  "options copy over unchanged."),
    OptionSection("JDBC metastore", (CATALOG_KEY, LOCK_KEY_MAX_LENGTH, JDBC_USER, JDBC_PASSWORD),
                  "`metastore` = `jdbc` (Paimon's `JdbcCatalogOptions`). Every other `jdbc.<property>` is a property "
                  "of the database driver."),
    OptionSection("Hive metastore", (HIVE_CONF_DIR, HADOOP_CONF_DIR, TABLE_TYPE, FORMAT_TABLE_ENABLED),
                  "`metastore` = `hive` (Paimon's `HiveCatalogOptions`)."),
    OptionSection("REST catalog", (TOKEN_PROVIDER, TOKEN, DLF_REGION, DLF_ACCESS_KEY_ID, DLF_ACCESS_KEY_SECRET,
                                   DLF_SECURITY_TOKEN, DLF_SIGNING_ALGORITHM, DATA_TOKEN_ENABLED),
                  "`metastore` = `rest` (Paimon's `RESTCatalogOptions` and `RESTTokenFileIO`), with `uri` and "
                  "`warehouse` above. Every `header.<name>` is an HTTP header sent with each request."),
    *storage_options.REGISTRY.sections,
)

TABLE_DEFAULT_PREFIX = "table-default."
"""Paimon's prefix of table defaults: ``table-default.<option>`` is the option of every table the catalog creates
that does not set it (``AbstractCatalog.copyTableDefaultOptions``)."""
JDBC_PREFIX = "jdbc."
HEADER_PREFIX = "header."

PREFIXES = {
    TABLE_DEFAULT_PREFIX: "A table option every table this catalog creates gets unless it sets the option itself.",
    JDBC_PREFIX: "`jdbc`: a property of the database driver (`jdbc.sslmode`, ...).",
    HEADER_PREFIX: "`rest`: an HTTP header sent with every request to the server (`header.User-Agent`, ...).",
}

NOT_IMPLEMENTED = (
    "cache-enabled", "cache.expiration-interval", "cache.partition.max-num", "cache.manifest.small-file-memory",
    "cache.manifest.small-file-threshold", "cache.manifest.max-memory", "cache.snapshot.max-num-per-table",
    "allow-upper-case", "case-sensitive", "sync-all-properties", "lock.type", "lock.checker-type",
    "fs.allow-hadoop-fallback", "location-in-properties", "metastore.client.class",
    "dlf.token-path", "dlf.token-loader", "dlf.token-ecs-role-name", "dlf.token-ecs-metadata-url",
    "dlf.oss-endpoint", "io-cache.enabled", "io-cache.whitelist-path", "io-cache.policy",
)
"""Paimon catalog options this engine does not implement: refused by name, not ignored."""
NOT_IMPLEMENTED_PREFIXES = ("hadoop.", "hive.")
"""Hadoop and Hive settings given as catalog options (Java puts them into its Hadoop configuration): refused."""

_SECRET_KEYS = frozenset({*storage_options.secret_keys(), *JDBC_PASSWORD.keys, *TOKEN.keys,
                          *DLF_ACCESS_KEY_SECRET.keys, *DLF_SECURITY_TOKEN.keys})
_SECRET_WORDS = ("password", "secret", "authorization")


def secret_keys() -> frozenset[str]:
    """Every registered catalog option key (aliases included) whose value is a secret: the storage's secrets
    (:func:`table_engine.options.storage.secret_keys`), ``jdbc.password`` and the REST catalog's ``token``,
    ``dlf.access-key-secret`` and ``dlf.security-token``."""
    return _SECRET_KEYS


def is_secret(name: str) -> bool:
    """Whether the value of catalog option ``name`` is a secret: a registered secret, or any key that names a
    password, a secret or an authorization (``jdbc.sslpassword``, ``*.secret-key``, ``header.Authorization``)."""
    lowered = name.lower()
    return name in _SECRET_KEYS or any(word in lowered for word in _SECRET_WORDS)


def redacted(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with every secret's value replaced by ``******`` (for a log line or a repr)."""
    return {k: ("******" if is_secret(k) else v) for k, v in options.items()}


REGISTRY = OptionRegistry(sections=SECTIONS, recognized_prefixes=PREFIXES, noun="catalog",
                          not_implemented=frozenset(NOT_IMPLEMENTED), not_implemented_prefixes=NOT_IMPLEMENTED_PREFIXES,
                          is_secret=is_secret)


def validate_catalog_options(raw: Mapping[str, str]) -> None:
    """Raise one OptionError listing every unknown catalog option (with a close match) and every bad value; a
    secret's value never appears in it."""
    REGISTRY.validate(raw)


class CatalogOptions:
    """A catalog's options, validated (:func:`validate_catalog_options`), with typed reads."""

    def __init__(self, raw: Mapping[str, str] | None = None) -> None:
        self.raw = {str(k): str(v) for k, v in (raw or {}).items()}
        validate_catalog_options(self.raw)

    def __repr__(self) -> str:
        return f"CatalogOptions({redacted(self.raw)!r})"

    def get(self, option: ConfigOption[V]) -> V:
        """``option``'s value (its default when unset)."""
        return option.value_from(self.raw)

    def metastore(self) -> MetastoreKind:
        return self.get(METASTORE)

    def lock_enabled(self) -> bool:
        return bool(self.get(LOCK_ENABLED))

    def table_defaults(self) -> dict[str, str]:
        """The ``table-default.<option>`` entries, as table options."""
        n = len(TABLE_DEFAULT_PREFIX)
        return {k[n:]: v for k, v in self.raw.items() if k.startswith(TABLE_DEFAULT_PREFIX) and len(k) > n}

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """The options under ``prefix`` (without it), e.g. the JDBC driver's properties for ``jdbc.``."""
        return {k[len(prefix):]: v for k, v in self.raw.items() if k.startswith(prefix) and len(k) > len(prefix)}


_EXAMPLES = (
    "## Examples",
    "",
    "The options of a Flink or Spark catalog definition are these options, key for key. A JDBC catalog in "
    "PostgreSQL and a Hive Metastore catalog, each with the commit lock that serializes this engine's commits with "
    "Paimon Java's writers on the same tables:",
    "",
    "```python",
    "from table_engine.catalog import create_catalog",
    "",
    "jdbc = create_catalog(\"s3://lake/warehouse\", {",
    "    \"metastore\": \"jdbc\", \"uri\": \"jdbc:postgresql://db:5432/paimon\", \"catalog-key\": \"lake\",",
    "    \"jdbc.user\": \"paimon\", \"jdbc.password\": password, \"lock.enabled\": \"true\"})",
    "hive = create_catalog(\"s3://lake/warehouse\", {",
    "    \"metastore\": \"hive\", \"uri\": \"thrift://metastore:9083\", \"lock.enabled\": \"true\",",
    "    \"table-default.metastore.partitioned-table\": \"true\"})",
    "with jdbc as catalog:  # a catalog holds connections: close it (a with block does)",
    "    print(catalog.list_databases())",
    "```",
    "",
    "As an Airflow connection (`paimon` type; `jdbc_password` is its own masked field, and the worker gets it "
    "through the environment, never an argv; docs/connection.md):",
    "",
    "```bash",
    "airflow connections add paimon_jdbc --conn-json '{\"conn_type\": \"paimon\", \"extra\": {",
    "  \"warehouse\": \"s3://lake/warehouse\", \"metastore\": \"jdbc\", \"uri\": \"jdbc:postgresql://db:5432/paimon\",",
    "  \"jdbc_user\": \"paimon\", \"jdbc_password\": \"<password>\", \"catalog_key\": \"lake\",",
    "  \"lock_enabled\": true}}'",
    "airflow connections add paimon_hive --conn-json '{\"conn_type\": \"paimon\", \"extra\": {",
    "  \"warehouse\": \"s3://lake/warehouse\", \"metastore\": \"hive\", \"uri\": \"thrift://metastore:9083\",",
    "  \"lock_enabled\": true}}'",
    "```",
    "",
    "A REST catalog (a server implementing Paimon's REST API, e.g. Alibaba DLF): the server keeps databases, "
    "tables and schemas and commits each snapshot; `warehouse` is the catalog's name on the server, and with "
    "`data-token.enabled` the table files are read and written with the storage credentials it vends:",
    "",
    "```python",
    "rest = create_catalog(\"lake\", {",
    "    \"metastore\": \"rest\", \"uri\": \"https://paimon-rest.example.com\", \"warehouse\": \"lake\",",
    "    \"token.provider\": \"bear\", \"token\": token, \"data-token.enabled\": \"true\"})",
    "```",
    "",
    "As an Airflow connection the bearer token is the connection's password (masked, and given to a Spark job "
    "through the environment like `jdbc_password`): `airflow connections add paimon_rest --conn-json "
    "'{\"conn_type\": \"paimon\", \"password\": \"<token>\", \"extra\": {\"metastore\": \"rest\", "
    "\"uri\": \"https://paimon-rest.example.com\", \"warehouse\": \"lake\", \"token_provider\": \"bear\"}}'`.",
    "",
    "The same JDBC catalog in Flink SQL: `CREATE CATALOG lake WITH ('type' = 'paimon', 'metastore' = 'jdbc', "
    "'uri' = 'jdbc:postgresql://db:5432/paimon', 'catalog-key' = 'lake', 'jdbc.user' = 'paimon', "
    "'jdbc.password' = '...', 'lock.enabled' = 'true', 'warehouse' = 's3://lake/warehouse')` (`type` is Flink's "
    "catalog factory, not a catalog option). Drivers: a `jdbc:sqlite:` URL needs nothing more; PostgreSQL needs "
    "the `postgres` extra (psycopg), MySQL the `mysql` extra (PyMySQL) and a Hive Metastore the `hive` extra "
    "(thriftpy2): `pip install 'airflow-provider-paimon[postgres]'`.",
    "",
)


def render_markdown() -> str:
    """The catalog options reference (docs/catalogs.md) as Markdown."""
    lines = [
        "# Catalog options",
        "",
        "Every option a catalog accepts (`Catalog(warehouse, options)`, `create_catalog(warehouse, options)`), with "
        "Paimon's exact key, type and default. Generated from `table_engine/catalog/options.py` by "
        "`python -m table_engine.catalog.options --markdown`; do not edit by hand. An unknown key is refused with "
        "one error naming it (and the closest known key); so is a Paimon catalog option this engine does not "
        "implement (below). Secrets (`jdbc.password`, `token`, `dlf.access-key-secret`, `dlf.security-token`, "
        "`s3.secret-key`, `s3.session.token` and any key naming a password, a secret or an authorization) never "
        "appear in an error or a log line.",
        "",
        *_EXAMPLES,
        *REGISTRY.render_sections(),
        "## Key prefixes",
        "",
        "| Key prefix | Meaning |",
        "|---|---|",
        *(f"| `{prefix}*` | {meaning} |" for prefix, meaning in PREFIXES.items()),
        "",
        "## Paimon catalog options not implemented",
        "",
        "Refused, not ignored: " + ", ".join(f"`{name}`" for name in NOT_IMPLEMENTED) + "; and every key under "
        + ", ".join(f"`{p}`" for p in NOT_IMPLEMENTED_PREFIXES) + " (Hadoop and Hive settings).",
        "",
    ]
    return "\n".join(lines)


def _main(argv: list[str]) -> Any:  # pragma: no cover
    if "--markdown" in argv:
        sys.stdout.write(render_markdown())
    else:
        print("usage: python -m table_engine.catalog.options --markdown")


if __name__ == "__main__":  # pragma: no cover
    _main(sys.argv)
