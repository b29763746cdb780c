"""A short run of the archive fuzzer of `make fuzz` (tests/fuzz/fuzz_archives.py):
damaged anchors, definition and event files open with warnings or fail with a
TraceError naming the file; no crash, no other exception, no hang."""
import json
import subprocess
import sys

from conftest import ROOT


def test_a_few_dozen_damaged_archives():
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "fuzz_archives.py"),
                        "--cases", "40", "--seed", "7", "--timeout", "120",
                        "--keep", str(ROOT / "build" / "fuzz-failures")],
                       capture_output=True, text=True, timeout=600)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, (summary["failed"], r.stderr[-2000:])
    assert summary["cases"] == 40
    assert summary["opened"] + summary["trace_errors"] == 40
