"""The ``paimon`` connection: a warehouse, its catalog (the ``metastore`` and its options), its catalog options, and
the Spark connection jobs on it use.

Fields live in the connection's extra (declared as ``conn-fields`` in the provider info, so the Airflow UI shows a
form for them), but for object-store credentials: the S3 access key is the connection's *login* and the secret key
its *password* (masked by Airflow in the UI and in logs); a session token goes in the ``s3_session_token`` extra
field (a password-format field). The endpoint, region and path-style addressing are the ``s3_endpoint``,
``s3_region`` and ``s3_path_style_access`` extra fields (or non-secret ``s3.*`` keys of ``catalog_options``).
This module only parses values; fetching the connection is the hooks' job, at execute time.

Credentials are kept apart from the catalog options (:attr:`PaimonConnectionConfig.credentials`): the catalog
options may travel in a command line (``--catalog-option``), the credentials never do. A process of this machine
(the triggerer, a sensor, :class:`~paimon_provider.hooks.table.PaimonTableHook`) gives them to the engine as catalog
options (:meth:`PaimonConnectionConfig.engine_options`); a job process gets them as the standard AWS environment
variables (:meth:`PaimonConnectionConfig.job_environment`), which the engine reads when its options carry no keys.
A credential typed into ``catalog_options`` is refused (:class:`ValueError` naming the key): the free-form options
are shown in the form, stored unmasked and travel in command lines; credentials belong in the login and password.

The catalog (ADR 0044): the ``metastore`` field (``filesystem``, the default, ``jdbc`` or ``hive``) and the
metastore's fields (``uri``, ``jdbc_user``, ``catalog_key``, ``lock_enabled``, ``hive_conf_dir``) are catalog
options under Paimon's keys (``metastore``, ``uri``, ``jdbc.user``, ``catalog-key``, ``lock.enabled``,
``hive-conf-dir``); the JDBC password is the ``jdbc_password`` field (a password-format field, masked as the
session token is), a credential (``jdbc.password``): never in a command line. A REST catalog (``metastore`` =
``rest``, ADR 0045): ``uri`` is the server, ``warehouse`` the catalog's name on it, ``token_provider`` its
``token.provider`` (``bear``, the default, or ``dlf``); the connection's *password* is then the bearer token
(``token``), or with ``dlf`` the login and password are ``dlf.access-key-id`` and ``dlf.access-key-secret``: the
password stays masked and a job gets it like ``jdbc.password``. Other REST options (``header.*``, ``dlf.region``,
``data-token.enabled``) go in ``catalog_options``. Which catalog options are secrets is
the engine's registry's (:func:`table_engine.catalog.options.secret_keys`,
:func:`~table_engine.catalog.options.is_secret`); a job process gets the secrets that no AWS variable carries as
one JSON object in :data:`table_engine.ops.secrets.SECRETS_ENV`.

Example, as an environment variable::

    AIRFLOW_CONN_PAIMON_DEFAULT='{"conn_type": "paimon", "login": "<access key>", "password": "<secret key>",
        "extra": {"warehouse": "s3://lake/warehouse", "s3_endpoint": "http://minio:9000",
        "s3_path_style_access": "true", "s3_region": "eu-west-1", "spark_conn_id": "spark_cluster"}}'

and a JDBC catalog on PostgreSQL::

    AIRFLOW_CONN_PAIMON_DEFAULT='{"conn_type": "paimon", "extra": {"warehouse": "/data/warehouse",
        "metastore": "jdbc", "uri": "jdbc:postgresql://db:5432/paimon", "jdbc_user": "paimon",
        "jdbc_password": "<password>", "lock_enabled": true}}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from table_engine.catalog import Catalog

CONN_TYPE = "paimon"
DEFAULT_CONN_ID = "paimon_default"
DEFAULT_SPARK_CONN_ID = "spark_default"


def _extra_value(extra: Mapping[str, Any], name: str) -> Any:
    """A field as stored by the UI form (plain name) or by older forms (``extra__paimon__<name>``)."""
    value = extra.get(name)
    if value in (None, ""):
        value = extra.get(f"extra__{CONN_TYPE}__{name}")
    return None if value == "" else value


# extra field -> catalog option (non-secret settings of the form: storage, and the catalog's metastore)
_OPTION_FIELDS = {"s3_endpoint": "s3.endpoint", "s3_region": "s3.region",
                  "s3_path_style_access": "s3.path.style.access", "metastore": "metastore", "uri": "uri",
                  "jdbc_user": "jdbc.user", "catalog_key": "catalog-key", "lock_enabled": "lock.enabled",
                  "hive_conf_dir": "hive-conf-dir", "token_provider": "token.provider"}
# connection field -> the credential (catalog option) it carries; the login and password are the S3 keys
_CREDENTIAL_FIELDS = {"s3_session_token": "s3.session.token", "jdbc_password": "jdbc.password"}


def credential_keys() -> dict[str, str]:
    """Every registered catalog option key (aliases included) that carries a credential -> its canonical key
    (``s3.access-key``, ``s3.secret-key``, ``s3.session.token``, ``jdbc.password``): the keys that never go into a
    command line. Derived from the engine's catalog options registry (its secrets) and the S3 access key."""
    from table_engine.catalog import secret_keys
    from table_engine.options.storage import S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN

    out = {k: option.key for option in (S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN) for k in option.keys}
    missing = secret_keys() - set(out)  # every other secret of the registry (jdbc.password, later ones) as itself
    out.update({k: k for k in missing})
    return out


