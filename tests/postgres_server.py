"""A real PostgreSQL 15 server on 127.0.0.1 for the tests: a private cluster in a temp dir, one per test session.

``PostgresServer.start()`` runs ``initdb`` (SCRAM-SHA-256 passwords, superuser ``paimon``) and ``pg_ctl start`` on a
free loopback port with the Unix socket in the temp dir, and waits until it accepts connections; ``stop()`` ends it
(``pg_ctl -m immediate stop``) and removes the temp dir. PostgreSQL refuses to run as root: when the tests run as
root, every server command runs as the ``postgres`` user (``runuser -u postgres --``), the temp dir is made
traversable (0711) and the cluster dir is owned by ``postgres`` (reference catalogs-paimon-java.md, section 1).
``new_database()`` creates an empty database (``CREATE DATABASE t_<n>``) so that each test has its own.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from tests.s3_server import free_port

BIN = "/usr/lib/postgresql/15/bin"
USER = "paimon"
PASSWORD = "pg-test-secret-DO-NOT-LEAK-41c9"


def available() -> bool:
    """Whether PostgreSQL 15's server binaries are installed."""
    return os.path.exists(os.path.join(BIN, "initdb")) and os.path.exists(os.path.join(BIN, "pg_ctl"))


@dataclass
class PostgresServer:
    """One PostgreSQL cluster on 127.0.0.1."""

    port: int = field(default_factory=free_port)
    root: str | None = None
    running: bool = False
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data_dir(self) -> str:
        assert self.root is not None
        return os.path.join(self.root, "data")

    @property
    def socket_dir(self) -> str:
        assert self.root is not None
        return os.path.join(self.root, "socket")

    @property
    def log_file(self) -> str:
        return os.path.join(self.data_dir, "server.log")

    def _as_server_user(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv

    def _run(self, argv: list[str], timeout: float) -> None:
        done = subprocess.run(self._as_server_user(argv), capture_output=True, timeout=timeout, check=False)
        if done.returncode != 0:
            out = (done.stdout + done.stderr).decode(errors="replace")
            raise RuntimeError(f"{os.path.basename(argv[0])} exited with {done.returncode}: {out[-2000:]}")

    def start(self, timeout: float = 60.0) -> PostgresServer:
        """Create the cluster, start the server and wait until it accepts connections (raises with its log if not;
        everything made so far is removed)."""
        self.root = tempfile.mkdtemp(prefix="pg-")
        try:
            os.chmod(self.root, 0o711)
            os.mkdir(self.data_dir, 0o700)
            pwfile = os.path.join(self.root, "pwfile")
            with open(pwfile, "w") as f:
                f.write(PASSWORD + "\n")
            os.mkdir(self.socket_dir, 0o700)
            if os.geteuid() == 0:
                for path in (self.data_dir, self.socket_dir, pwfile):
                    shutil.chown(path, "postgres", "postgres")
            self._run([f"{BIN}/initdb", "-D", self.data_dir, "-A", "scram-sha-256", "-U", USER,
                       f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8"], timeout)
            os.remove(pwfile)
            server_options = (f"-c listen_addresses=127.0.0.1 -p {self.port} "
                              f"-c unix_socket_directories={self.socket_dir} -c fsync=off")
            try:
                self._run([f"{BIN}/pg_ctl", "-D", self.data_dir, "-l", self.log_file, "-o", server_options, "-w",
                           "-t", str(int(timeout)), "start"], timeout + 10)
            except RuntimeError as e:
                log = open(self.log_file, errors="replace").read() if os.path.exists(self.log_file) else ""
                raise RuntimeError(f"{e}\nserver log: {log[-2000:]}") from None
            self.running = True
            self._wait_ready(timeout)
            return self
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        argv = [f"{BIN}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-t", "1"]
        while time.monotonic() < deadline:
            if subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not accept connections on 127.0.0.1:{self.port} within {timeout} s")

    def stop(self) -> None:
        """Stop the server (immediate shutdown) and remove the cluster."""
        try:
            if self.running:
                self.running = False
                self._run([f"{BIN}/pg_ctl", "-D", self.data_dir, "-m", "immediate", "-w", "-t", "30", "stop"], 60)
        finally:
            if self.root is not None:
                shutil.rmtree(self.root, ignore_errors=True)
                self.root = None

    def jdbc_uri(self, database: str = "postgres") -> str:
        """The JDBC URL of ``database`` on this server (no credentials: those are catalog options)."""
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database ``t_<n>`` and return its name."""
        import psycopg

        name = f"t_{next(self._counter)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, password=PASSWORD, dbname="postgres",
                             autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name
