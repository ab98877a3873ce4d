"""docker/: the compose file parses and is consistent, the Dockerfile copies paths that exist.
(Docker cannot run here; these checks are what can be verified without it.)"""

from __future__ import annotations

import json
import pathlib
import re
import shlex
from typing import Any

import yaml
from paimon_provider.utils.connection import PaimonConnectionConfig

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"


def compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((DOCKER / "docker-compose.yml").read_text())
    return doc


def test_compose_has_every_component_from_one_image() -> None:
    doc = compose()
    services = doc["services"]
    assert set(services) == {"postgres", "minio", "minio-init", "airflow-init", "airflow-api-server",
                             "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer", "spark-master",
                             "spark-worker"}
    ours = {name: s for name, s in services.items() if name not in ("postgres", "minio", "minio-init")}
    for name, service in ours.items():
        assert service["image"] == "airflow-provider-paimon:dev", name
        build = service["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == REPO and (context / build["dockerfile"]).is_file()
        assert "lake:/opt/paimon/lake" in service["volumes"], name
    for name in ("airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        assert services[name]["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully"
        assert services[name]["command"] == [name.removeprefix("airflow-")]
    assert set(doc["volumes"]) == {"lake", "minio-data", "postgres-db", "airflow-logs", "airflow-auth"}
    for service in services.values():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), port  # not exposed beyond loopback


def connections() -> dict[str, Any]:
    """The connections airflow-init imports (``airflow connections import`` format), secrets as placeholders."""
    text = compose()["services"]["airflow-init"]["environment"]["PAIMON_CONNECTIONS"]
    doc: dict[str, Any] = json.loads(text)
    return doc


REQUIRED = re.compile(r"\$\{(\w+):\?[^}]*\}")  # ${NAME:?message}: `docker compose` refuses to start without NAME
DEFAULTED = re.compile(r"\$\{(\w+):?-")  # ${NAME:-default}


def test_compose_fixes_no_secret_and_asks_for_a_login() -> None:
    services = compose()["services"]
    secrets = {"AIRFLOW_API_SECRET_KEY", "AIRFLOW_JWT_SECRET", "AIRFLOW_FERNET_KEY", "POSTGRES_PASSWORD",
               "MINIO_ROOT_PASSWORD"}
    for name, service in services.items():
        for key, value in (service.get("environment") or {}).items():
            value = str(value)
            if any(w in key for w in ("SECRET", "PASSWORD", "JWT", "FERNET", "SQL_ALCHEMY_CONN", "MC_HOST")) \
                    and not key.endswith("_FILE"):
                # every secret is required from the environment of `docker compose`, none has a default
                assert REQUIRED.search(value) and set(REQUIRED.findall(value)) <= secrets, (name, key)
                assert not set(DEFAULTED.findall(value)) & secrets, (name, key)
    env = services["airflow-scheduler"]["environment"]
    password = connections()["paimon_default"]["password"]
    assert REQUIRED.fullmatch(password) and REQUIRED.findall(password) == ["MINIO_ROOT_PASSWORD"]
    assert REQUIRED.fullmatch(env["AIRFLOW__CORE__FERNET_KEY"])  # connection passwords encrypted in the database
    # the connections are in the metadata database (the UI shows them, an edit there wins), not in environment
    # variables; the credentials are in the environment of airflow-init only
    for name, service in services.items():
        environment = service.get("environment") or {}
        assert not [k for k in environment if k.startswith("AIRFLOW_CONN_")], name
        assert name == "airflow-init" or "PAIMON_CONNECTIONS" not in environment, name
    # not every user an admin: the simple auth manager with a login, its passwords on a volume of the api-server only
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] == "False"
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"] == "${AIRFLOW_USERS:-admin:admin}"
    assert env["AIRFLOW__CORE__TEST_CONNECTION"] == "Enabled"
    auth = env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
    mounts = {name: [v for v in s.get("volumes", []) if v.startswith("airflow-auth:")] for name, s in services.items()}
    assert {name for name, m in mounts.items() if m} == {"airflow-api-server"}
    assert auth.startswith(mounts["airflow-api-server"][0].split(":")[1] + "/")
    assert "/opt/airflow/auth" in (DOCKER / "Dockerfile").read_text()  # created, owned by the airflow user
    assert "change-me" not in (DOCKER / "docker-compose.yml").read_text()


def test_compose_connections_point_at_the_services() -> None:
    services = compose()["services"]
    env = services["airflow-scheduler"]["environment"]
    paimon = connections()["paimon_default"]
    cfg = PaimonConnectionConfig.from_connection_fields("paimon_default", None, paimon["extra"],
                                                        login=paimon["login"], password=paimon["password"])
    # the warehouse is on MinIO; its credentials are the connection's login and password, not catalog options
    assert cfg.warehouse == "s3://paimon/warehouse"
    assert cfg.catalog_options["s3.endpoint"] == f"http://{services['minio']['hostname']}:9000"
    assert "s3.secret-key" not in cfg.catalog_options and cfg.credentials
    assert services["airflow-scheduler"]["depends_on"]["minio-init"]["condition"] == \
        "service_completed_successfully"
    assert "lake/paimon" in services["minio-init"]["command"]
    assert not any("PASSWORD" in part for part in services["minio-init"]["command"])
    assert cfg.spark_conf["spark.driver.host"] == services["airflow-scheduler"]["hostname"]
    spark = connections()["spark_default"]
    assert cfg.spark_conn_id == "spark_default"
    assert spark["host"] == f"spark://{services['spark-master']['hostname']}:7077"
    assert spark["extra"]["deploy-mode"] == "client"  # Python apps cannot use standalone cluster mode
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]
    assert env["PAIMON_LANDING_DIR"].startswith("/opt/paimon/lake/")
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].endswith("@postgres:5432/airflow")
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-api-server:8080/execution/"
    init = " ".join(services["airflow-init"]["command"])
    assert "airflow db migrate" in init and "/opt/paimon/lake/landing" in init
    # created from a private file, removed after the import: the password is in no command line
    assert 'airflow connections import "$$file"' in init and "umask 077" in init and "rm -f" in init
    assert "--overwrite" not in init  # a connection edited in the UI is kept


def test_dockerfile_copies_existing_paths_and_repairs_pyspark() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert re.search(r"^FROM apache/airflow:3\.3\.2-python3\.11$", text, re.M)
    # Java 17 copied from a JRE image (independent of the Debian release under the Airflow image)
    assert re.search(r"^FROM eclipse-temurin:17-jre AS java$", text, re.M)
    assert "COPY --from=java /opt/java/openjdk /opt/java/openjdk" in text and "JAVA_HOME=/opt/java/openjdk" in text
    copies = [shlex.split(line)[1:] for line in text.splitlines()
              if line.startswith("COPY ") and "--from=" not in line]
    sources = [p for args in copies for p in args[:-1] if not p.startswith("--")]
    assert sorted(sources) == ["README.md", "dags", "provider", "pyproject.toml", "table_engine"]
    for src in sources:
        assert (REPO / src).exists(), src
    assert "--force-reinstall --no-deps pyspark==4.3.0" in text
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().split()
    for src in sources:
        assert any(line.startswith(f"!{src}") for line in ignore), src
