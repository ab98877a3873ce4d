"""A local Spark Connect server for the application's jobs (``spark={"connect": "sc://127.0.0.1:15002"}``).

``python -m table_engine.spark.connect_server start --home DIR [--port N] [--master 'local[*]']`` starts
PySpark's ``sbin/start-connect-server.sh`` (shipped in the pyspark wheel with the Connect jar) listening on
127.0.0.1 only, with its pid file, port and log under ``DIR`` (``make airflow`` and ``make demo`` use the Airflow home
of their checkout), and waits until it answers; the server already running there (its pid alive and a Spark Connect
server, its port answering) is reused, never another home's. Without ``--port`` a home keeps the port it was first
given (:func:`port_for`): 15002 when that was free, else a free one, so two checkouts on one machine each run their
own server and their own code.
``stop --home DIR`` stops it (``sbin/stop-connect-server.sh``); ``status`` says whether it runs.

The jobs' Python code (``mapInArrow`` tasks, the ``paimon`` data source) runs in the server's Python workers: they
run this interpreter (``PYSPARK_PYTHON``) with the directory holding ``table_engine`` on their ``PYTHONPATH``, so
they import the same engine as the client.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

DEFAULT_PORT = 15002
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
IDENT = "paimon"
"""``SPARK_IDENT_STRING`` of the server: its pid file is ``<home>/spark-paimon-<SERVER_CLASS>-1.pid``."""
_PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def spark_home() -> str:
    """The pyspark package's directory: it holds ``sbin/start-connect-server.sh`` and ``jars/``."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def engine_path() -> str:
    """The directory that holds the ``table_engine`` package (on the server's Python workers' path)."""
    return str(pathlib.Path(__file__).resolve().parents[2])


def url(port: int = DEFAULT_PORT) -> str:
    """The server's Spark Connect URL."""
    return f"sc://127.0.0.1:{port}"


def local_cores(master: str) -> int | None:
    """The cores of a ``local``/``local[n]``/``local[*]`` master (None: not a local master)."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if m is None:
        return None
    if m.group(1) is None:  # plain "local": one core
        return 1
    return (os.cpu_count() or 1) if m.group(1) == "*" else int(m.group(1))


def pid_file(home: pathlib.Path) -> pathlib.Path:
    """Where ``spark-daemon.sh`` records the server's pid."""
    return home / f"spark-{IDENT}-{SERVER_CLASS}-1.pid"


def log_dir(home: pathlib.Path) -> pathlib.Path:
    """The server's log directory (``spark-paimon-...-1-<host>.out``)."""
    return home / "spark-connect-logs"


def server_env(home: pathlib.Path, python: str = sys.executable) -> dict[str, str]:
    """The environment of ``start-connect-server.sh``/``stop-connect-server.sh``: Spark's home, pid and log
    directories under ``home``, loopback, the Python of the workers and the engine on their path."""
    env = dict(os.environ)
    here = os.path.dirname(python)
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env.update(SPARK_HOME=spark_home(), SPARK_PID_DIR=str(home), SPARK_LOG_DIR=str(log_dir(home)),
               SPARK_IDENT_STRING=IDENT, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=python,
               PYTHONPATH=os.pathsep.join([engine_path(), *[p for p in path if p != engine_path()]]),
               PATH=os.pathsep.join([here, env.get("PATH", "")]),
               PYTHONWARNINGS=",".join(w for w in (env.get("PYTHONWARNINGS"), _PANDAS_WARNING) if w))
    return env


def port_file(home: pathlib.Path) -> pathlib.Path:
    """Where the port of the home's server is recorded."""
    return home / "spark-connect.port"


