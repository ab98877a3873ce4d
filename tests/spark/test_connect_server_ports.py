"""The local Spark Connect server's port and pid checks (no server started: tests/provider/hooks/test_spark_connect.py
starts one): a home keeps the port it was first given, a taken default gives another, a stale pid file is no server."""

from __future__ import annotations

import os
import pathlib
import socket

import pytest

from table_engine.spark import connect_server


def test_a_home_keeps_its_port_and_a_taken_default_gives_another(tmp_path: pathlib.Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as other:  # another checkout's server holds the default port
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        monkeypatch.setattr(connect_server, "DEFAULT_PORT", taken)
        port = connect_server.port_for(tmp_path / "a")
        assert port != taken and connect_server.port_file(tmp_path / "a").read_text().strip() == str(port)
        assert connect_server.port_for(tmp_path / "a") == port  # the same on every run of this checkout
        with pytest.raises(RuntimeError, match=rf"port {taken} is taken by another process .*--port"):
            connect_server.start(tmp_path / "b", taken, timeout=1)
    assert connect_server.port_for(tmp_path / "c") == taken  # free again: the default


def test_a_pid_file_naming_another_process_is_no_server(tmp_path: pathlib.Path) -> None:
    connect_server.pid_file(tmp_path).write_text(f"{os.getpid()}\n")  # alive, but not a Spark Connect server
    assert connect_server.running_pid(tmp_path) is None
    assert not connect_server.stop(tmp_path)  # and nothing is stopped
