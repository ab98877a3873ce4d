"""A real Hive Metastore 2.3.10 for the tests: one per test session, from the jars that the pyspark wheel ships.

``HiveMetastore.start()`` writes ``hive-site.xml`` into a temp dir (embedded Derby there, the warehouse there, HikariCP,
no async logging, the transaction tables for the lock API), runs ``tests/HiveMetastoreLauncher.java`` as a Java
single-file source program on a free port and waits until the port accepts; ``stop()`` ends it and removes the temp
dir. The server's output and ``hive.log`` stay in the temp dir and are printed when it fails to start. Metastore 2.3
has no bind-address option: it listens on all interfaces; clients use 127.0.0.1 (:attr:`uri`).
"""

from __future__ import annotations

import glob
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from tests.s3_server import free_port

LAUNCHER = pathlib.Path(__file__).with_name("HiveMetastoreLauncher.java")


def pyspark_jars() -> pathlib.Path | None:
    """pyspark's ``jars`` folder (the Hive Metastore 2.3.10, Derby, DataNucleus, HikariCP, ...), or None."""
    try:
        import pyspark
    except ImportError:
        return None
    jars = pathlib.Path(pyspark.__file__).parent / "jars"
    return jars if (jars / "hive-metastore-2.3.10.jar").exists() else None


def java() -> str | None:
    """The ``java`` launcher (JDK 11+: single-file source programs), or None."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def hive_site(properties: dict[str, str]) -> str:
    """A ``hive-site.xml`` holding ``properties``."""
    rows = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                   for k, v in properties.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def _port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class HiveMetastore:
    """One Hive Metastore process (Derby in its temp dir) on a free port."""

    port: int = field(default_factory=free_port)
    root: pathlib.Path | None = None
    process: subprocess.Popen[bytes] | None = None
    started_in: float | None = None
    """Seconds from launch until the port accepted connections."""

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> pathlib.Path:
        assert self.root is not None
        return self.root / "warehouse"

    def properties(self) -> dict[str, str]:
        """The server's ``hive-site.xml`` settings."""
        assert self.root is not None
        return {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.root}/metastore_db;create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            # BoneCP (the default pool) is not among pyspark's jars; the transaction handler needs a pool
            "datanucleus.connectionPoolingType": "HikariCP",
            "hive.async.log.enabled": "false",
            "hive.metastore.warehouse.dir": str(self.root / "warehouse"),
            # the lock API (lock, check_lock, unlock) goes through the transaction handler
            "hive.support.concurrency": "true",
            "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
            "hive.metastore.event.db.notification.api.auth": "false",
        }

    def start(self, timeout: float = 90.0) -> HiveMetastore:
        """Start the server and wait until its port accepts (raises with its logs if it does not)."""
        jars, exe = pyspark_jars(), java()
        if jars is None or exe is None:
            raise RuntimeError(f"the Hive Metastore needs java ({exe}) and pyspark's jars ({jars})")
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="hms-"))
        conf = self.root / "conf"
        conf.mkdir()
        (conf / "hive-site.xml").write_text(hive_site(self.properties()))
        classpath = os.pathsep.join([str(conf), *sorted(glob.glob(str(jars / "*.jar")))])
        cmd = [exe, "-Xmx512m", f"-Djava.io.tmpdir={self.root}", f"-Dderby.system.home={self.root}",
               f"-Dhive.log.dir={self.root}", "-cp", classpath, str(LAUNCHER), "-p", str(self.port)]
        begun = time.monotonic()
        # the output goes to a file, never a pipe nobody drains
        with open(self.root / "server.log", "wb") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=self.root)
        try:
            while time.monotonic() - begun < timeout:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the Hive Metastore exited with {self.process.returncode}:\n{self.logs()}")
                if _port_accepts(self.port):
                    self.started_in = time.monotonic() - begun
                    return self
                time.sleep(0.25)
            raise RuntimeError(f"the Hive Metastore did not listen on {self.port} within {timeout} s:\n{self.logs()}")
        except BaseException:
            self.stop()
            raise

    def logs(self, tail: int = 6000) -> str:
        """The end of the server's output and of its ``hive.log``."""
        if self.root is None:
            return ""
        out = []
        for name in ("server.log", "hive.log"):
            for path in self.root.rglob(name):
                out.append(f"--- {path}\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(out)

    def stop(self) -> None:
        """End the server (kill after 15 s) and remove its temp dir."""
        try:
            if self.process is not None:
                self.process.terminate()
                try:
                    self.process.wait(15)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(15)
        finally:
            self.process = None
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None
