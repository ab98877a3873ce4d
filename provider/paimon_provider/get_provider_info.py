"""Provider metadata, exposed to Airflow through the ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from typing import Any

from paimon_provider import __version__

INTEGRATION = "Apache Paimon"
REPOSITORY_URL = "https://github.com/airflow-provider-paimon/airflow-provider-paimon"
"""The project's repository (its README is the user guide)."""
DOCUMENTATION_URL = f"{REPOSITORY_URL}/tree/main/docs"
"""The provider's documentation: the repository's docs/ folder (the Providers page of the UI links to it)."""


def get_provider_info() -> dict[str, Any]:
    """What ``airflow providers list|hooks|triggers`` and the connection form show."""
    return {
        "package-name": "airflow-provider-paimon",
        "name": "Apache Paimon",
        "description": "Operators, sensors and triggers for Apache Paimon tables, running PySpark jobs on a "
                       "bundled pure-Python Paimon table engine.",
        "versions": [__version__],
        "documentation-url": DOCUMENTATION_URL,
        "integrations": [
            {"integration-name": INTEGRATION, "external-doc-url": "https://paimon.apache.org/", "tags": ["apache"]},
        ],
        "hooks": [
            {"integration-name": INTEGRATION,
             "python-modules": ["paimon_provider.hooks.table", "paimon_provider.hooks.spark"]},
        ],
        "operators": [
            {"integration-name": INTEGRATION,
             "python-modules": ["paimon_provider.operators.write", "paimon_provider.operators.compact",
                                "paimon_provider.operators.lifecycle", "paimon_provider.operators.changelog",
                                "paimon_provider.operators.table", "paimon_provider.operators.check",
                                "paimon_provider.operators.branches", "paimon_provider.operators.health",
                                "paimon_provider.operators.hygiene", "paimon_provider.operators.maintain",
                                "paimon_provider.operators.object_table", "paimon_provider.operators.changes",
                                "paimon_provider.operators.alter", "paimon_provider.operators.migration"]},
        ],
        "sensors": [
            {"integration-name": INTEGRATION,
             "python-modules": ["paimon_provider.sensors.snapshot", "paimon_provider.sensors.partition"]},
        ],
        "triggers": [
            {"integration-name": INTEGRATION, "python-modules": ["paimon_provider.triggers.metadata",
                                                                "paimon_provider.triggers.watcher"]},
        ],
        "plugins": [
            {"name": "paimon", "plugin-class": "paimon_provider.plugins.plugin.PaimonUIPlugin"},
        ],
        "asset-uris": [
            {"schemes": ["paimon"], "handler": "paimon_provider.utils.assets.sanitize_uri",
             "to_openlineage_converter": "paimon_provider.utils.lineage.asset_to_openlineage"},
        ],
        "connection-types": [
            {
                "connection-type": "paimon",
                "hook-class-name": "paimon_provider.hooks.table.PaimonTableHook",
                "hook-name": "Apache Paimon",
                "ui-field-behaviour": {
                    "hidden-fields": ["host", "schema", "port", "extra"],
                    "relabeling": {"login": "S3 access key (rest: DLF access key id)",
                                   "password": "S3 secret key (rest: bearer token or DLF secret)"},
                    "placeholders": {
                        "login": "access key id (empty: the AWS credential chain of the worker)",
                        "password": "secret access key",
                        "warehouse": "s3://bucket/warehouse or /data/warehouse",
                        "s3_endpoint": "http://minio:9000 (empty: AWS)",
                        "s3_region": "us-east-1",
                        "uri": "jdbc:postgresql://db:5432/paimon or thrift://metastore:9083",
                        "jdbc_user": "paimon",
                        "catalog_key": "jdbc",
                        "hive_conf_dir": "/etc/hive/conf",
                        "catalog_options": '{"fs.s3.region": "eu-west-1"}',
                        "spark_conn_id": "spark_default",
                        "python": "/usr/local/bin/python",
                        "spark_conf": '{"spark.executor.memory": "2g"}',
                    },
                },
                "conn-fields": {
                    "warehouse": {
                        "label": "Warehouse",
                        "description": "Required. Warehouse URI: a local path, file://, s3:// (s3a://, any "
                                       "S3-compatible store) or hdfs://; tables live in <warehouse>/<db>.db/<table>.",
                        "schema": {"type": "string", "minLength": 1},  # not nullable: the form requires it
                    },
                    "s3_endpoint": {
                        "label": "S3 endpoint",
                        "description": "Endpoint of the S3 API (catalog option s3.endpoint), e.g. http://minio:9000; "
                                       "empty: AWS.",
                        "schema": {"type": ["string", "null"]},
                    },
                    "s3_region": {
                        "label": "S3 region",
                        "description": "Region of the bucket (catalog option s3.region).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "s3_path_style_access": {
                        "label": "S3 path-style access",
                        "description": "Address buckets as <endpoint>/<bucket> (s3.path.style.access; MinIO needs it).",
                        "schema": {"type": ["boolean", "null"]},
                    },
                    "s3_session_token": {
                        "label": "S3 session token",
                        "description": "Session token of temporary credentials (secret, like the password).",
                        "schema": {"type": ["string", "null"], "format": "password"},
                    },
                    "metastore": {
                        "label": "Metastore",
                        "description": "Where the catalog keeps its databases and tables (catalog option "
                                       "metastore): filesystem (the warehouse's directories; empty: the same), jdbc "
                                       "(a JDBC database, Paimon's JdbcCatalog), hive (a Hive Metastore) or rest (a "
                                       "Paimon REST server; the warehouse is then the catalog's name on it).",
                        "schema": {"type": ["string", "null"], "enum": ["filesystem", "jdbc", "hive", "rest", None]},
                    },
                    "uri": {
                        "label": "Metastore URI",
                        "description": "jdbc: the database's JDBC URL (jdbc:postgresql://h:5432/db, "
                                       "jdbc:sqlite:/path/catalog.db, jdbc:mysql://...); hive: thrift://host:9083; "
                                       "rest: http(s)://host:port of the server (catalog option uri).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "jdbc_user": {
                        "label": "JDBC user",
                        "description": "jdbc: the database user (catalog option jdbc.user).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "jdbc_password": {
                        "label": "JDBC password",
                        "description": "jdbc: the database user's password (catalog option jdbc.password; secret: "
                                       "never in a command line or a log line).",
                        "schema": {"type": ["string", "null"], "format": "password"},
                    },
                    "catalog_key": {
                        "label": "Catalog key",
                        "description": "jdbc: the catalog's name in the JDBC tables (catalog option catalog-key; "
                                       "empty: jdbc).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "lock_enabled": {
                        "label": "Commit lock",
                        "description": "jdbc, hive: take the metastore's lock around each commit, as Paimon Java "
                                       "writers do (catalog option lock.enabled; needed on object stores shared with "
                                       "them).",
                        "schema": {"type": ["boolean", "null"]},
                    },
                    "token_provider": {
                        "label": "REST token provider",
                        "description": "rest: bear (the password is the bearer token; empty: the same) or dlf (the "
                                       "login and password are the DLF access key id and secret) (catalog option "
                                       "token.provider).",
                        "schema": {"type": ["string", "null"], "enum": ["bear", "dlf", None]},
                    },
                    "hive_conf_dir": {
                        "label": "Hive conf dir",
                        "description": "hive: a directory with hive-site.xml, read for hive.metastore.uris when the "
                                       "URI is empty (catalog option hive-conf-dir).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "catalog_options": {
                        "label": "Catalog options",
                        "description": "JSON object of catalog options passed to the engine and the Spark jobs "
                                       "(command-line visible; credentials are refused here: they go in the "
                                       "login/password and password-format fields).",
                        "schema": {"type": ["string", "null"]},
                    },
                    "spark_conn_id": {
                        "label": "Spark connection",
                        "description": "The Spark connection (master, deploy mode) Spark jobs on this warehouse use.",
                        "schema": {"type": ["string", "null"], "default": "spark_default"},
                    },
                    "python": {
                        "label": "Cluster Python",
                        "description": "Python interpreter of the Spark executors (spark.pyspark.python); empty: "
                                       "the interpreter running Airflow.",
                        "schema": {"type": ["string", "null"]},
                    },
                    "spark_conf": {
                        "label": "Spark conf",
                        "description": "JSON object of Spark configuration for every job on this warehouse.",
                        "schema": {"type": ["string", "null"]},
                    },
                },
            },
        ],
    }