def is_credential(key: str) -> bool:
    """Whether catalog option ``key`` carries a credential: one of :func:`credential_keys`, or any key the engine
    treats as a secret (:func:`table_engine.catalog.options.is_secret`: a key naming a password or a secret, e.g.
    ``jdbc.sslpassword``)."""
    from table_engine.catalog import is_secret

    return key in credential_keys() or is_secret(key)


def without_credentials(options: Mapping[str, str] | None) -> dict[str, str]:
    """``options`` without any credential key (see :func:`is_credential`): what may appear in an argv."""
    return {str(k): str(v) for k, v in (options or {}).items() if not is_credential(str(k))}


def _string_map(value: Any, what: str, conn_id: str) -> dict[str, str]:
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ValueError(f"connection {conn_id!r}: {what} must be a JSON object: {e}") from e
    if not isinstance(value, Mapping):
        raise ValueError(f"connection {conn_id!r}: {what} must be a JSON object, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class PaimonConnectionConfig:
    """A resolved ``paimon`` connection.

    :param conn_id: the connection id.
    :param warehouse: warehouse URI: a local path, ``file://``, ``s3://`` (``s3a://``, ``s3n://``) or ``hdfs://``.
    :param catalog_options: catalog options passed to the engine and the Spark application.
    :param spark_conn_id: the Spark connection Spark jobs on this warehouse use.
    :param python: the Python interpreter on the Spark cluster (``spark.pyspark.python``), if not Airflow's.
    :param spark_conf: Spark configuration for every job on this warehouse.
    :param credentials: object-store credentials by canonical catalog option (``s3.access-key``, ``s3.secret-key``,
        ``s3.session.token``): from the login, the password and the ``s3_session_token`` field. Hidden from repr.
    """

    conn_id: str
    warehouse: str
    catalog_options: dict[str, str] = field(default_factory=dict)
    spark_conn_id: str = DEFAULT_SPARK_CONN_ID
    python: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    credentials: dict[str, str] = field(default_factory=dict, repr=False)

    def engine_options(self) -> dict[str, str]:
        """Catalog options for an engine in this process: the catalog options with the credentials."""
        return {**self.catalog_options, **self.credentials}

    def job_environment(self) -> dict[str, str]:
        """The environment of a job process (spark-submit, the CLI): the standard AWS variables of the credentials,
        and of the endpoint and region of the catalog options (so that code of the job that opens the warehouse
        without the catalog options reaches the same store): the engine's one table of them
        (:func:`table_engine.options.storage.aws_environment`); and the credentials no AWS variable carries
        (``jdbc.password``) in :data:`table_engine.ops.secrets.SECRETS_ENV`, which the job's command line parser
        adds to its command's catalog options."""
        from table_engine.ops.secrets import secrets_environment
        from table_engine.options.storage import aws_environment

        env = aws_environment(self.engine_options())  # the catalog options carry no credentials (refused)
        env.update(secrets_environment(self.credentials))
        return env

    def open_catalog(self, options: Mapping[str, str] | None = None) -> Catalog:
        """The warehouse's catalog in this process: the one its ``metastore`` option names
        (:func:`table_engine.catalog.create_catalog`), with the connection's catalog options and credentials and
        then ``options`` (a command's own)."""
        from table_engine.catalog import create_catalog

        return create_catalog(self.warehouse, {**self.engine_options(), **dict(options or {})})

    @staticmethod
    def from_connection_fields(conn_id: str, host: str | None, extra: Mapping[str, Any], login: str | None = None,
                               password: str | None = None) -> PaimonConnectionConfig:
        """Parse a connection: ``warehouse`` from the extra (or, failing that, the host field); the S3 access key
        from ``login`` and the secret key from ``password``."""
        warehouse = _extra_value(extra, "warehouse") or host
        if not warehouse:
            raise ValueError(f"connection {conn_id!r} has no warehouse: set the 'warehouse' field")
        options = _string_map(_extra_value(extra, "catalog_options"), "catalog_options", conn_id)
        refused = sorted(k for k in options if is_credential(k))
        if refused:
            raise ValueError(f"connection {conn_id!r}: catalog_options {', '.join(refused)} carry credentials, "
                             "which are stored unmasked there: put the access key in the login, the secret key in "
                             "the password, a session token in the 's3_session_token' field and a JDBC password "
                             "in the 'jdbc_password' field")
        for name, key in _OPTION_FIELDS.items():
            value = _extra_value(extra, name)
            if value is not None:
                options[key] = str(value).lower() if isinstance(value, bool) else str(value)
        credentials: dict[str, str] = {}
        login_key, password_key = "s3.access-key", "s3.secret-key"
        if options.get("metastore", "").strip().lower() == "rest":  # the login and password are the server's
            if options.setdefault("token.provider", "bear").strip().lower() == "dlf":
                password_key = "dlf.access-key-secret"
                if login:
                    options["dlf.access-key-id"] = str(login)  # an id, not a secret: it may travel in an argv
            elif login:
                raise ValueError(f"connection {conn_id!r}: a REST catalog with token_provider bear takes its bearer "
                                 "token from the password; leave the login empty (storage credentials come from "
                                 "the server with data-token.enabled, or from the environment)")
            else:
                password_key = "token"
            login = None
        fields = [(login_key, login), (password_key, password),
                  *((key, _extra_value(extra, name)) for name, key in _CREDENTIAL_FIELDS.items())]
        for k, value in fields:
            if value:
                credentials[k] = str(value)
        return PaimonConnectionConfig(
            conn_id=conn_id,
            warehouse=str(warehouse),
            catalog_options=options,
            credentials=credentials,
            spark_conn_id=str(_extra_value(extra, "spark_conn_id") or DEFAULT_SPARK_CONN_ID),
            python=_extra_value(extra, "python"),
            spark_conf=_string_map(_extra_value(extra, "spark_conf"), "spark_conf", conn_id),
        )


def form_extra(warehouse: str, **fields: Any) -> dict[str, Any]:
    """The extra of a ``paimon`` connection as the UI's form stores it, for connections made in code (the demo's,
    ``airflow connections import`` files): every field of the form (``conn-fields`` of the provider info) present,
    None where unset, so that the Edit form shows each of them; and the JSON-object fields (``catalog_options``,
    ``spark_conf``, string fields of the form) as JSON text, so that it shows them as text, not ``[object Object]``
    (apache/airflow#53961: the form does not infer a stored value's type). A name the form does not have is a
    ValueError."""
    from paimon_provider.get_provider_info import get_provider_info

    (conn_type,) = [c for c in get_provider_info()["connection-types"] if c["connection-type"] == CONN_TYPE]
    names = list(conn_type["conn-fields"])
    unknown = sorted(set(fields) - set(names))
    if unknown:
        raise ValueError(f"paimon connection fields {unknown} do not exist; the form has {names}")
    extra: dict[str, Any] = dict.fromkeys(names)
    extra.update(warehouse=warehouse, **fields)
    for name in ("catalog_options", "spark_conf"):
        if isinstance(extra[name], Mapping):
            extra[name] = json.dumps(dict(extra[name]))
    return extra