def port_for(home: pathlib.Path) -> int:
    """The port of ``home``'s server: the one recorded there, else :data:`DEFAULT_PORT` when nothing answers on it,
    else a free one (recorded, so that the home's ``sc://`` URL stays the same from run to run)."""
    home = pathlib.Path(home).resolve()
    try:
        return int(port_file(home).read_text().strip())
    except (OSError, ValueError):
        pass
    port = DEFAULT_PORT if not answers(DEFAULT_PORT) else _free_port()
    home.mkdir(parents=True, exist_ok=True)
    port_file(home).write_text(f"{port}\n")
    return port


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def running_pid(home: pathlib.Path) -> int | None:
    """The pid of the server started under ``home`` when it is alive (and, where ``/proc`` tells, a Spark Connect
    server: a pid file outliving its server may name another process), else None."""
    try:
        pid = int(pid_file(home).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    try:
        command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid  # no /proc (macOS): the pid file is all there is
    return pid if SERVER_CLASS.encode() in command else None


def answers(port: int, timeout: float = 1.0) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=timeout).close()
    except OSError:
        return False
    return True


def start(home: pathlib.Path, port: int | None = None, *, master: str = "local[*]",
          conf: Mapping[str, str] | None = None, python: str = sys.executable, timeout: float = 90.0) -> str:
    """Start the server on ``port`` (default: :func:`port_for` the home), or reuse the one running under ``home``;
    its URL once it answers. A RuntimeError naming the log when it does not come up within ``timeout`` seconds, or
    when another process holds the port."""
    home = pathlib.Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = port_for(home)
    if running_pid(home) is not None and answers(port):
        return url(port)
    if answers(port):
        raise RuntimeError(f"port {port} is taken by another process (another checkout's Spark Connect server?): "
                           f"stop it, or give this one another port (--port; {port_file(home)} records the "
                           "home's port)")
    settings = {"spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": str(port),
                "spark.pyspark.python": python, **dict(conf or {})}
    cores = local_cores(master)
    if cores is not None:  # what the jobs' clients read for Spark's default parallelism (no SparkContext there)
        settings.setdefault("spark.default.parallelism", str(cores))
    argv = [os.path.join(spark_home(), "sbin", "start-connect-server.sh"), "--master", master]
    for key, value in settings.items():
        argv += ["--conf", f"{key}={value}"]
    subprocess.run(argv, env=server_env(home, python), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while not answers(port):
        if running_pid(home) is None or time.monotonic() > deadline:
            stop(home)
            raise RuntimeError(f"the Spark Connect server did not start on port {port}; its log: {log_dir(home)}")
        time.sleep(0.25)
    port_file(home).write_text(f"{port}\n")
    return url(port)


def stop(home: pathlib.Path, timeout: float = 30.0) -> bool:
    """Stop the server started under ``home`` (SIGTERM, then SIGKILL after ``timeout``); whether one ran."""
    home = pathlib.Path(home).resolve()
    pid = running_pid(home)
    if pid is None:
        return False
    script = os.path.join(spark_home(), "sbin", "stop-connect-server.sh")
    if shutil.which("bash") is not None and os.path.exists(script):
        subprocess.run([script], env=server_env(home), check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout)
    deadline = time.monotonic() + timeout
    while running_pid(home) == pid and time.monotonic() < deadline:
        time.sleep(0.2)
    if running_pid(home) == pid:
        os.kill(pid, signal.SIGKILL)
    pid_file(home).unlink(missing_ok=True)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``start``, ``stop`` or ``status`` of the server under ``--home``."""
    parser = argparse.ArgumentParser(prog="python -m table_engine.spark.connect_server", description=__doc__)
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--home", type=pathlib.Path, required=True, help="directory of its pid file and log")
    parser.add_argument("--port", type=int, default=None,
                        help=f"default: the home's port (first {DEFAULT_PORT}, or a free one when that is taken)")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--conf", action="append", default=[], metavar="K=V", help="Spark conf (repeatable)")
    args = parser.parse_args(argv)
    if args.action == "start":
        conf = dict(c.split("=", 1) for c in args.conf)
        print(start(args.home, args.port, master=args.master, conf=conf))
    elif args.action == "stop":
        print("stopped" if stop(args.home) else "not running")
    else:
        pid = running_pid(args.home)
        port = args.port or port_for(args.home)
        print(f"running (pid {pid}) at {url(port)}" if pid is not None else "not running")
        return 0 if pid is not None else 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
