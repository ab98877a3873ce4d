"""benchmarks/bench_vs_java.py: its data set (deterministic, the same rows on both sides through Arrow IPC), and the
whole benchmark at a tiny size against Paimon Java (one JVM per core count, the engine in a pinned worker): the
JSON's shape and the untimed row checks. No timed assertions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_vs_java  # noqa: E402

ROWS = 20_000
EXPIRED = 20
RETAIN = 5


def test_data_set_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    a = bench_vs_java.make_data(2_000, 7, expired=10, retain=3)
    b = bench_vs_java.make_data(2_000, 7, expired=10, retain=3)
    assert a.write.equals(b.write) and all(x.equals(y) for x, y in zip(a.runs, b.runs))
    assert sorted(a.write.column("id").to_pylist()) == list(range(2_000))
    assert len(a.runs) == 5 and all(r.num_rows == 400 for r in a.runs)
    assert len(a.commits) == 13 and all(c.num_rows == 200 for c in a.commits)
    expected = a.expected_rows()
    assert expected["write"] == 2_000 and expected["expire"] == 13 * 200
    assert 400 < expected["mor"] == expected["compact"] <= 1_000  # runs overlap within 1,000 keys
    files = a.save(tmp_path)
    assert [t.equals(r) for t, r in zip(bench_vs_java.load_commits(files["runs"]), a.runs)] == [True] * 5
    assert bench_vs_java.load_commits(files["write"])[0].equals(a.write)
    assert len(bench_vs_java.load_commits(files["expire"])) == 13


@pytest.mark.interop
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tiny_run_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "java.json"
    argv = ["--rows", str(ROWS), "--repeat", "1", "--warmup", "1", "--expired", str(EXPIRED), "--retain",
            str(RETAIN), "--cores", "1,2", "--java-heap", "1g", "--timeout", "240", "--out", str(out)]
    assert bench_vs_java.main(argv) == 0
    result = json.loads(out.read_text())
    assert result["ratio"] == bench_vs_java.RATIO and result["rows"] == ROWS
    assert result["paimon_version"].startswith("1.0")
    assert [c["cores"] for c in result["configs"]] == [1, 2]
    per_commit = ROWS // EXPIRED
    for config in result["configs"]:
        n = config["cores"]
        assert config["jvm"]["availableProcessors"] == n and f"-XX:ActiveProcessorCount={n}" in config["jvm"]["flags"]
        threads = config["engine_threads"]
        assert threads["cpus"] == threads["arrow_cpu_threads"] == n
        assert threads["read_threads"] == threads["write_threads"] == threads["compact_threads"] == min(4, n)
        assert set(config["measures"]) == set(bench_vs_java.CASES) == set(config["checks"])
        for case, m in config["measures"].items():
            assert len(m["engine_s"]) == len(m["java_s"]) == 1, case
            assert len(m["engine_warmup_s"]) == len(m["java_warmup_s"]) == 1, case
            assert m["engine_median_s"] > 0 and m["java_median_s"] > 0
            assert m["ratio"] == pytest.approx(m["java_median_s"] / m["engine_median_s"])
        checks = config["checks"]
        assert all(c["ok"] and c["same_rows"] and not c["problems"] for c in checks.values()), checks
        assert checks["write"]["java_table_rows_read_by_engine"] == ROWS
        assert checks["expire"]["expected_rows"] == (RETAIN + EXPIRED) * per_commit
        assert checks["expire"]["java_snapshots_left"] == checks["expire"]["engine_snapshots_left"] == RETAIN
        assert checks["mor"]["java_table_rows_read_by_engine"] == checks["mor"]["expected_rows"] < ROWS
    table = capsys.readouterr().out
    assert "| measure | cores | engine s | Java s | ratio | rows check |" in table
    assert table.count("| ok |") == 2 * len(bench_vs_java.CASES)
