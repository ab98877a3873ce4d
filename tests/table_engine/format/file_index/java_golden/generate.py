"""Regenerate ``golden_java.txt``: run Apache Paimon's own Java file-index writers on the cases of
``golden_cases.py``. Not part of the test run (it needs a JDK, Paimon's sources and a few jars); see README.md.

    python tests/table_engine/format/file_index/java_golden/generate.py \
        --paimon /path/to/apache/paimon/checkout --classpath a.jar:b.jar
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[4]))

from tests.table_engine.format.file_index.golden_cases import java_input  # noqa: E402

SHADED = (("org.apache.paimon.shade.jackson2.com.fasterxml.jackson", "com.fasterxml.jackson"),
          ("org.apache.paimon.shade.caffeine2.com.github", "com.github"),
          ("org.apache.paimon.shade.guava30.com.google", "com.google"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paimon", required=True, help="checkout of apache/paimon")
    ap.add_argument("--classpath", required=True, help="RoaringBitmap, jackson (core/annotations/databind/jsr310), "
                    "caffeine, checker-qual, commons-io, guava, slf4j-api, jsr305 jars")
    ap.add_argument("--out", default=str(HERE / "golden_java.txt"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        srcs = []
        for module in ("paimon-common", "paimon-api"):
            dst = work / module
            shutil.copytree(pathlib.Path(args.paimon) / module / "src/main/java", dst)
            for f in dst.rglob("*.java"):  # use the unshaded jackson jars
                text = f.read_text(encoding="utf-8")
                if "org.apache.paimon.shade." in text:
                    for shaded, plain in SHADED:
                        text = text.replace(shaded, plain)
                    f.write_text(text, encoding="utf-8")
            srcs.append(str(dst))
        out = work / "classes"
        out.mkdir()
        sourcepath = ":".join([str(HERE / "stubs"), *srcs])
        subprocess.run(["javac", "-nowarn", "-d", str(out), "-cp", args.classpath, "-sourcepath", sourcepath,
                        str(HERE / "Golden.java")], check=True)
        run = subprocess.run(["java", "-cp", f"{out}:{args.classpath}", "Golden"], input=java_input(), text=True,
                             capture_output=True, check=False)
        if run.returncode != 0:
            sys.exit(f"Golden failed:\n{run.stderr[-4000:]}")
    lines = []
    for line in run.stdout.splitlines():
        name, hexdata = line.split(" ", 1)
        data = bytes.fromhex(hexdata)
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"{name} {len(data)} {digest} {hexdata if len(data) <= 2048 else '-'}")
    pathlib.Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cases to {args.out}")


if __name__ == "__main__":
    main()
