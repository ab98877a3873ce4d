"""A real S3 API server on 127.0.0.1 for the tests: moto's standalone server, one per test session.

``S3Server.start()`` runs ``moto_server`` (installed with the test extras) on a free loopback port and waits until it
answers; ``stop()`` ends it. ``new_bucket()`` creates a bucket through the engine's own client (a PUT on the bucket).
Credentials are dummies; they are set in this process's environment by :func:`S3Server.env` users only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key-DO-NOT-LEAK-7f3a"
REGION = "us-east-1"


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _moto_server() -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "moto_server")
    return exe if os.path.exists(exe) else (shutil.which("moto_server") or "moto_server")


@dataclass
class S3Server:
    """One moto server process on 127.0.0.1."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    log: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> S3Server:
        """Start the server and wait until it answers (raises with its output if it does not)."""
        # the server logs every request: to a file, never a pipe that nobody drains (it would block when full)
        self.log = tempfile.NamedTemporaryFile(prefix="moto-", suffix=".log")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen([_moto_server(), "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = open(self.log.name, errors="replace").read()
                raise RuntimeError(f"moto_server exited with {self.process.returncode}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} within {timeout} s")

    def stop(self) -> None:
        """End the server (kill after 10 s)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.process = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def options(self, endpoint: str | None = None) -> dict[str, str]:
        """Catalog options that reach this server (or a proxy in front of it at ``endpoint``)."""
        return {"s3.endpoint": endpoint or self.endpoint, "s3.access-key": ACCESS_KEY, "s3.secret-key": SECRET_KEY,
                "s3.region": REGION, "s3.path.style.access": "true"}

    def env(self, endpoint: str | None = None) -> Mapping[str, str]:
        """The same access as standard AWS environment variables (the credential route of Spark jobs)."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION,
                "AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_ALLOW_HTTP": "true"}

    def new_bucket(self, name: str | None = None) -> str:
        """Create a bucket (path-style PUT) and return its name."""
        bucket = name or f"test-{uuid.uuid4().hex[:12]}"
        req = urllib.request.Request(f"{self.endpoint}/{bucket}", method="PUT")
        with urllib.request.urlopen(req, timeout=10):
            pass
        return bucket
